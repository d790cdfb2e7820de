// SPDX-License-Identifier: GPL-2.0
/*
 * unwindprof: a sampling profiler built on deferred user stacks.
 *
 * It samples a perf event (cpu-clock by default) on every CPU, for one
 * process or for every user task, and prints folded stacks, one line per
 * distinct stack, "comm;user frames;kernel frames count", outermost frame
 * first, with kernel frames marked "_[k]": the format flame graph tools
 * read. A user frame the kernel marked (guessed, or resting on a
 * convention rather than a frame record, a table or the code) is
 * prefixed "?". The kernel stack comes from the sample; the user stack is asked
 * for with bpf_unwind_deferred_request() and arrives, once per kernel
 * entry, when the task returns to user space (see unwindprof.bpf.c).
 * --in-sample walks the user stack in every sample instead
 * (bpf_get_stackid() with BPF_F_USER_STACK), the baseline.
 *
 *   unwindprof [-p PID] [-F HZ] [-d SECONDS] [-e EVENT] [--in-sample]
 *              [-o FILE] [-- COMMAND [ARG...]]
 *
 * The last line, on stderr, counts samples, stitched samples, lost
 * samples and the user stack walks the kernel made.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "unwindprof.h"
#include "unwindprof.skel.h"

static struct {
	pid_t pid;
	int freq;
	int duration;
	const char *event;
	const char *output;
	bool in_sample;
	int wait_ms;
	char **command;
} opt = { .freq = 999, .event = "cpu-clock", .wait_ms = 1000 };

/* Set by SIGINT and SIGTERM; read with atomics, as the handler writes it. */
static int stopping;

/* Totals for the summary line. */
static struct {
	unsigned long long samples, stitched, in_sample, kthread, lost, stacks,
			   unmatched, ring_bytes;
} tally;

/* ---- symbols ---------------------------------------------------------- */

struct sym {
	unsigned long addr, size;
	char *name;
};

struct symtab {
	struct sym *syms;
	size_t nr;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void symtab_add(struct symtab *t, unsigned long addr,
		       unsigned long size, const char *name)
{
	if (!(t->nr & (t->nr + 1))) {
		t->syms = realloc(t->syms, (t->nr + 1) * 2 * sizeof(*t->syms));
		if (!t->syms) {
			perror("unwindprof");
			exit(1);
		}
	}
	t->syms[t->nr++] = (struct sym){ addr, size, strdup(name) };
}

/* The symbol at or before @addr, or NULL. */
static const struct sym *symtab_find(const struct symtab *t, unsigned long addr)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	return &t->syms[lo - 1];
}

static struct symtab kernel_syms;

static void load_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char name[256], type;
	unsigned long addr;

	if (!f)
		return;
	while (fscanf(f, "%lx %c %255s%*[^\n]", &addr, &type, name) == 3)
		if (type == 't' || type == 'T')
			symtab_add(&kernel_syms, addr, 0, name);
	fclose(f);
	qsort(kernel_syms.syms, kernel_syms.nr, sizeof(struct sym), sym_cmp);
}

/* An ELF file's function symbols, by file offset (what maps give us). */
struct elf_file {
	char *path;
	struct symtab syms;
	struct elf_file *next;
};

static struct elf_file *elf_files;

/*
 * Add @elf's function symbols to @t, at file offsets of the object whose
 * program headers @layout holds: the object itself, or, for its detached
 * debug file, the object the debug file describes.
 */
static void elf_add_syms(struct symtab *t, Elf *elf, Elf *layout)
{
	Elf_Scn *scn = NULL;
	size_t phnum;
	GElf_Shdr sh;

	if (elf_getphdrnum(layout, &phnum))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			GElf_Sym s;
			GElf_Phdr ph;

			if (!gelf_getsym(data, i, &s) || !s.st_value ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name)
				continue;
			/* Virtual address to file offset, through PT_LOAD. */
			for (size_t p = 0; p < phnum; p++) {
				if (!gelf_getphdr(layout, p, &ph) || ph.p_type != PT_LOAD ||
				    s.st_value < ph.p_vaddr ||
				    s.st_value >= ph.p_vaddr + ph.p_memsz)
					continue;
				symtab_add(t, s.st_value - ph.p_vaddr + ph.p_offset,
					   s.st_size, name);
				break;
			}
		}
	}
}

/* @elf's GNU build ID in hex, into @hex of @len bytes; false if none fits. */
static bool elf_build_id(Elf *elf, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		size_t at = 0, name_at, desc_at;
		Elf_Data *data;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data &&
		       (at = gelf_getnote(data, at, &nh, &name_at, &desc_at))) {
			const unsigned char *id = (unsigned char *)data->d_buf + desc_at;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + name_at, "GNU", 4))
				continue;
			if (!nh.n_descsz || nh.n_descsz * 2 + 1 > len)
				return false;
			for (size_t i = 0; i < nh.n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", id[i]);
			return true;
		}
	}
	return false;
}

/*
 * The object's symbols and, where its distribution installed them, those
 * of its detached debug file under /usr/lib/debug/.build-id/, as perf and
 * gdb find it: a stripped C library names its local functions (the root
 * of every thread, start_thread) only there.
 */
static void elf_read_syms(struct elf_file *ef)
{
	char id[2 * 64 + 1], debug[sizeof(id) + 64];
	Elf *elf, *delf;
	int fd, dfd;

	fd = open(ef->path, O_RDONLY);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto out;
	elf_add_syms(&ef->syms, elf, elf);
	if (elf_build_id(elf, id, sizeof(id))) {
		snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 id, id + 2);
		dfd = open(debug, O_RDONLY);
		if (dfd >= 0) {
			delf = elf_begin(dfd, ELF_C_READ, NULL);
			if (delf) {
				elf_add_syms(&ef->syms, delf, elf);
				elf_end(delf);
			}
			close(dfd);
		}
	}
	qsort(ef->syms.syms, ef->syms.nr, sizeof(struct sym), sym_cmp);
	elf_end(elf);
out:
	close(fd);
}

static struct elf_file *elf_file(const char *path)
{
	struct elf_file *ef;

	for (ef = elf_files; ef; ef = ef->next)
		if (!strcmp(ef->path, path))
			return ef;
	ef = calloc(1, sizeof(*ef));
	if (!ef) {
		perror("unwindprof");
		exit(1);
	}
	ef->path = strdup(path);
	elf_read_syms(ef);
	ef->next = elf_files;
	elf_files = ef;
	return ef;
}

/* A process's executable mappings, read from /proc while it lives. */
struct mapping {
	unsigned long start, end, offset;
	struct elf_file *file;
};

struct process {
	pid_t pid;
	struct mapping *maps;
	size_t nr;
	bool read;
	struct process *next;
};

static struct process *processes;

static void process_read_maps(struct process *p)
{
	char path[64], line[4096], perms[8], file[4096];
	unsigned long start, end, offset;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	free(p->maps);
	p->maps = NULL;
	p->nr = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end,
			   perms, &offset, file) != 5 ||
		    perms[2] != 'x' || file[0] != '/')
			continue;
		p->maps = realloc(p->maps, (p->nr + 1) * sizeof(*p->maps));
		if (!p->maps) {
			perror("unwindprof");
			exit(1);
		}
		p->maps[p->nr++] = (struct mapping){ start, end, offset,
						     elf_file(file) };
	}
	p->read = true;
	fclose(f);
}

static struct process *process(pid_t pid)
{
	struct process *p;

	for (p = processes; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p) {
		perror("unwindprof");
		exit(1);
	}
	p->pid = pid;
	p->next = processes;
	processes = p;
	return p;
}

static const struct mapping *process_find(struct process *p, unsigned long ip)
{
	for (size_t i = 0; i < p->nr; i++)
		if (ip >= p->maps[i].start && ip < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* "function" or "[file]" or a hex address, appended to @buf. */
static void user_frame_name(struct process *p, unsigned long ip,
			    char *buf, size_t len)
{
	const struct mapping *m = process_find(p, ip);
	const struct sym *s;
	unsigned long off;
	const char *base;

	if (!m) {
		/* A library mapped since we last looked. */
		process_read_maps(p);
		m = process_find(p, ip);
	}
	if (!m) {
		snprintf(buf, len, "0x%lx", ip);
		return;
	}
	off = ip - m->start + m->offset;
	s = symtab_find(&m->file->syms, off);
	if (s && (!s->size || off < s->addr + s->size)) {
		snprintf(buf, len, "%s", s->name);
		return;
	}
	base = strrchr(m->file->path, '/');
	snprintf(buf, len, "[%s]", base ? base + 1 : m->file->path);
}

static void kernel_frame_name(unsigned long ip, char *buf, size_t len)
{
	const struct sym *s = symtab_find(&kernel_syms, ip);

	if (s)
		snprintf(buf, len, "%s_[k]", s->name);
	else
		snprintf(buf, len, "0x%lx_[k]", ip);
}

/* ---- folded stacks ------------------------------------------------------ */

struct folded {
	char *stack;
	unsigned long count;
	struct folded *next;
};

#define FOLDED_BUCKETS 4096
static struct folded *folded[FOLDED_BUCKETS];

static void folded_add(const char *stack)
{
	unsigned long h = 5381;
	struct folded *f;

	for (const char *c = stack; *c; c++)
		h = h * 33 + (unsigned char)*c;
	for (f = folded[h % FOLDED_BUCKETS]; f; f = f->next) {
		if (!strcmp(f->stack, stack)) {
			f->count++;
			return;
		}
	}
	f = malloc(sizeof(*f));
	if (f)
		f->stack = strdup(stack);
	if (!f || !f->stack) {
		perror("unwindprof");
		exit(1);
	}
	f->count = 1;
	f->next = folded[h % FOLDED_BUCKETS];
	folded[h % FOLDED_BUCKETS] = f;
}

static void folded_print(FILE *out)
{
	for (int i = 0; i < FOLDED_BUCKETS; i++)
		for (struct folded *f = folded[i]; f; f = f->next)
			fprintf(out, "%s %lu\n", f->stack, f->count);
}

/* Append ";name" to the line being built. */
static void append(char **line, size_t *len, const char *name)
{
	size_t n = strlen(name);

	*line = realloc(*line, *len + n + 2);
	if (!*line) {
		perror("unwindprof");
		exit(1);
	}
	(*line)[(*len)++] = ';';
	memcpy(*line + *len, name, n + 1);
	*len += n;
}

static struct unwindprof_bpf *skel;

/*
 * Fold one sample with its user stack (@uips, @unr; innermost first), the
 * last @guessed of them marked "?".
 */
static void fold(const struct up_sample *s, const __u64 *uips, __u32 unr,
		 __u32 guessed)
{
	__u64 kips[UP_MAX_FRAMES];
	struct process *p = process(s->pid);
	size_t len = strnlen(s->comm, UP_COMM_LEN);
	char *line = strndup(s->comm, UP_COMM_LEN);
	char name[512];
	int knr = 0, mark;

	if (!line) {
		perror("unwindprof");
		exit(1);
	}
	if (!p->read)
		process_read_maps(p);
	for (int i = unr - 1; i >= 0; i--) {
		mark = i >= (int)unr - (int)guessed;
		if (!uips[i])
			snprintf(name + mark, sizeof(name) - mark, "[user stack lost]");
		else
			user_frame_name(p, uips[i], name + mark, sizeof(name) - mark);
		if (mark)
			name[0] = '?';
		append(&line, &len, name);
	}
	if (s->kstack >= 0 &&
	    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.stacks), &s->kstack, kips))
		while (knr < UP_MAX_FRAMES && kips[knr])
			knr++;
	for (int i = knr - 1; i >= 0; i--) {
		kernel_frame_name(kips[i], name, sizeof(name));
		append(&line, &len, name);
	}
	folded_add(line);
	free(line);
}

/* ---- stitching ------------------------------------------------------------ */

/*
 * Samples waiting for the user stack of their entry, by thread and cookie.
 * The ring buffer is in order, so when a stack arrives every sample of its
 * entry is here; what is left at the end never got its stack (lost).
 */
struct pending {
	struct up_sample s;
	struct pending *next;
};

#define PENDING_BUCKETS 1024
static struct pending *pending[PENDING_BUCKETS];

static unsigned int pending_hash(__u32 tid, __u64 cookie)
{
	return (tid * 2654435761u ^ cookie ^ cookie >> 32) % PENDING_BUCKETS;
}

static void on_sample(const struct up_sample *s)
{
	__u64 uips[UP_MAX_FRAMES] = {};
	struct pending *p;
	unsigned int nr = 0;

	tally.samples++;
	/* Read its mappings while it surely lives, at its first sample. */
	if (!process(s->pid)->read)
		process_read_maps(process(s->pid));
	if (s->kthread) {
		tally.kthread++;
		fold(s, uips, 0, 0);
		return;
	}
	if (s->cookie) {
		p = malloc(sizeof(*p));
		if (!p) {
			perror("unwindprof");
			exit(1);
		}
		p->s = *s;
		p->next = pending[pending_hash(s->tid, s->cookie)];
		pending[pending_hash(s->tid, s->cookie)] = p;
		return;
	}
	/* Walked in the sample (--in-sample, or the request was refused). */
	tally.in_sample++;
	if (s->ustack >= 0 &&
	    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.stacks), &s->ustack, uips))
		while (nr < UP_MAX_FRAMES && uips[nr])
			nr++;
	fold(s, uips, nr, 0);
}

static unsigned long pending_count(void)
{
	unsigned long n = 0;

	for (int i = 0; i < PENDING_BUCKETS; i++)
		for (struct pending *p = pending[i]; p; p = p->next)
			n++;
	return n;
}

static void on_stack(const struct up_stack *st)
{
	struct pending **pp = &pending[pending_hash(st->tid, st->cookie)];
	bool matched = false;

	tally.stacks++;
	while (*pp) {
		struct pending *p = *pp;

		if (p->s.tid != st->tid || p->s.cookie != st->cookie) {
			pp = &p->next;
			continue;
		}
		fold(&p->s, st->ips, st->nr, st->guessed);
		tally.stitched++;
		matched = true;
		*pp = p->next;
		free(p);
	}
	if (!matched)
		tally.unmatched++;
}

static int on_record(void *ctx, void *data, size_t size)
{
	const struct up_sample *s = data;
	const struct up_stack *st = data;

	/* What the record took in the ring: an 8-byte header, 8-byte aligned. */
	tally.ring_bytes += 8 + ((size + 7) & ~7UL);
	if (size >= sizeof(*s) && s->type == UP_SAMPLE)
		on_sample(s);
	else if (size >= UP_STACK_HEADER && st->type == UP_STACK &&
		 size >= UP_STACK_HEADER + st->nr * sizeof(__u64))
		on_stack(st);
	return 0;
}

/* ---- setup ------------------------------------------------------------------ */

static int open_event(int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = opt.freq,
	};

	if (!strcmp(opt.event, "cpu-clock")) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
	} else if (!strcmp(opt.event, "cycles")) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		fprintf(stderr, "unwindprof: unknown event %s (cpu-clock, cycles)\n",
			opt.event);
		exit(2);
	}
	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void on_signal(int sig)
{
	__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
}

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "profile this process (default: every user task)" },
	{ "freq", 'F', "HZ", 0, "samples per second per CPU (default 999)" },
	{ "duration", 'd', "SECONDS", 0, "stop after this long" },
	{ "event", 'e', "EVENT", 0, "cpu-clock (default) or cycles" },
	{ "output", 'o', "FILE", 0, "folded stacks to FILE (default stdout)" },
	{ "wait", 'w', "MS", 0,
	  "at the end, wait this long for stacks still to come (default 1000)" },
	{ "in-sample", 'i', NULL, 0,
	  "walk user stacks in every sample (bpf_get_stackid), the baseline" },
	{},
};

/* A whole decimal number of at least @min, or argp's usage error. */
static int parse_count(struct argp_state *state, const char *arg,
		       const char *what, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > 1000000000)
		argp_error(state, "%s must be a number of at least %ld, not '%s'",
			   what, min, arg);
	return v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		opt.pid = parse_count(state, arg, "PID", 1);
		break;
	case 'F':
		opt.freq = parse_count(state, arg, "HZ", 1);
		break;
	case 'd':
		opt.duration = parse_count(state, arg, "SECONDS", 1);
		break;
	case 'e':
		opt.event = arg;
		break;
	case 'o':
		opt.output = arg;
		break;
	case 'i':
		opt.in_sample = true;
		break;
	case 'w':
		opt.wait_ms = parse_count(state, arg, "MS", 0);
		break;
	case ARGP_KEY_ARGS:
		opt.command = state->argv + state->next;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	.options = options,
	.parser = parse_arg,
	.args_doc = "[-- COMMAND [ARG...]]",
	.doc = "Sample a perf event; print folded stacks, user parts unwound once per entry.",
};

/* Fork COMMAND stopped until the profiler is ready; return its pid. */
static pid_t start_command(int *go)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execvp(opt.command[0], opt.command);
		perror(opt.command[0]);
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

int main(int argc, char **argv)
{
	struct bpf_link **links = NULL;
	struct ring_buffer *rb = NULL;
	int ncpus = 0, err, go = -1, status;
	unsigned long long counts[UP_NR_COUNTS] = {};
	pid_t child = 0;
	FILE *out = stdout;
	time_t end = 0;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	if (opt.command && opt.pid) {
		fprintf(stderr, "unwindprof: -p and a command exclude each other\n");
		return 2;
	}
	if (opt.pid && kill(opt.pid, 0) && errno == ESRCH) {
		fprintf(stderr, "unwindprof: no process %d\n", opt.pid);
		return 1;
	}
	if (opt.output) {
		out = fopen(opt.output, "w");
		if (!out) {
			perror(opt.output);
			return 1;
		}
	}
	elf_version(EV_CURRENT);
	load_kallsyms();
	if (opt.command) {
		child = start_command(&go);
		if (child < 0) {
			perror("unwindprof: fork");
			return 1;
		}
		opt.pid = child;
	}

	skel = unwindprof_bpf__open();
	if (!skel) {
		fprintf(stderr, "unwindprof: cannot open the BPF object\n");
		return 1;
	}
	skel->bss->target_pid = opt.pid;
	skel->bss->self_pid = getpid();
	skel->bss->in_sample = opt.in_sample;
	err = unwindprof_bpf__load(skel);
	if (err) {
		fprintf(stderr, "unwindprof: cannot load the BPF programs: %s\n",
			strerror(-err));
		goto out;
	}
	skel->links.on_user_stack = bpf_program__attach(skel->progs.on_user_stack);
	if (!skel->links.on_user_stack) {
		err = -errno;
		fprintf(stderr, "unwindprof: cannot attach to unwind_user_stack_tp: %s\n",
			strerror(-err));
		goto out;
	}
	ncpus = libbpf_num_possible_cpus();
	links = calloc(ncpus, sizeof(*links));
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int fd = open_event(cpu);

		if (fd < 0) {
			if (errno == ENODEV)	/* a possible CPU not online */
				continue;
			err = -errno;
			fprintf(stderr, "unwindprof: perf_event_open on CPU %d: %s\n",
				cpu, strerror(errno));
			goto out;
		}
		links[cpu] = bpf_program__attach_perf_event(skel->progs.on_sample, fd);
		if (!links[cpu]) {
			err = -errno;
			close(fd);
			fprintf(stderr, "unwindprof: attach on CPU %d: %s\n", cpu,
				strerror(-err));
			goto out;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, NULL, NULL);
	if (!rb) {
		err = -errno;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (opt.duration)
		end = time(NULL) + opt.duration;
	if (go >= 0) {
		if (write(go, "g", 1) != 1)
			perror("unwindprof: start");
		close(go);
	}
	while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
		err = ring_buffer__poll(rb, 100);
		if (err < 0 && err != -EINTR)
			break;
		err = 0;
		if (end && time(NULL) >= end)
			break;
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child = 0;
			break;
		}
	}
	/*
	 * Stop sampling, then give the tasks sampled in the kernel time to
	 * return to user space: their stacks come then. A task that stays in
	 * the kernel (blocked in a system call) longer than --wait keeps its
	 * samples' user stacks, and they are counted lost.
	 */
	for (int cpu = 0; cpu < ncpus; cpu++) {
		bpf_link__destroy(links[cpu]);
		links[cpu] = NULL;
	}
	ring_buffer__consume(rb);
	for (int waited = 0; pending_count() && waited < opt.wait_ms; waited += 10)
		ring_buffer__poll(rb, 10);
	bpf_link__destroy(skel->links.on_user_stack);
	skel->links.on_user_stack = NULL;
	ring_buffer__consume(rb);
	/*
	 * Samples whose stack never came keep their kernel part, under a
	 * marker frame, as perf keeps them.
	 */
	for (int i = 0; i < PENDING_BUCKETS; i++) {
		for (struct pending *p = pending[i]; p; p = p->next) {
			static const __u64 lost_marker;

			tally.lost++;
			fold(&p->s, &lost_marker, 1, 0);
		}
	}
	for (__u32 k = 0; k < UP_NR_COUNTS; k++) {
		unsigned long long v[ncpus];

		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &k, v))
			continue;
		for (int c = 0; c < ncpus; c++)
			counts[k] += v[c];
	}
	folded_print(out);
	fprintf(stderr, "unwindprof: %llu samples, %llu stitched, %llu lost, %llu user walks ",
		tally.samples + counts[UP_SAMPLE_DROPPED], tally.stitched,
		tally.lost + counts[UP_SAMPLE_DROPPED], tally.stacks + tally.in_sample);
	fprintf(stderr, "(%llu deferred, %llu in the sample; %llu refused, %llu of kernel threads,",
		tally.stacks, tally.in_sample, counts[UP_REFUSED], tally.kthread);
	fprintf(stderr, " %llu stacks dropped, %llu stacks unmatched, %llu ring bytes)\n",
		counts[UP_STACK_DROPPED], tally.unmatched, tally.ring_bytes);
out:
	for (int cpu = 0; links && cpu < ncpus; cpu++)
		bpf_link__destroy(links[cpu]);
	ring_buffer__free(rb);
	unwindprof_bpf__destroy(skel);
	free(links);
	if (out != stdout)
		fclose(out);
	if (child) {
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	return err ? 1 : 0;
}

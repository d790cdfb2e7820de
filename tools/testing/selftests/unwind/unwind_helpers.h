/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the deferred unwinding selftests: system calls made from a
 * frame-pointer assembly function at a known address (so that the stack
 * the kernel walks is known exactly), and a parser of the test client's
 * event log (/sys/kernel/debug/unwind_test/events).
 */
#ifndef UNWIND_HELPERS_H
#define UNWIND_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#define UT_DIR		"/sys/kernel/debug/unwind_test"

/*
 * The si_code of the series' report signal (include/uapi/asm-generic/
 * siginfo.h): the C library's <signal.h> and the kernel's siginfo header
 * cannot both be included, and the C library does not know it yet.
 */
#define SI_UNWIND	0x5557

#define UT_MAX_IPS	512
#define UT_MAX_EVENTS	300

/*
 * ut_syscall(nr, a, b, c): the system call nr(a, b, c), made from a
 * function with a standard frame. The kernel sees the user IP
 * ut_syscall_ret; the first return address is the one into the caller,
 * which ut_syscall stores in ut_leaf_ra. Arguments four and five are 0
 * (prctl() wants its unused ones so).
 *
 * ut_syscall_fp(nr, a, b, c, fp): the same with the frame pointer register
 * set to fp during the call (and no frame of its own), to make the kernel
 * walk a crafted stack. Its user IP is ut_syscall_fp_ret. Arguments four
 * and five are 0 on x86-64 (prctl(PR_USER_STACK_READ) from a crafted
 * stack wants them so). On x86-64 its way out starts with "and $-1, %rsp",
 * which changes nothing but is a write to %rsp that the kernel's reading
 * of frames from their code gives up on: the walk then takes the crafted
 * frame pointer, as the frame-pointer format does (code_frames_test tests
 * the reading).
 *
 * ut_spin(n, ...): n turns of a loop in user mode, in a function with a
 * standard frame that also stores its return address in ut_leaf_ra. An
 * interrupt in the loop sees a user IP in [ut_spin_loop, ut_spin_end).
 *
 * ut_fp_probe(fp): sets the frame pointer register to fp (64-bit only) and
 * passes ut_fp_probe_at with it, a place for a uprobe that sees a crafted
 * or a given frame chain.
 */
long ut_syscall(long nr, long a, long b, long c);
long ut_syscall_fp(long nr, long a, long b, long c, unsigned long fp);
long ut_spin(long n, long a, long b, long c);
void ut_fp_probe(unsigned long fp);
extern char ut_syscall_ret[], ut_syscall_fp_ret[], ut_fp_probe_at[];
extern char ut_spin_loop[], ut_spin_end[];
unsigned long ut_leaf_ra;

#ifdef __x86_64__
asm(".text\n"
	".globl ut_syscall, ut_syscall_ret, ut_syscall_fp, ut_syscall_fp_ret\n"
	"ut_syscall:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov 8(%rbp), %rax\n"
	"	mov %rax, ut_leaf_ra(%rip)\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	xor %r10d, %r10d\n"
	"	xor %r8d, %r8d\n"
	"	syscall\n"
	"ut_syscall_ret:\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"ut_syscall_fp:\n"
	"	push %rbp\n"
	"	mov %r8, %rbp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	xor %r10d, %r10d\n"
	"	xor %r8d, %r8d\n"
	"	syscall\n"
	"ut_syscall_fp_ret:\n"
	"	and $-1, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".globl ut_fp_probe, ut_fp_probe_at\n"
	"ut_fp_probe:\n"
	"	push %rbp\n"
	"	mov %rdi, %rbp\n"
	"ut_fp_probe_at:\n"
	"	nop\n"
	"	nop\n"
	"	pop %rbp\n"
	"	ret\n"
	".globl ut_spin, ut_spin_loop, ut_spin_end\n"
	"ut_spin:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov 8(%rbp), %rax\n"
	"	mov %rax, ut_leaf_ra(%rip)\n"
	"ut_spin_loop:\n"
	"	dec %rdi\n"
	"	jnz ut_spin_loop\n"
	"ut_spin_end:\n"
	"	xor %eax, %eax\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n");
#define UT_SYS_READ		0
#define UT_SYS_WRITE		1
#define UT_SYS_GETPPID		110
#define UT_SYS_EXECVE		59
#define UT_SYS_EXIT_GROUP	231
#define UT_SYS_KILL		62
#define UT_SYS_PRCTL		157
#elif defined(__i386__)
asm(".text\n"
	".globl ut_syscall, ut_syscall_ret, ut_syscall_fp, ut_syscall_fp_ret\n"
	"ut_syscall:\n"
	"	push %ebp\n"
	"	mov %esp, %ebp\n"
	"	push %ebx\n"
	"	push %esi\n"
	"	push %edi\n"
	"	mov 4(%ebp), %eax\n"
	"	mov %eax, ut_leaf_ra\n"
	"	mov 8(%ebp), %eax\n"
	"	mov 12(%ebp), %ebx\n"
	"	mov 16(%ebp), %ecx\n"
	"	mov 20(%ebp), %edx\n"
	"	xor %esi, %esi\n"
	"	xor %edi, %edi\n"
	"	int $0x80\n"
	"ut_syscall_ret:\n"
	"	pop %edi\n"
	"	pop %esi\n"
	"	pop %ebx\n"
	"	pop %ebp\n"
	"	ret\n"
	"ut_syscall_fp:\n"
	"	push %ebp\n"
	"	push %ebx\n"
	"	mov 12(%esp), %eax\n"
	"	mov 16(%esp), %ebx\n"
	"	mov 20(%esp), %ecx\n"
	"	mov 24(%esp), %edx\n"
	"	mov 28(%esp), %ebp\n"
	"	int $0x80\n"
	"ut_syscall_fp_ret:\n"
	"	pop %ebx\n"
	"	pop %ebp\n"
	"	ret\n"
	".globl ut_spin, ut_spin_loop, ut_spin_end\n"
	"ut_spin:\n"
	"	push %ebp\n"
	"	mov %esp, %ebp\n"
	"	mov 4(%ebp), %eax\n"
	"	mov %eax, ut_leaf_ra\n"
	"	mov 8(%ebp), %ecx\n"
	"ut_spin_loop:\n"
	"	dec %ecx\n"
	"	jnz ut_spin_loop\n"
	"ut_spin_end:\n"
	"	xor %eax, %eax\n"
	"	pop %ebp\n"
	"	ret\n");
#define UT_SYS_READ		3
#define UT_SYS_WRITE		4
#define UT_SYS_GETPPID		64
#define UT_SYS_EXECVE		11
#define UT_SYS_EXIT_GROUP	252
#define UT_SYS_KILL		37
#define UT_SYS_PRCTL		172
#else
#error "the unwind selftests know x86 only"
#endif

/* Kinds of logged events: requests, callbacks, user stack walks. */
#define UT_REQ		0
#define UT_CB		1
#define UT_WALK		2

struct ut_event {
	int		kind;		/* UT_REQ, UT_CB or UT_WALK */
	int		pid;
	char		client;
	char		ctx[16];
	int		ret;
	uint64_t	cookie;
	unsigned long	ip;		/* requests from injected NMIs */
	int		nr;
	unsigned long	*ips;
};

struct ut_log {
	int		n;
	int		overflow;
	struct ut_event	ev[UT_MAX_EVENTS];
};

static inline int ut_available(void)
{
	return access(UT_DIR "/request", W_OK) == 0;
}

/* Read and parse the event log; the client forgets what was read. */
static inline int ut_read_events(struct ut_log *log)
{
	static char buf[UT_MAX_EVENTS * (128 + UT_MAX_IPS * 19)];
	ssize_t len = 0, r;
	char *line, *save;
	int fd;

	for (int i = 0; i < log->n; i++)
		free(log->ev[i].ips);
	memset(log, 0, sizeof(*log));
	fd = open(UT_DIR "/events", O_RDONLY);
	if (fd < 0)
		return -1;
	while ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	close(fd);
	buf[len] = '\0';

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct ut_event *ev = &log->ev[log->n];
		unsigned long long cookie;
		char *ips;

		if (!strcmp(line, "overflow")) {
			log->overflow = 1;
			continue;
		}
		if (log->n == UT_MAX_EVENTS)
			return -1;
		if (sscanf(line, "walk pid=%d", &ev->pid) == 1) {
			ev->kind = UT_WALK;
			log->n++;
			continue;
		}
		if (sscanf(line, "req pid=%d client=%c ctx=%15s ret=%d cookie=%llx",
			   &ev->pid, &ev->client, ev->ctx, &ev->ret, &cookie) == 5) {
			char *ip = strstr(line, " ip=");

			ev->cookie = cookie;
			if (ip)
				ev->ip = strtoul(ip + 4, NULL, 16);
			log->n++;
			continue;
		}
		if (sscanf(line, "cb pid=%d client=%c cookie=%llx nr=%d",
			   &ev->pid, &ev->client, &cookie, &ev->nr) != 4)
			return -1;
		ev->kind = UT_CB;
		ev->cookie = cookie;
		ev->ips = calloc(UT_MAX_IPS, sizeof(*ev->ips));
		ips = strstr(line, "ips=");
		if (ips) {
			char *tok, *s2;
			int k = 0;

			for (tok = strtok_r(ips + 4, ",", &s2); tok && k < UT_MAX_IPS;
			     tok = strtok_r(NULL, ",", &s2))
				ev->ips[k++] = strtoul(tok, NULL, 16);
		}
		log->n++;
	}
	return 0;
}

static inline void ut_drain(void)
{
	static struct ut_log log;

	ut_read_events(&log);
}

static inline int ut_write(const char *file, const char *cmd)
{
	int fd = open(file, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd) ? 0 : -1;
	close(fd);
	return ret;
}

/*
 * Ask the host for NMIs every @interval_ms milliseconds, under
 * harness/vm-run --nmi: the request is the file named by $VMRUN_NMI,
 * holding the interval; removing it stops them. They land on CPU 0 alone
 * (Linux masks LINT1, where QEMU raises them, on the other CPUs).
 * Returns 0, -ENOENT outside vm-run --nmi, or another -errno.
 */
static inline int ut_ask_for_nmis(const char *interval_ms)
{
	const char *control = getenv("VMRUN_NMI");
	ssize_t n;
	int fd;

	if (!control)
		return -ENOENT;
	fd = open(control, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, interval_ms, strlen(interval_ms));
	close(fd);
	return n == (ssize_t)strlen(interval_ms) ? 0 : -EIO;
}

static inline void ut_stop_nmis(void)
{
	const char *control = getenv("VMRUN_NMI");

	if (control)
		unlink(control);
}

/* Count events matching pid (0: any), type and client (0: any). */
static inline int ut_count(struct ut_log *log, int pid, int kind, char client)
{
	int n = 0;

	for (int i = 0; i < log->n; i++)
		n += log->ev[i].kind == kind && (!pid || log->ev[i].pid == pid) &&
		     (!client || log->ev[i].client == client);
	return n;
}

static inline struct ut_event *ut_find(struct ut_log *log, int pid, int kind,
				       char client)
{
	for (int i = 0; i < log->n; i++) {
		struct ut_event *ev = &log->ev[i];

		if (ev->kind == kind && (!pid || ev->pid == pid) &&
		    (!client || ev->client == client))
			return ev;
	}
	return NULL;
}

#endif /* UNWIND_HELPERS_H */

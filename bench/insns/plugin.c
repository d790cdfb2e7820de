// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin (plugin API version 1, QEMU 7.2) for make bench-insns:
 * it counts the instructions each vCPU executes at kernel addresses, and
 * whenever a vCPU starts the translation block at the marker address (the
 * first instruction of bench/insns/probe.c's probe_mark()), it appends that
 * vCPU's running count to a file, one "VCPU COUNT" line each. The difference
 * between two lines of the same vCPU is what the kernel executed on it in
 * between: a count, which under TCG repeats where times do not.
 *
 *   qemu-system-x86_64 -plugin insns.so,mark=0x401d35,out=/tmp/counts ...
 *
 * With hist=FILE it also says where those instructions were: at each
 * mark it writes "mark VCPU" to FILE, then one "ADDRESS INSTRUCTIONS" line
 * for each kernel translation block that ran on that vCPU since its last
 * mark (bench/insns/hist turns them into instructions per function).
 *
 * Only the few entry points used here are declared, as the API documents
 * them; Debian ships no qemu-plugin.h.
 */
#include <pthread.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu, void *udata);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  vcpu_udata_cb cb,
					  enum qemu_plugin_cb_flags flags,
					  void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb,
				    void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* x86-64 kernel addresses: the upper half of the canonical space. */
#define KERNEL_START	0xffff800000000000ULL
#define MAX_VCPUS	16

/* Each vCPU's count is changed by that vCPU's thread only. */
static uint64_t kernel_insns[MAX_VCPUS];
static uint64_t mark_addr;
static FILE *out;

/*
 * hist=FILE: one record per translation of a kernel block. count[v] is
 * changed by vCPU v's thread only; the array of records grows under
 * hist_lock (translations run on every vCPU's thread), which at_mark()
 * takes too, to walk it.
 */
struct tb_record {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t count[MAX_VCPUS];
};
static FILE *hist;
static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tb_record **records;
static size_t nr_records, max_records;

static void count_tb(unsigned int vcpu, void *n)
{
	if (vcpu < MAX_VCPUS)
		kernel_insns[vcpu] += (uintptr_t)n;
}

static void count_tb_record(unsigned int vcpu, void *data)
{
	struct tb_record *r = data;

	if (vcpu < MAX_VCPUS) {
		kernel_insns[vcpu] += r->insns;
		r->count[vcpu] += r->insns;
	}
}

static struct tb_record *new_record(uint64_t vaddr, size_t insns)
{
	struct tb_record *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->vaddr = vaddr;
	r->insns = insns;
	pthread_mutex_lock(&hist_lock);
	if (nr_records == max_records) {
		size_t max = max_records ? 2 * max_records : 4096;
		struct tb_record **p = realloc(records, max * sizeof(*p));

		if (!p) {
			pthread_mutex_unlock(&hist_lock);
			free(r);
			return NULL;
		}
		records = p;
		max_records = max;
	}
	records[nr_records++] = r;
	pthread_mutex_unlock(&hist_lock);
	return r;
}

static void write_hist(unsigned int vcpu)
{
	size_t i;

	pthread_mutex_lock(&hist_lock);
	fprintf(hist, "mark %u\n", vcpu);
	for (i = 0; i < nr_records; i++) {
		struct tb_record *r = records[i];

		if (r->count[vcpu]) {
			fprintf(hist, "%" PRIx64 " %" PRIu64 "\n", r->vaddr,
				r->count[vcpu]);
			r->count[vcpu] = 0;
		}
	}
	fflush(hist);
	pthread_mutex_unlock(&hist_lock);
}

static void at_mark(unsigned int vcpu, void *unused)
{
	(void)unused;
	if (vcpu < MAX_VCPUS) {
		fprintf(out, "%u %" PRIu64 "\n", vcpu, kernel_insns[vcpu]);
		fflush(out);
		if (hist)
			write_hist(vcpu);
	}
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t pc = qemu_plugin_tb_vaddr(tb);

	(void)id;
	if (pc >= KERNEL_START) {
		size_t n = qemu_plugin_tb_n_insns(tb);
		struct tb_record *r = hist ? new_record(pc, n) : NULL;

		if (r) {
			qemu_plugin_register_vcpu_tb_exec_cb(tb, count_tb_record,
							     QEMU_PLUGIN_CB_NO_REGS,
							     r);
			return;
		}
		qemu_plugin_register_vcpu_tb_exec_cb(tb, count_tb,
						     QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)n);
	} else if (pc == mark_addr) {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, at_mark,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void finish(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	fclose(out);
	if (hist)
		fclose(hist);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	const char *path = NULL, *hist_path = NULL;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5))
			mark_addr = strtoull(argv[i] + 5, NULL, 0);
		else if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "hist=", 5))
			hist_path = argv[i] + 5;
	}
	if (!mark_addr || !path) {
		fprintf(stderr, "insns plugin: needs mark=ADDRESS,out=FILE\n");
		return -1;
	}
	out = fopen(path, "a");
	if (!out) {
		perror(path);
		return -1;
	}
	if (hist_path) {
		hist = fopen(hist_path, "w");
		if (!hist) {
			perror(hist_path);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
	qemu_plugin_register_atexit_cb(id, finish, NULL);
	return 0;
}

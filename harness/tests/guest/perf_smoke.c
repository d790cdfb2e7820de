// SPDX-License-Identifier: GPL-2.0
/*
 * TAP: perf_event_open() works in the guest the way the series needs it:
 * a software cpu-clock sampling event on this task, read through the mmap
 * ring, yields samples whose callchains hold both a kernel part and a user
 * part. The guest has no PMU, so software events are what the tests use.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 64

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Half user time, half kernel time (reading /dev/zero copies in the kernel). */
static void workload(double seconds)
{
	static char buf[1 << 16];
	double end = now() + seconds;
	int fd = open("/dev/zero", O_RDONLY);

	while (now() < end) {
		for (int i = 0; i < 200000; i++)
			sink += i * 7;
		if (fd >= 0 && read(fd, buf, sizeof(buf)) < 0)
			break;
	}
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 200000,	/* ns: 5 kHz */
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.disabled = 1,
		.exclude_hv = 1,
	};
	size_t len = (RING_PAGES + 1) * getpagesize();
	int samples = 0, with_kernel = 0, with_user = 0;
	struct perf_event_mmap_page *meta;
	uint64_t head, tail;
	char *data;
	int fd;

	printf("TAP version 13\n1..3\n");
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		printf("not ok 1 perf_event_open(cpu-clock, callchain): %m\n");
		printf("not ok 2 # SKIP no event\nnot ok 3 # SKIP no event\n");
		return 1;
	}
	meta = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED) {
		printf("not ok 1 mmap of the ring buffer: %m\n");
		return 1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	workload(0.5);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	data = (char *)meta + meta->data_offset;
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	for (tail = meta->data_tail; tail < head;) {
		struct perf_event_header hdr;
		uint64_t rec[512];

		memcpy(&hdr, data + tail % meta->data_size, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > sizeof(rec))
			break;
		for (size_t i = 0; i < hdr.size; i++)
			((char *)rec)[i] = data[(tail + i) % meta->data_size];
		tail += hdr.size;
		if (hdr.type != PERF_RECORD_SAMPLE)
			continue;
		/* header, pid/tid, nr, ips[nr] */
		uint64_t nr = rec[2];
		int k = 0, u = 0;

		samples++;
		for (uint64_t i = 0; i < nr && 3 + i < hdr.size / 8; i++) {
			if (rec[3 + i] == PERF_CONTEXT_KERNEL)
				k = 1;
			else if (rec[3 + i] == PERF_CONTEXT_USER)
				u = 1;
		}
		with_kernel += k;
		with_user += u;
	}
	printf("%s 1 perf_event_open(cpu-clock) sampled this task (%d samples)\n",
	       samples ? "ok" : "not ok", samples);
	printf("%s 2 samples carry kernel callchains (%d)\n",
	       with_kernel ? "ok" : "not ok", with_kernel);
	printf("%s 3 samples carry user callchains (%d)\n",
	       with_user ? "ok" : "not ok", with_user);
	return !(samples && with_kernel && with_user);
}

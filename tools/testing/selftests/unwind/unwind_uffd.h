/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A page whose first touch stalls until someone serves it, through
 * userfaultfd: the selftests put a frame of a user stack there, so that
 * the kernel's walk of that stack sleeps on it for as long as the test
 * wants.
 */
#ifndef UNWIND_UFFD_H
#define UNWIND_UFFD_H

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UT_UFFD_FRAME_OFFSET	64

/*
 * Map one page and register it for missing faults. Returns the
 * userfaultfd, with the page in @page, or -errno.
 */
static inline int ut_uffd_page(char **page)
{
	struct uffdio_register reg = { 0 };
	struct uffdio_api api = { .api = UFFD_API };
	int uffd;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		return -errno;
	if (ioctl(uffd, UFFDIO_API, &api))
		goto fail;
	*page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*page == MAP_FAILED)
		goto fail;
	reg.range.start = (unsigned long)*page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		goto fail;
	return uffd;
fail:
	close(uffd);
	return -errno;
}

/*
 * Serve the page: it becomes a copy of a page holding, at
 * UT_UFFD_FRAME_OFFSET, the last frame of a stack (no next frame, return
 * address @ra). Returns 0 or -errno.
 */
static inline int ut_uffd_serve_frame(int uffd, char *page, unsigned long ra)
{
	struct uffdio_copy copy = { 0 };
	unsigned long *frame;
	char *src;
	int ret = 0;

	src = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
		return -errno;
	frame = (unsigned long *)(src + UT_UFFD_FRAME_OFFSET);
	frame[0] = 0;
	frame[1] = ra;
	copy.dst = (unsigned long)page;
	copy.src = (unsigned long)src;
	copy.len = 4096;
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		ret = -errno;
	munmap(src, 4096);
	return ret;
}

#endif /* UNWIND_UFFD_H */

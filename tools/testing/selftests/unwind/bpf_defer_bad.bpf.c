// SPDX-License-Identifier: GPL-2.0
/*
 * Programs the verifier must reject: bpf_unwind_deferred_request() from
 * program types that do not run on top of a user task's kernel entry (and
 * from untyped raw tracepoints, which cannot call kfuncs in 6.12), and
 * cookie arguments that are not 8 writable bytes. bpf_defer_test loads
 * each one alone and checks the errno and the verifier's message.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

extern int bpf_unwind_deferred_request(__u64 *cookie) __ksym;

const __u64 read_only_cookie;

SEC("?socket")
int socket_filter(struct __sk_buff *skb)
{
	__u64 cookie;

	return bpf_unwind_deferred_request(&cookie);
}

SEC("?xdp")
int xdp(struct xdp_md *ctx)
{
	__u64 cookie;

	bpf_unwind_deferred_request(&cookie);
	return XDP_PASS;
}

/* Untyped raw tracepoints have no kfuncs in 6.12: tp_btf has. */
SEC("?raw_tp/sys_enter")
int raw_tracepoint(void *ctx)
{
	__u64 cookie;

	return bpf_unwind_deferred_request(&cookie);
}

SEC("?kprobe/__x64_sys_getppid")
int null_cookie(struct pt_regs *regs)
{
	return bpf_unwind_deferred_request(NULL);
}

/* A map whose values are 4 bytes: too small for a cookie. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} small SEC(".maps");

SEC("?kprobe/__x64_sys_getppid")
int small_value(struct pt_regs *regs)
{
	__u32 key = 0, *v = bpf_map_lookup_elem(&small, &key);

	if (!v)
		return 0;
	return bpf_unwind_deferred_request((__u64 *)v);
}

SEC("?kprobe/__x64_sys_getppid")
int read_only(struct pt_regs *regs)
{
	return bpf_unwind_deferred_request((__u64 *)&read_only_cookie);
}

SEC("?kprobe/__x64_sys_getppid")
int scalar_cookie(struct pt_regs *regs)
{
	return bpf_unwind_deferred_request((__u64 *)bpf_get_current_pid_tgid());
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmlat: live KVM latency analysis — the hooks: which tracepoints vmlat
 * attaches to, with which probes (probes.c, hooks.c).
 */
#ifndef _VMLAT_H
#define _VMLAT_H

#include <linux/percpu.h>
#include <linux/types.h>

#define VMLAT_VERSION	"0.1.0"

/* Every tracepoint vmlat hooks; the order is the order of debugfs rows. */
enum vmlat_hook_id {
	VMLAT_HOOK_KVM_ENTRY,
	VMLAT_HOOK_KVM_EXIT,
	VMLAT_HOOK_KVM_USERSPACE_EXIT,
	VMLAT_HOOK_KVM_HYPERCALL,
	VMLAT_HOOK_KVM_HV_HYPERCALL,
	VMLAT_HOOK_KVM_NESTED_VMENTER,
	VMLAT_HOOK_KVM_NESTED_VMEXIT_INJECT,
	VMLAT_HOOK_KVM_MMU_GET_PAGE,
	VMLAT_HOOK_KVM_APIC_ACCEPT_IRQ,
	VMLAT_HOOK_KVM_INJ_VIRQ,
	VMLAT_HOOK_KVM_MSI_SET_IRQ,
	VMLAT_HOOK_KVM_SET_IRQ,
	VMLAT_HOOK_KVM_HALT_POLL_NS,
	VMLAT_HOOK_KVM_VCPU_WAKEUP,
	VMLAT_HOOK_KVM_WAIT_LAPIC_EXPIRE,
	VMLAT_HOOK_SCHED_SWITCH,
	VMLAT_HOOK_SCHED_WAKING,
	VMLAT_HOOK_SCHED_WAKEUP,
	VMLAT_HOOK_SCHED_WAKEUP_NEW,
	VMLAT_HOOK_SCHED_MIGRATE_TASK,
	VMLAT_HOOK_SCHED_PROCESS_EXIT,
	VMLAT_HOOK_HRTIMER_EXPIRE_ENTRY,
	VMLAT_NR_HOOKS
};

/**
 * struct vmlat_probe_variant - a probe for one prototype of a tracepoint
 * @proto:	the prototype as vmlat_btf_tp_proto() renders it
 * @probe:	the probe function, of exactly that prototype
 * @src_5_10:	@proto is the one Linux 5.10's source declares: on a 5.10
 *		kernel, whose modules have no BTF, it may be confirmed by
 *		its number of arguments instead (hooks.c)
 */
struct vmlat_probe_variant {
	const char *proto;
	void *probe;
	bool src_5_10;
};

/**
 * struct vmlat_hook_desc - what vmlat hooks, and with which probes
 * @system:	trace system, for display ("kvm", "sched")
 * @name:	tracepoint name, which is what vmlat matches
 * @provider:	module that usually provides it, for messages; NULL: vmlinux
 * @variants:	the prototypes vmlat has a probe for
 * @nr_variants: number of @variants
 */
struct vmlat_hook_desc {
	const char *system;
	const char *name;
	const char *provider;
	const struct vmlat_probe_variant *variants;
	unsigned int nr_variants;
};

extern const struct vmlat_hook_desc vmlat_hook_descs[VMLAT_NR_HOOKS];

/* Per-CPU so that counting a probe call costs one instruction. */
struct vmlat_pcpu {
	u64 hits[VMLAT_NR_HOOKS];
};

DECLARE_PER_CPU(struct vmlat_pcpu, vmlat_pcpu);

/*
 * tools/bench's floor: built with VMLAT_FLOOR=1 (make VMLAT_FLOOR=1),
 * every probe is attached and returns at once. What that build costs is
 * the kernel's part of vmlat's overhead (calling an attached probe); the
 * rest is vmlat's.
 */
#ifndef VMLAT_FLOOR
#define VMLAT_FLOOR 0
#endif

static __always_inline void vmlat_hit(enum vmlat_hook_id id)
{
	this_cpu_inc(vmlat_pcpu.hits[id]);
}

#define VMLAT_DETAIL_LEN	160

/**
 * struct vmlat_hook_state - a consistent snapshot of one hook, for display
 * @attached:	whether the probe is registered now
 * @hits:	probe calls since vmlat was loaded, all CPUs
 * @detail:	the confirmed prototype, or why the hook is detached
 */
struct vmlat_hook_state {
	bool attached;
	u64 hits;
	char detail[VMLAT_DETAIL_LEN];
};

int vmlat_hooks_check(void);
int vmlat_hooks_init(void);
void vmlat_hooks_exit(void);
void vmlat_hooks_get_state(enum vmlat_hook_id id, struct vmlat_hook_state *st);

#endif /* _VMLAT_H */

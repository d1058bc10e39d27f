/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The layouts of KVM's private structs that vmlat reads (kvm_x86.h),
 * confirmed against the running kernel's BTF when kvm and kvm_amd load
 * (layout.c). A member BTF places elsewhere than the headers vmlat was
 * built with refuses the groups that read it: its readers in kvm_x86.h
 * then fail as if the state could not be read, or, for the members every
 * KVM hook relies on, the KVM hooks stay detached.
 */
#ifndef _VMLAT_LAYOUT_H
#define _VMLAT_LAYOUT_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/types.h>

struct seq_file;
struct vmlat_btf;

/* Who reads which members; names in vmlat_layout_group_names[]. */
enum vmlat_layout_group {
	VMLAT_LAYOUT_VCPU	= BIT(0),	/* every KVM hook */
	VMLAT_LAYOUT_GUEST_CR3	= BIT(1),	/* guest address spaces */
	VMLAT_LAYOUT_REGS	= BIT(2),	/* clock sync, L2 sync calls */
	VMLAT_LAYOUT_LOADED	= BIT(3),	/* clock sync, late exit time */
	VMLAT_LAYOUT_EXIT_TSC	= BIT(4),	/* exit time from the TSC */
	VMLAT_LAYOUT_SVM_VMCB	= BIT(5),	/* every VMCB read */
	VMLAT_LAYOUT_SVM_EXIT	= BIT(6),	/* SVM exit reasons */
	VMLAT_LAYOUT_SVM_CR3	= BIT(7),	/* guest address spaces */
	VMLAT_LAYOUT_SVM_CPL	= BIT(8),	/* clock sync, KPTI detection */
	VMLAT_LAYOUT_SVM_RAX	= BIT(9),	/* L2 sync calls */
	VMLAT_LAYOUT_IRQ	= BIT(10),	/* interrupt delivery */
	VMLAT_LAYOUT_LAPIC	= BIT(11),	/* LAPIC timer expiries */
	VMLAT_LAYOUT_HALT	= BIT(12),	/* halt-polling */
	VMLAT_LAYOUT_DEADLINE	= BIT(13),	/* VMX timers' deadlines */
	VMLAT_LAYOUT_IRR	= BIT(14),	/* interrupts KVM holds */
	VMLAT_LAYOUT_NR_GROUPS	= 15
};

/* Whose BTF confirms a member: kvm's (with vmlinux), or kvm_amd's. */
enum vmlat_layout_src {
	VMLAT_LAYOUT_KVM,
	VMLAT_LAYOUT_KVM_AMD,
	VMLAT_LAYOUT_NR_SRC
};

/*
 * The groups refused. Written when kvm's hooks attach (none of them is
 * attached then) and when kvm_amd loads (before it runs a vCPU); read by
 * the probes.
 */
extern u32 vmlat_layout_refused;

/**
 * vmlat_layout_ok() - whether all of @groups may be read
 * @groups:	a mask of enum vmlat_layout_group
 *
 * Context: any, probes included: one load.
 */
static __always_inline bool vmlat_layout_ok(u32 groups)
{
	return !(READ_ONCE(vmlat_layout_refused) & groups);
}

u32 vmlat_layout_check(enum vmlat_layout_src src, const struct vmlat_btf *btf,
		       const char *unconfirmed, char *why, size_t size);
void vmlat_layout_forget(enum vmlat_layout_src src);
void vmlat_layout_show(struct seq_file *m);

#endif /* _VMLAT_LAYOUT_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * KVM's private layouts, confirmed from BTF (layout.h).
 *
 * kvm_x86.h reads members of struct kvm_vcpu, kvm_vcpu_arch, kvm and
 * kvm_mmu compiled from the headers vmlat was built with, and of kvm_amd's
 * struct vcpu_svm (through a mirror of its first two members) and struct
 * vmcb. A DKMS build against headers that do not match the running kernel,
 * or a distribution's backport that moves a member, would have them read
 * something else. The running kernel's BTF says where each member is:
 * kvm's module BTF (with vmlinux's) when kvm's hooks attach, kvm_amd's
 * when it loads. Each member's offset and size in the build is compared
 * with BTF's; a member that differs, or that BTF lacks in a struct it
 * has, refuses the groups that read it. A struct BTF does not describe at
 * all leaves its members unconfirmed, read as before.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/kvm_host.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <asm/svm.h>

#include "btf.h"
#include "kvm_x86.h"
#include "layout.h"
#include "test_build.h"
#include "vmlat.h"

u32 vmlat_layout_refused __read_mostly;

#define VMLAT_MEMBER(name, ctype, member, grp) {			\
	.type = name,							\
	.path = #member,						\
	.bit_off = 8 * offsetof(ctype, member),				\
	.bits = 8 * sizeof_field(ctype, member),			\
	.groups = (grp),						\
}

/* (One level more, so that a member named by a macro is expanded.) */
#define VMLAT_VCPU(member, grp) \
	VMLAT_MEMBER("kvm_vcpu", struct kvm_vcpu, member, grp)
#define VMLAT_KVM(member, grp) \
	VMLAT_MEMBER("kvm", struct kvm, member, grp)

/* kvm's: what kvm_x86.h and records.c read of a vCPU and its VM. */
static struct vmlat_layout_member vmlat_kvm_members[] = {
	VMLAT_VCPU(cpu, VMLAT_LAYOUT_VCPU),
	VMLAT_VCPU(kvm, VMLAT_LAYOUT_VCPU),
	VMLAT_VCPU(vcpu_idx, VMLAT_LAYOUT_VCPU),
	VMLAT_VCPU(arch.hflags, VMLAT_LAYOUT_VCPU),
	VMLAT_VCPU(arch.last_vmentry_cpu, VMLAT_LAYOUT_VCPU),
	VMLAT_MEMBER("kvm", struct kvm, online_vcpus, VMLAT_LAYOUT_VCPU),
	VMLAT_KVM(VMLAT_KVM_VCPUS, VMLAT_LAYOUT_VCPU),
#ifdef CONFIG_PREEMPT_NOTIFIERS
	VMLAT_VCPU(preempt_notifier, VMLAT_LAYOUT_LOADED),
#endif
#if VMLAT_KVM_HAS_STATE_PROTECTED
	VMLAT_VCPU(arch.guest_state_protected,
		   VMLAT_LAYOUT_GUEST_CR3 | VMLAT_LAYOUT_REGS),
#endif
	VMLAT_VCPU(arch.mmu, VMLAT_LAYOUT_GUEST_CR3),
	VMLAT_VCPU(arch.cr3, VMLAT_LAYOUT_GUEST_CR3),
#if VMLAT_KVM_MMU_ROOT_ROLE
	/* a bitfield: its bit is filled in by vmlat_layout_fill() */
	{ .type = "kvm_mmu", .path = "root_role.direct", .bits = 1,
	  .groups = VMLAT_LAYOUT_GUEST_CR3 },
#else
	VMLAT_MEMBER("kvm_mmu", struct kvm_mmu, direct_map,
		     VMLAT_LAYOUT_GUEST_CR3),
#endif
	VMLAT_VCPU(arch.regs, VMLAT_LAYOUT_REGS),
	VMLAT_VCPU(arch.l1_tsc_offset, VMLAT_LAYOUT_EXIT_TSC),
	VMLAT_VCPU(VMLAT_KVM_L1_TSC_RATIO, VMLAT_LAYOUT_EXIT_TSC),
	VMLAT_VCPU(arch.last_guest_tsc, VMLAT_LAYOUT_EXIT_TSC),
	VMLAT_VCPU(vcpu_id, VMLAT_LAYOUT_IRQ),
	VMLAT_VCPU(arch.apic, VMLAT_LAYOUT_LAPIC),
	VMLAT_VCPU(pid, VMLAT_LAYOUT_LAPIC),
	VMLAT_MEMBER("kvm_lapic", struct vmlat_kvm_lapic, lapic_timer.timer,
		     VMLAT_LAYOUT_LAPIC),
	VMLAT_MEMBER("kvm_lapic", struct vmlat_kvm_lapic, vcpu,
		     VMLAT_LAYOUT_LAPIC),
	VMLAT_MEMBER("kvm_lapic", struct vmlat_kvm_lapic,
		     lapic_timer.expired_tscdeadline, VMLAT_LAYOUT_DEADLINE),
	VMLAT_MEMBER("kvm_lapic", struct vmlat_kvm_lapic, regs,
		     VMLAT_LAYOUT_IRR),
	VMLAT_VCPU(halt_poll_ns, VMLAT_LAYOUT_HALT),
	VMLAT_VCPU(arch.msr_kvm_poll_control, VMLAT_LAYOUT_HALT),
};

/* kvm_amd's: the mirror of struct vcpu_svm, and the VMCB fields read. */
static struct vmlat_layout_member vmlat_svm_members[] = {
	VMLAT_MEMBER("vcpu_svm", struct vmlat_vcpu_svm, vcpu,
		     VMLAT_LAYOUT_SVM_VMCB),
	VMLAT_MEMBER("vcpu_svm", struct vmlat_vcpu_svm, vmcb,
		     VMLAT_LAYOUT_SVM_VMCB),
	VMLAT_MEMBER("vmcb", struct vmcb, control.exit_code,
		     VMLAT_LAYOUT_SVM_EXIT),
	VMLAT_MEMBER("vmcb", struct vmcb, save.cr3, VMLAT_LAYOUT_SVM_CR3),
	/* also the user/kernel test of guest address spaces */
	VMLAT_MEMBER("vmcb", struct vmcb, save.cpl,
		     VMLAT_LAYOUT_SVM_CPL | VMLAT_LAYOUT_SVM_CR3),
	VMLAT_MEMBER("vmcb", struct vmcb, save.rax, VMLAT_LAYOUT_SVM_RAX),
};

static const char *const vmlat_layout_group_names[VMLAT_LAYOUT_NR_GROUPS] = {
	"vcpu", "guest_cr3", "regs", "loaded", "exit_tsc",
	"svm_vmcb", "svm_exit", "svm_cr3", "svm_cpl", "svm_rax",
	"irq", "lapic", "halt", "lapic_deadline", "irr",
};

/* What a refused group turns off, for the log. */
static const char *const vmlat_layout_group_effects[VMLAT_LAYOUT_NR_GROUPS] = {
	"KVM hooks detached",
	"guest address spaces off",
	"clock sync refused",
	"clock sync refused, exit time from the TSC off",
	"exit time from the TSC off",
	"SVM exit reasons undecoded, guest address spaces off, clock sync refused",
	"SVM exit reasons undecoded",
	"guest address spaces off",
	"clock sync refused",
	"L2 clock-sync calls not told apart",
	"interrupt delivery off",
	"LAPIC timer interrupts timed from their acceptance, as other",
	"halt-polling off",
	"VMX preemption-timer interrupts timed from their VM exit",
	"interrupts not injected in 16 VM entries counted lost",
};

/**
 * struct vmlat_layout_state - what one source's BTF said (vmlat_layout_lock)
 * @name:	the module whose BTF it is
 * @tab:	the members it confirms
 * @nr:		entries in @tab
 * @mask:	the groups of its members
 * @state:	"unchecked", "confirmed", "unconfirmed" or "differ"
 * @confirmed:	members confirmed
 * @refused:	groups refused
 * @why:	the first member that differs, or why BTF was not read
 */
struct vmlat_layout_state {
	const char *name;
	struct vmlat_layout_member *tab;
	u32 nr;
	u32 mask;
	const char *state;
	u32 confirmed;
	u32 refused;
	char why[VMLAT_DETAIL_LEN];
};

static struct vmlat_layout_state vmlat_layout_states[VMLAT_LAYOUT_NR_SRC] = {
	[VMLAT_LAYOUT_KVM] = {
		.name = "kvm",
		.tab = vmlat_kvm_members,
		.nr = ARRAY_SIZE(vmlat_kvm_members),
		.mask = VMLAT_LAYOUT_VCPU | VMLAT_LAYOUT_GUEST_CR3 |
			VMLAT_LAYOUT_REGS | VMLAT_LAYOUT_LOADED |
			VMLAT_LAYOUT_EXIT_TSC | VMLAT_LAYOUT_IRQ |
			VMLAT_LAYOUT_LAPIC | VMLAT_LAYOUT_HALT |
			VMLAT_LAYOUT_DEADLINE | VMLAT_LAYOUT_IRR,
		.state = "unchecked",
	},
	[VMLAT_LAYOUT_KVM_AMD] = {
		.name = "kvm_amd",
		.tab = vmlat_svm_members,
		.nr = ARRAY_SIZE(vmlat_svm_members),
		.mask = VMLAT_LAYOUT_SVM_VMCB | VMLAT_LAYOUT_SVM_EXIT |
			VMLAT_LAYOUT_SVM_CR3 | VMLAT_LAYOUT_SVM_CPL |
			VMLAT_LAYOUT_SVM_RAX,
		.state = "unchecked",
	},
};

static DEFINE_MUTEX(vmlat_layout_lock);

/* Set the build's bit offset of member @path of @tab (@nr entries). */
static void vmlat_layout_place(struct vmlat_layout_member *tab, u32 nr,
			       const char *path, u32 bit_off)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		if (!strcmp(tab[i].path, path))
			tab[i].bit_off = bit_off;
	}
}

/*
 * What the tables cannot say at compile time: the bit of root_role.direct
 * (C has no offsetof() for a bitfield), and the test build's layout-skew
 * (test_build.h): the VMCB's exit code 8 bytes further than it is, which
 * the check must refuse.
 */
static void vmlat_layout_fill(void)
{
#if VMLAT_KVM_MMU_ROOT_ROLE
	union kvm_mmu_page_role role = { .word = 0 };

	role.direct = 1;
	vmlat_layout_place(vmlat_kvm_members, ARRAY_SIZE(vmlat_kvm_members),
			   "root_role.direct",
			   8 * offsetof(struct kvm_mmu, root_role) +
			   __ffs(role.word));
#endif
	if (vmlat_test_case == VMLAT_TEST_LAYOUT_SKEW)
		vmlat_layout_place(vmlat_svm_members,
				   ARRAY_SIZE(vmlat_svm_members),
				   "control.exit_code",
				   8 * offsetof(struct vmcb, control.exit_code) +
				   64);
}

/* Append the names of @groups ("svm_exit,svm_cr3") or their effects. */
static void vmlat_layout_groups(char *buf, size_t size, u32 groups,
				const char *const *names, const char *sep)
{
	size_t len = 0;
	int g;

	buf[0] = '\0';
	for (g = 0; g < VMLAT_LAYOUT_NR_GROUPS; g++) {
		if (!(groups & BIT(g)) || len >= size)
			continue;
		len += scnprintf(buf + len, size - len, "%s%s",
				 len ? sep : "", names[g]);
	}
	if (!len)
		strscpy(buf, "none", size);
}

static void vmlat_layout_set_refused(struct vmlat_layout_state *st,
				     u32 refused)
{
	st->refused = refused;
	WRITE_ONCE(vmlat_layout_refused,
		   (READ_ONCE(vmlat_layout_refused) & ~st->mask) | refused);
}

/**
 * vmlat_layout_check() - confirm @src's members against the running BTF
 * @src:	whose members
 * @btf:	BTF of that module (with vmlinux's as base); NULL if there is
 *		none, the members stay unconfirmed and are read as before
 * @unconfirmed: why @btf is NULL
 * @why:	if not NULL, set to the first member that differs (for the
 *		hooks' detail column), "" if none
 * @size:	size of @why
 *
 * Logs one line if a member differs.
 *
 * Context: process context, may sleep; before any probe can read @src's
 * members (kvm's hooks detached, kvm_amd not initialised yet).
 * Return: the groups refused.
 */
u32 vmlat_layout_check(enum vmlat_layout_src src, const struct vmlat_btf *btf,
		       const char *unconfirmed, char *why, size_t size)
{
	struct vmlat_layout_state *st = &vmlat_layout_states[src];
	struct vmlat_layout_result res;
	char names[96], effects[256];
	u32 refused;

	if (why && size)
		why[0] = '\0';
	mutex_lock(&vmlat_layout_lock);
	if (!btf) {
		st->state = "unconfirmed";
		st->confirmed = 0;
		strscpy(st->why, unconfirmed, sizeof(st->why));
		vmlat_layout_set_refused(st, 0);
		goto out;
	}
	vmlat_layout_fill();
	vmlat_btf_check_layout(btf, st->tab, st->nr, &res);
	st->confirmed = res.confirmed;
	vmlat_layout_set_refused(st, res.refused);
	if (res.differ) {
		st->state = "differ";
		strscpy(st->why, res.why, sizeof(st->why));
		vmlat_layout_groups(names, sizeof(names), res.refused,
				    vmlat_layout_group_names, ",");
		vmlat_layout_groups(effects, sizeof(effects), res.refused,
				    vmlat_layout_group_effects, "; ");
		pr_warn("%s: %u of %u members differ from this build's headers (first %s): refused %s: %s\n",
			st->name, res.differ, st->nr, res.why, names, effects);
		if (why && size)
			snprintf(why, size, "layout: %s", res.why);
	} else if (res.unconfirmed) {
		st->state = "unconfirmed";
		snprintf(st->why, sizeof(st->why), "%u members' structs not in BTF",
			 res.unconfirmed);
	} else {
		st->state = "confirmed";
		st->why[0] = '\0';
	}
out:
	refused = st->refused;
	mutex_unlock(&vmlat_layout_lock);
	return refused;
}

/**
 * vmlat_layout_forget() - @src's module went away
 * @src:	whose members
 *
 * Context: process context, may sleep; no probe reads @src's members.
 */
void vmlat_layout_forget(enum vmlat_layout_src src)
{
	struct vmlat_layout_state *st = &vmlat_layout_states[src];

	mutex_lock(&vmlat_layout_lock);
	st->state = "unchecked";
	st->confirmed = 0;
	st->why[0] = '\0';
	vmlat_layout_set_refused(st, 0);
	mutex_unlock(&vmlat_layout_lock);
}

/**
 * vmlat_layout_show() - the status line
 * @m:		the status file
 *
 * "# layout: kvm confirmed 25/25 kvm_amd confirmed 6/6 refused none",
 * then for each module whose BTF differs or was not read, "; <module>:
 * <why>".
 *
 * Context: process context, may sleep.
 */
void vmlat_layout_show(struct seq_file *m)
{
	const struct vmlat_layout_state *st;
	char names[96];
	int src;

	mutex_lock(&vmlat_layout_lock);
	seq_puts(m, "# layout:");
	for (src = 0; src < VMLAT_LAYOUT_NR_SRC; src++) {
		st = &vmlat_layout_states[src];
		seq_printf(m, " %s %s %u/%u", st->name, st->state,
			   st->confirmed, st->nr);
	}
	vmlat_layout_groups(names, sizeof(names),
			    READ_ONCE(vmlat_layout_refused),
			    vmlat_layout_group_names, ",");
	seq_printf(m, " refused %s", names);
	for (src = 0; src < VMLAT_LAYOUT_NR_SRC; src++) {
		st = &vmlat_layout_states[src];
		if (st->why[0])
			seq_printf(m, "; %s: %s", st->name, st->why);
	}
	seq_putc(m, '\n');
	mutex_unlock(&vmlat_layout_lock);
}

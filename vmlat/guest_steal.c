// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's own steal: the host's answer to a guest's steal call
 * (hypercall version 4), and the knob that allows it.
 *
 * guest_steal (a knob: module parameter and debugfs file, knobs.c):
 *   off	no VM is answered (the default): every call is told DENIED
 *   on		every VM is answered
 *   PID,...	only the VMs whose VMM process has one of these pids (at
 *		most VMLAT_GUEST_STEAL_MAX_PIDS)
 *
 * The setting is an immutable block swapped under RCU: the probe reads
 * one whole setting, old or new, never a list half written.
 *
 * An answer is one page of four values (vmlat_hypercall.h), made from
 * the calling vCPU's own record or its own VM's; of the VMs and host
 * tasks that took the VM's time, totals only. The call exits of the
 * guest are vmlat's traffic, kept out of its exit statistics as the
 * sync calls' are (events.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/kvm_host.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/threads.h>

#include "clock.h"
#include "guest_steal.h"
#include "kvm_x86.h"
#include "records.h"
#include "view.h"

/**
 * struct vmlat_steal_cfg - who may ask
 * @all:	every VM
 * @nr:		else the VMs of @pid[0 .. @nr - 1] (0: none)
 * @pid:	VMM pids
 * @rcu:	to free it after a change
 */
struct vmlat_steal_cfg {
	bool all;
	unsigned int nr;
	pid_t pid[VMLAT_GUEST_STEAL_MAX_PIDS];
	struct rcu_head rcu;
};

/* NULL: off. Written under knobs.c's mutex (the knob's set). */
static struct vmlat_steal_cfg __rcu *vmlat_steal_cfg;

static int vmlat_steal_parse(char *s, struct vmlat_steal_cfg *c)
{
	char *tok;
	int pid;

	if (!strcmp(s, "on")) {
		c->all = true;
		return 0;
	}
	while ((tok = strsep(&s, ","))) {
		if (c->nr == VMLAT_GUEST_STEAL_MAX_PIDS ||
		    kstrtoint(strim(tok), 10, &pid) || pid <= 0 ||
		    pid > PID_MAX_LIMIT)
			return -EINVAL;
		c->pid[c->nr++] = pid;
	}
	return 0;
}

/**
 * vmlat_guest_steal_set() - the knob's new value
 * @s:		"off", "on", or a comma-separated list of VMM pids, its
 *		blanks trimmed (knobs.c's knob_trim()), written over while
 *		parsed; NULL: too long
 *
 * Context: process context, knobs.c's mutex held.
 * Return: 0, or -EINVAL (with a message) or -ENOMEM: nothing changed.
 */
int vmlat_guest_steal_set(char *s)
{
	struct vmlat_steal_cfg *c = NULL, *old;

	if (!s)
		goto bad;
	if (strcmp(s, "off")) {
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		if (!c)
			return -ENOMEM;
		if (vmlat_steal_parse(s, c) || (!c->all && !c->nr)) {
			kfree(c);
			goto bad;
		}
	}
	old = rcu_replace_pointer(vmlat_steal_cfg, c, true);
	if (old)
		kfree_rcu(old, rcu);
	return 0;
bad:
	pr_warn_ratelimited("guest_steal: write off, on, or the pids of up to %d VMM processes, comma-separated\n",
			    VMLAT_GUEST_STEAL_MAX_PIDS);
	return -EINVAL;
}

/**
 * vmlat_guest_steal_show() - the knob's value and a newline
 * @buf:	where
 * @size:	its size
 *
 * Return: the length.
 */
int vmlat_guest_steal_show(char *buf, size_t size)
{
	const struct vmlat_steal_cfg *c;
	unsigned int i;
	int n = 0;

	rcu_read_lock();
	c = rcu_dereference(vmlat_steal_cfg);
	if (!c)
		n = scnprintf(buf, size, "off");
	else if (c->all)
		n = scnprintf(buf, size, "on");
	else
		for (i = 0; i < c->nr; i++)
			n += scnprintf(buf + n, size - n, "%s%d", i ? "," : "",
				       c->pid[i]);
	rcu_read_unlock();
	n += scnprintf(buf + n, size - n, "\n");
	return n;
}

/**
 * vmlat_guest_steal_exit() - free the setting
 *
 * The probes are detached; a read of the module parameter may still run
 * (until its file is removed, after vmlat_exit()): it reads "off" from
 * now on, or the setting, freed after its grace period.
 *
 * Context: module unload or a failed load, knobs.c refusing writes.
 */
void vmlat_guest_steal_exit(void)
{
	struct vmlat_steal_cfg *old;

	old = rcu_replace_pointer(vmlat_steal_cfg, NULL, true);
	if (old)
		kfree_rcu(old, rcu);
}

static bool vmlat_steal_allowed(const struct vmlat_vm *vm)
{
	const struct vmlat_steal_cfg *c;
	bool ok = false;
	unsigned int i;

	rcu_read_lock_sched();
	c = rcu_dereference_sched(vmlat_steal_cfg);
	if (c) {
		ok = c->all;
		for (i = 0; i < c->nr && !ok; i++)
			ok = c->pid[i] == vm->pid;
	}
	rcu_read_unlock_sched();
	return ok;
}

/* The VM's takers of its type-1 steal, as totals. */
static noinline void vmlat_steal_takers(struct vmlat_vm *vm,
					struct vmlat_steal_src *src)
{
	struct vmlat_view_stolen st;
	unsigned int i;

	vmlat_view_stolen(vm, &st);
	src->host_ns = st.host_ns;
	src->vms_ns = st.other_ns;
	for (i = 0; i < st.nr; i++) {
		if (st.by[i].id == vm->id)
			src->own_ns += st.by[i].ns;
		else
			src->vms_ns += st.by[i].ns;
	}
}

/* The VM's exit reasons that took the most handling time. */
static noinline void vmlat_steal_exits(struct vmlat_vm *vm,
				       struct vmlat_steal_src *src)
{
	struct vmlat_exit_row row;
	struct vmlat_steal_exit x;
	int slot;

	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		vmlat_exit_stats_read(&vm->exits, slot, &row);
		x.isa = vmlat_exit_slot_isa(slot);
		x.code = (u32)vmlat_exit_slot_code(slot);
		x.count = row.count;
		x.total_ns = row.total_ns;
		vmlat_steal_top_add(src, &x);
	}
}

/**
 * vmlat_guest_steal_call() - a steal call of @vc's guest
 * @vc:		the calling vCPU's record; current is its thread
 * @vcpu:	its vCPU, loaded by current; NULL when its registers cannot
 *		be written (then nothing is answered)
 * @page:	the page asked for (RCX)
 * @cpl:	the privilege level of the call; < 0: unknown
 *
 * Context: kvm_hypercall tracepoint, preemption off.
 * Return: the reply for the guest's RBX, or 0 for none.
 */
u64 vmlat_guest_steal_call(struct vmlat_vcpu *vc, struct kvm_vcpu *vcpu,
			   u64 page, int cpl)
{
	struct vmlat_vm *vm = vc->vm;
	struct vmlat_steal_src src = { .vcpu = vc->idx };
	struct vmlat_view_states st;
	u64 reply, out[4];

	reply = vmlat_vm_steal_gate(&vm->sync, page, vcpu ? cpl : -EOPNOTSUPP,
				    vmlat_steal_allowed(vm),
				    ktime_get_mono_fast_ns());
	if (reply != VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0))
		return reply;
	switch (vmlat_steal_page_part(page)) {
	case VMLAT_STEAL_PART_VCPU:
		vmlat_view_vcpu_states(vc, vmlat_now_ns(), &st);
		memcpy(src.time_ns, st.time_ns, sizeof(src.time_ns));
		src.observed_ns = st.observed_ns;
		src.exits = st.exits;
		break;
	case VMLAT_STEAL_PART_TAKERS:
		vmlat_steal_takers(vm, &src);
		break;
	case VMLAT_STEAL_PART_EXITS:
		vmlat_steal_exits(vm, &src);
		break;
	case VMLAT_STEAL_PART_NONE:
		break;
	}
	vmlat_steal_page(&src, page, out);
	vmlat_kvm_set_page(vcpu, out);
	return reply;
}

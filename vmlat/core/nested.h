/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The nested (L2) state machine of a vCPU (pure logic).
 *
 * When a guest is itself a hypervisor (L1) running its own guests (L2),
 * every L2 exit traps to the host (L0) first: L0 handles it itself, or
 * reflects it to L1 (injects a VM exit into L1, which handles it and
 * resumes L2). From the host's kvm_entry and kvm_exit of an L1 vCPU
 * thread this tells L1 from L2 execution, by the ground truth KVM holds:
 * is_guest_mode() of the vCPU in the kvm_entry and kvm_exit probes.
 *
 *   l2 guest	  kvm_entry into L2 .. kvm_exit
 *   l1 guest	  kvm_entry into L1 .. kvm_exit
 *   L2 exit	  kvm_exit of L2 .. next kvm_entry into L2: "handled by L0"
 *		  if no L1 entry came between, else "reflected to L1"
 *   wake-up	  a HLT exit at a level .. the next entry into that level,
 *		  counted from the host wake-up of the vCPU thread if it
 *		  slept meanwhile ([P1] §2.9: ≈300 µs for L2 vs 73 µs for L1)
 *   L2 sync	  an L2 exit of slot VMLAT_SLOT_L2_SYNC .. the next entry
 *		  into L2: the L2 guest's clock-sync hypercall to its L1
 *		  (vmlat_guest.ko syncing L2 to L1, [P1] §2.3), vmlat's own
 *		  traffic: counted apart from the L2 exits above
 *
 * Next to it runs the [P1] heuristic (Algorithms 4-7), adapted to host
 * events only, whose verdict at each kvm_entry is compared with the ground
 * truth: an L1 exit for VMRUN/VMLAUNCH/VMRESUME (L1's own VM entry, which
 * [P1] read from L1's trace) makes the thread WAITING; kvm_mmu_get_page on
 * a WAITING thread makes it READY, "the next VM entry is for L2";
 * kvm_nested_vmexit_inject ends READY. Modern KVM's TDP MMU no longer
 * creates shadow pages at each L2 entry, which the heuristic relied on:
 * the agreement figure says how much of it still holds.
 *
 * Only the vCPU's own thread feeds it (every event here runs in it).
 *
 * Dormant until the vCPU first runs L2 or executes VMRUN (VMLAUNCH,
 * VMRESUME), which makes it active: before, at every exit round trip, it
 * takes only the HLT exits and the entries after them (the L1 wake-ups,
 * which every VM has) and keeps no L1 time, a few instructions at each
 * kvm_exit and kvm_entry of the VMs that never run L2 (most). Its L1 time
 * then starts from the vCPU's guest time so far, which the caller gives
 * (@guest_ns): the same intervals, kvm_entry to the exit, that an active
 * vCPU adds up itself, where kvm_exit is prompt. (Where it is traced late,
 * exit_late.h, the vCPU's guest time ends at the exit itself, the nested
 * time at kvm_exit: the L1 time of the intervals before the vCPU became
 * active is shorter by their late part.)
 */
#ifndef _VMLAT_NESTED_H
#define _VMLAT_NESTED_H

#include "doc_names.h"	/* enum vmlat_nested_hist: its histograms */
#include "exit_codes.h"
#include "pure.h"

enum vmlat_level {
	VMLAT_LEVEL_NONE,	/* no entry seen yet */
	VMLAT_LEVEL_L1,
	VMLAT_LEVEL_L2,
};

/* [P1]'s lists: which one the thread is on. */
enum vmlat_heur_state {
	VMLAT_HEUR_NORMAL,
	VMLAT_HEUR_WAITING,	/* L1 entered L2; the MMU event is awaited */
	VMLAT_HEUR_READY,		/* its next L0 entries run L2 */
};

extern const char *const vmlat_nested_hist_names[VMLAT_NR_NESTED_HISTS];

/*
 * The slot the caller gives an L2 exit that is a clock-sync hypercall of
 * vmlat's (its number, from the L2 kernel), and the exit of L1's VMRUN
 * (VMLAUNCH, VMRESUME) that resumes L2 after L1 handled it: the two L0
 * exits of one L2 -> L1 sync exchange, vmlat's own traffic. Below every
 * slot of exit_codes.h and the clock-sync slot of the host's own guests.
 */
#define VMLAT_SLOT_L2_SYNC	(-3)

/**
 * struct vmlat_nested_done - what a kvm_entry completed
 * @handled:	an L2 exit was classified: VMLAT_LEVEL_L1 (reflected to
 *		L1, at the L1 entry after it) or VMLAT_LEVEL_L2 (handled by
 *		L0, at the L2 entry after it); 0: none
 * @slot:	its exit reason slot (VMLAT_SLOT_UNDECODED: unknown)
 * @nr:		intervals completed, in @iv
 * @iv:		each one's histogram (enum vmlat_nested_hist) and length;
 *		for a round trip, @iv_slot is the exit's reason slot
 */
struct vmlat_nested_done {
	u8 handled;
	int slot;
	unsigned int nr;
	struct {
		u8 hist;
		int slot;
		u64 ns;
	} iv[2];
};

/**
 * struct vmlat_nested - nested accounting of one vCPU
 * @l1_ns:	time in L1 guest mode (every vCPU has some), from when the
 *		vCPU became active on, which starts it at its guest time
 * @l2_ns:	time in L2 guest mode
 * @l2_exit_l0_ns: L2 exit round trips handled by L0 (the vCPU's
 *		preemptions and sleeps inside them included)
 * @l2_exit_l1_ns: L2 exit round trips reflected to L1 (L1's time in
 *		them included)
 * @l2_entries:	L0 entries into L2
 * @l1_to_l2:	L0 entries into L2 right after L1 ran (L1's VMRUN,
 *		VMLAUNCH or VMRESUME taking effect)
 * @l2_exits_l0: L2 exits handled by L0 (classified)
 * @l2_exits_l1: L2 exits reflected to L1 (classified)
 * @l2_sync_calls: L2 clock-sync hypercalls (VMLAT_SLOT_L2_SYNC), not in
 *		the L2 exits above
 * @l2_sync_ns:	their round trips, from the L2 exit to the next entry into
 *		L2 (L1's handling included)
 * @heur:		kvm_entry verdicts of the [P1] heuristic:
 *		[truth is L2][heuristic says L2]
 * @entry_ns:	the last kvm_entry
 * @l2_exit_ns:	the open L2 exit's kvm_exit
 * @l1_halt_ns:	the pending L1 HLT exit
 * @l2_halt_ns:	the pending L2 HLT exit
 * @l2_exit_slot: the open L2 exit's reason slot
 * @level:	the level the last kvm_entry entered
 * @heur_state:	enum vmlat_heur_state
 * @active:	the vCPU ran L2 or executed VMRUN (an L1 hypervisor); until
 *		then the machine is dormant (above) and keeps none of
 *		@l1_ns, @entry_ns, @level and @in_guest
 * @in_guest:	between a kvm_entry and its kvm_exit
 * @l2_exit_open: an L2 exit awaits the next L2 entry
 * @bounced:	... and L1 ran since (it was reflected)
 * @l1_halted:	an L1 HLT exit awaits the next L1 entry
 * @l2_halted:	an L2 HLT exit awaits the next L2 entry
 * @sync_resumed: an L1 exit was given VMLAT_SLOT_L2_SYNC since the open
 *		L2 exit (vmlat_nested_resumes_sync(): at most one per call)
 *
 * The fields up to @heur are statistics (vmlat_nested_reset() zeroes them),
 * the others are state.
 */
struct vmlat_nested {
	u64 l1_ns;
	u64 l2_ns;
	u64 l2_exit_l0_ns;
	u64 l2_exit_l1_ns;
	u64 l2_entries;
	u64 l1_to_l2;
	u64 l2_exits_l0;
	u64 l2_exits_l1;
	u64 l2_sync_calls;
	u64 l2_sync_ns;
	u64 heur[2][2];
	/* state */
	u64 entry_ns;
	u64 l2_exit_ns;
	u64 l1_halt_ns;
	u64 l2_halt_ns;
	int l2_exit_slot;
	u8 level;
	u8 heur_state;
	bool active;
	bool in_guest;
	bool l2_exit_open;
	bool bounced;
	bool l1_halted;
	bool l2_halted;
	bool sync_resumed;
};

void vmlat_nested_init(struct vmlat_nested *n);
void vmlat_nested_reset(struct vmlat_nested *n);
void vmlat_nested_snapshot(struct vmlat_nested *n, u64 now_ns);

void vmlat_nested_exit_slow(struct vmlat_nested *n, bool l2, int slot,
			    bool hlt, bool vmenter, u64 now_ns, u64 guest_ns);
bool vmlat_nested_entry_slow(struct vmlat_nested *n, bool l2, u64 woken_ns,
			     u64 now_ns, struct vmlat_nested_done *done,
			     u64 guest_ns);

/* The guest time from the last kvm_entry to @now_ns, at its level. */
static inline void vmlat_nested_guest_time(struct vmlat_nested *n,
					   u64 now_ns)
{
	u64 d = vmlat_span(n->entry_ns, now_ns);

	if (n->level == VMLAT_LEVEL_L2)
		n->l2_ns += d;
	else
		n->l1_ns += d;
}

/*
 * The two events of every exit round trip of every vCPU, nested or not,
 * inline: a vCPU that never ran L2 (dormant) pays a few instructions for
 * them.
 */

/* Whether a kvm_exit (of L2 @l2, HLT @hlt, VMRUN @vmenter) finds @n dormant. */
static inline bool vmlat_nested_skips_exit(const struct vmlat_nested *n,
					   bool l2, bool hlt, bool vmenter)
{
	return !n->active && !l2 && !hlt && !vmenter;
}

/* Whether a kvm_entry (into L2 @l2) finds @n dormant, no wake-up due. */
static inline bool vmlat_nested_skips_entry(const struct vmlat_nested *n,
					    bool l2)
{
	return !n->active && !l2 && !n->l1_halted;
}

/**
 * vmlat_nested_exit() - kvm_exit of the vCPU
 * @n:		its nested accounting
 * @l2:		it ran L2 (is_guest_mode() in the probe)
 * @slot:	the exit reason slot, or VMLAT_SLOT_UNDECODED
 * @hlt:	the exit is a HLT
 * @vmenter:	the exit is VMRUN, VMLAUNCH or VMRESUME
 * @now_ns:	time of the exit
 * @guest_ns:	the vCPU's guest time so far, this exit's interval included
 *		(read only when it makes the vCPU active)
 */
static inline void vmlat_nested_exit(struct vmlat_nested *n, bool l2,
				     int slot, bool hlt, bool vmenter,
				     u64 now_ns, u64 guest_ns)
{
	if (vmlat_nested_skips_exit(n, l2, hlt, vmenter))
		return;
	if (n->in_guest) {
		u64 d = vmlat_span(n->entry_ns, now_ns);

		/* KVM's guest mode decides, should an entry have been missed */
		if (l2)
			n->l2_ns += d;
		else
			n->l1_ns += d;
		n->in_guest = false;
	}
	if (l2 || hlt || vmenter)
		vmlat_nested_exit_slow(n, l2, slot, hlt, vmenter, now_ns,
				       guest_ns);
}

/**
 * vmlat_nested_entry() - kvm_entry of the vCPU
 * @n:		its nested accounting
 * @l2:		it enters L2 (is_guest_mode() in the probe)
 * @woken_ns:	when its thread was last woken up by the host
 * @now_ns:	time of the entry
 * @done:	set to the exit classified and the intervals completed, if
 *		it returns true (else left as it was)
 * @guest_ns:	the vCPU's guest time so far (read only when the entry
 *		makes the vCPU active)
 *
 * Return: whether the entry completed something to count in @done.
 */
static inline bool vmlat_nested_entry(struct vmlat_nested *n, bool l2,
				      u64 woken_ns, u64 now_ns,
				      struct vmlat_nested_done *done,
				      u64 guest_ns)
{
	bool ret;

	if (vmlat_nested_skips_entry(n, l2))
		return false;
	if (!n->active && !l2)	/* dormant: an L1 wake-up */
		return vmlat_nested_entry_slow(n, false, woken_ns, now_ns,
					       done, guest_ns);
	/* A re-entry without kvm_exit (6.1's fastpath): the time counts. */
	if (n->in_guest)
		vmlat_nested_guest_time(n, now_ns);
	/* Active, or entering L2: the slow part always has its say. */
	ret = vmlat_nested_entry_slow(n, l2, woken_ns, now_ns, done, guest_ns);
	n->level = l2 ? VMLAT_LEVEL_L2 : VMLAT_LEVEL_L1;
	n->in_guest = true;
	n->entry_ns = now_ns;
	return ret;
}

/**
 * vmlat_nested_resumes_sync() - whether an L1 exit resumes an L2 sync call
 * @n:		the vCPU's nested accounting, at an L1 exit for L1's VMRUN
 *		(VMLAUNCH, VMRESUME)
 *
 * Return: true if the open L2 exit is a sync call (VMLAT_SLOT_L2_SYNC)
 * that L1 handled and no VM entry of L1's was taken for it yet: this one
 * is the second half of it. (One that fails, and L1 retries, leaves the
 * retries to L1's own exits.)
 */
static inline bool vmlat_nested_resumes_sync(const struct vmlat_nested *n)
{
	return n->l2_exit_open && n->bounced && !n->sync_resumed &&
	       n->l2_exit_slot == VMLAT_SLOT_L2_SYNC;
}

/* kvm_mmu_get_page on the vCPU's thread ([P1] Algorithm 6). */
static inline void vmlat_nested_mmu_page(struct vmlat_nested *n)
{
	if (n->heur_state == VMLAT_HEUR_WAITING)
		n->heur_state = VMLAT_HEUR_READY;
}

/* kvm_nested_vmexit_inject on the vCPU's thread ([P1] Algorithm 7). */
static inline void vmlat_nested_inject(struct vmlat_nested *n)
{
	n->heur_state = VMLAT_HEUR_NORMAL;
}

/* How many kvm_entry verdicts of the heuristic agreed with the truth. */
static inline u64 vmlat_nested_heur_agree(const struct vmlat_nested *n)
{
	return n->heur[0][0] + n->heur[1][1];
}

static inline u64 vmlat_nested_heur_judged(const struct vmlat_nested *n)
{
	return n->heur[0][0] + n->heur[0][1] + n->heur[1][0] + n->heur[1][1];
}

#endif /* _VMLAT_NESTED_H */

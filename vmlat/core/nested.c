// SPDX-License-Identifier: GPL-2.0
/*
 * The nested (L2) state machine of a vCPU: see nested.h.
 */
#include "nested.h"

const char *const vmlat_nested_hist_names[VMLAT_NR_NESTED_HISTS] = {
	VMLAT_NESTED_HISTS(VMLAT_NAME_, VMLAT_COMMA_)
};

/**
 * vmlat_nested_init() - a vCPU seen for the first time
 * @n:	its nested accounting
 */
void vmlat_nested_init(struct vmlat_nested *n)
{
	memset(n, 0, sizeof(*n));
	n->l2_exit_slot = VMLAT_SLOT_UNDECODED;
}

/**
 * vmlat_nested_reset() - zero the statistics, keep the state
 * @n:	the vCPU's nested accounting
 *
 * An L2 exit or a halt in progress completes later whole.
 */
void vmlat_nested_reset(struct vmlat_nested *n)
{
	n->l1_ns = 0;
	n->l2_ns = 0;
	n->l2_exit_l0_ns = 0;
	n->l2_exit_l1_ns = 0;
	n->l2_entries = 0;
	n->l1_to_l2 = 0;
	n->l2_exits_l0 = 0;
	n->l2_exits_l1 = 0;
	n->l2_sync_calls = 0;
	n->l2_sync_ns = 0;
	memset(n->heur, 0, sizeof(n->heur));
}

/*
 * A dormant vCPU becomes active (nested.h): its L1 time is its guest time
 * so far, @guest_ns, whose intervals it did not add up itself; @level:
 * the level the last entry entered, L1 where it entered before.
 */
static void wake(struct vmlat_nested *n, u64 guest_ns, u8 level)
{
	n->active = true;
	n->l1_ns = guest_ns;
	n->level = level;
}

static u64 later(u64 a, u64 b)
{
	return a > b ? a : b;
}

static void add_iv(struct vmlat_nested_done *done, u8 hist, int slot, u64 ns)
{
	if (done->nr < ARRAY_SIZE(done->iv)) {
		done->iv[done->nr].hist = hist;
		done->iv[done->nr].slot = slot;
		done->iv[done->nr].ns = ns;
		done->nr++;
	}
}

/**
 * vmlat_nested_exit_slow() - the part of vmlat_nested_exit() for exits of
 * L2, HLT and VMRUN (VMLAUNCH, VMRESUME) exits
 * @n:		the vCPU's nested accounting
 * @l2:		it ran L2
 * @slot:	the exit reason slot, or VMLAT_SLOT_UNDECODED
 * @hlt:	the exit is a HLT
 * @vmenter:	the exit is VMRUN, VMLAUNCH or VMRESUME
 * @now_ns:	time of the exit
 * @guest_ns:	as for vmlat_nested_exit()
 */
void vmlat_nested_exit_slow(struct vmlat_nested *n, bool l2, int slot,
			    bool hlt, bool vmenter, u64 now_ns, u64 guest_ns)
{
	/* By an exit of L2 only where its entry into L2 went unseen. */
	if (!n->active && (l2 || vmenter))
		wake(n, guest_ns, l2 ? VMLAT_LEVEL_L2 : VMLAT_LEVEL_L1);
	if (l2) {
		n->l2_exit_open = true;
		n->bounced = false;
		n->sync_resumed = false;
		n->l2_exit_ns = now_ns;
		n->l2_exit_slot = slot;
		if (hlt) {
			n->l2_halted = true;
			n->l2_halt_ns = now_ns;
		}
		return;
	}
	if (hlt) {
		n->l1_halted = true;
		n->l1_halt_ns = now_ns;
	}
	/* The one VM entry of L1's that resumes an L2 sync call: taken. */
	if (slot == VMLAT_SLOT_L2_SYNC)
		n->sync_resumed = true;
	/* L1 enters its guest: [P1] Algorithm 4, seen from L0. */
	if (vmenter)
		n->heur_state = VMLAT_HEUR_WAITING;
}

/* An entry into L2 after an L2 exit: the exit's round trip is done. */
static void l2_exit_done(struct vmlat_nested *n, u64 now_ns,
			 struct vmlat_nested_done *done)
{
	u64 d = vmlat_span(n->l2_exit_ns, now_ns);

	if (n->l2_exit_slot == VMLAT_SLOT_L2_SYNC) {
		/* Reflected or not: vmlat's traffic, not the L2's exits. */
		n->l2_sync_calls++;
		n->l2_sync_ns += d;
	} else if (n->bounced) {
		n->l2_exit_l1_ns += d;
		add_iv(done, VMLAT_NH_L2_EXIT_L1, n->l2_exit_slot, d);
	} else {
		n->l2_exits_l0++;
		n->l2_exit_l0_ns += d;
		done->handled = VMLAT_LEVEL_L2;
		done->slot = n->l2_exit_slot;
		add_iv(done, VMLAT_NH_L2_EXIT_L0, n->l2_exit_slot, d);
	}
	n->l2_exit_open = false;
}

/**
 * vmlat_nested_entry_slow() - the part of vmlat_nested_entry() for
 * entries into L2, of L1 hypervisors and after a HLT
 * @n:		the vCPU's nested accounting
 * @l2:		it enters L2
 * @woken_ns:	when its thread was last woken up by the host
 * @now_ns:	time of the entry
 * @done:	set to the exit classified and the intervals completed
 * @guest_ns:	as for vmlat_nested_entry()
 *
 * Context: called before @n's level and entry time are updated.
 * Return: whether @done holds anything.
 */
bool vmlat_nested_entry_slow(struct vmlat_nested *n, bool l2, u64 woken_ns,
			     u64 now_ns, struct vmlat_nested_done *done,
			     u64 guest_ns)
{
	done->handled = VMLAT_LEVEL_NONE;
	done->slot = VMLAT_SLOT_UNDECODED;
	done->nr = 0;
	if (l2 && !n->active)
		wake(n, guest_ns,
		     guest_ns ? VMLAT_LEVEL_L1 : VMLAT_LEVEL_NONE);
	if (n->active)
		n->heur[l2][n->heur_state == VMLAT_HEUR_READY]++;

	if (!l2) {
		if (n->l2_exit_open && !n->bounced) {
			n->bounced = true;
			/* A sync call counts at the entry into L2 it ends at. */
			if (n->l2_exit_slot != VMLAT_SLOT_L2_SYNC) {
				n->l2_exits_l1++;
				done->handled = VMLAT_LEVEL_L1;
				done->slot = n->l2_exit_slot;
			}
		}
		if (n->l1_halted) {
			add_iv(done, VMLAT_NH_WAKEUP_L1, VMLAT_SLOT_UNDECODED,
			       vmlat_span(later(n->l1_halt_ns, woken_ns), now_ns));
			n->l1_halted = false;
		}
		return done->handled || done->nr;
	}
	n->l2_entries++;
	if (n->level == VMLAT_LEVEL_L1)
		n->l1_to_l2++;
	if (n->l2_exit_open)
		l2_exit_done(n, now_ns, done);
	if (n->l2_halted) {
		add_iv(done, VMLAT_NH_WAKEUP_L2, VMLAT_SLOT_UNDECODED,
		       vmlat_span(later(n->l2_halt_ns, woken_ns), now_ns));
		n->l2_halted = false;
	}
	/* L1 cannot have halted without running again. */
	n->l1_halted = false;
	return done->handled || done->nr;
}

/**
 * vmlat_nested_snapshot() - count the guest time in progress
 * @n:		a copy of a vCPU's nested accounting, for a reader
 * @now_ns:	the time of the snapshot
 */
void vmlat_nested_snapshot(struct vmlat_nested *n, u64 now_ns)
{
	if (!n->in_guest)
		return;
	vmlat_nested_guest_time(n, now_ns);
	n->entry_ns = now_ns;
}

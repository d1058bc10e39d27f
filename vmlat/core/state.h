/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-vCPU state machine (pure logic).
 *
 * From host events only, after [P4] Algorithm 1 and [P0] Figure 5, with
 * what the host knows beyond them: exit handling in the kernel is told
 * apart from exit handling in the userspace VMM, and sleeping for a reason
 * other than a guest HLT is "blocked", not "idle".
 *
 *   guest      kvm_entry .. kvm_exit
 *   kernel     on CPU in KVM, handling an exit (halt-polling included)
 *   user       on CPU in the VMM: kvm_userspace_exit .. kvm_entry
 *   preempted  switched out while runnable
 *   wait       woken, runnable, not yet on a CPU (from the wake-up, or
 *              from the switch-out if the wake-up came before it)
 *   idle       switched out asleep after a HLT exit (the guest is idle)
 *   blocked    switched out asleep for any other reason
 *
 * Every nanosecond between a vCPU's first event and now is in exactly one
 * state, so the state times add up to the observed time.
 *
 * Where KVM traces kvm_exit late (6.1 SVM: after the host took the exit's
 * interrupt and could preempt the vCPU), the glue ends the guest time at
 * the exit itself with vmlat_acct_left_guest(): the vCPU is then in kernel
 * with its kvm_exit pending, which brings the exit's reason.
 */
#ifndef _VMLAT_STATE_H
#define _VMLAT_STATE_H

#include "aspace.h"
#include "doc_names.h"	/* enum vmlat_state */
#include "halt.h"
#include "nested.h"
#include "pure.h"

enum vmlat_event {
	VMLAT_EV_ENTRY,		/* kvm_entry */
	VMLAT_EV_EXIT,		/* kvm_exit */
	VMLAT_EV_USER_EXIT,	/* kvm_userspace_exit */
	VMLAT_EV_OUT_RUNNABLE,	/* sched_switch out, still runnable */
	VMLAT_EV_OUT_SLEEP,	/* sched_switch out, asleep */
	VMLAT_EV_WAKEUP,	/* sched_waking */
	VMLAT_EV_IN,		/* sched_switch in */
	VMLAT_EV_OUT_WOKEN,	/* sched_switch out asleep, already woken */
	VMLAT_NR_EVENTS
};

/* What an event completed, for the histograms. */
enum vmlat_done_kind {
	VMLAT_DONE_NONE,
	VMLAT_DONE_PREEMPT,	/* preempted .. back on CPU */
	VMLAT_DONE_WAIT,	/* woken .. on CPU */
	VMLAT_DONE_EXIT,	/* kvm_exit .. kvm_entry, net of off-CPU time */
};

struct vmlat_done {
	enum vmlat_done_kind kind;
	u64 ns;
};

/**
 * struct vmlat_vcpu_acct - time accounting of one vCPU
 * @first_ns:	time of the first event
 * @since_ns:	end of what is accounted in @time_ns
 * @entered_ns:	when the current state was entered
 * @time_ns:	time spent in each state, current one excluded
 * @enters:	times each state was entered
 * @exits:	number of kvm_exit events
 * @unexpected:	events that made no sense in the state they came in
 *		(e.g. vmlat attached mid-flight); counted, then resynced
 * @late_exits:	exits whose guest time ended before their kvm_exit
 *		(vmlat_acct_left_guest())
 * @late_switched: of these, the exits whose thread was switched out before
 *		their kvm_exit
 * @late_ns:	the time from those exits to their kvm_exit, moved from
 *		guest to the host's states
 * @exit_host_ns: on-CPU host time since the last kvm_exit (exit handling),
 *		or since the exit whose kvm_exit is pending
 * @left_ns:	when the guest left, while its kvm_exit is pending
 * @woken_ns:	the last wake-up that ended an idle or blocked sleep
 * @nested:	L1/L2 accounting, fed by the vCPU's thread (nested.h)
 * @as:		the guest address space it runs, fed by its thread at
 *		every exit (aspace.h); a reset restarts its stretch
 * @halt:	its halts and halt-polling (halt.h): its switch-outs asleep
 *		and its exits here, the rest by its thread (vmlat_halt_ended())
 * @reset_gen:	the reset the times count from (vmlat_acct_reset())
 * @state:	current state (enum vmlat_state)
 * @in_user:	when on CPU, runs in the VMM (after kvm_userspace_exit)
 * @halted:	the last exit was a HLT, and no kvm_entry since
 * @exit_pending: the guest left (vmlat_acct_left_guest()); its kvm_exit
 *		is to come
 * @ended:	the thread exited: the clock stopped at @since_ns
 * @stops:	@exit_pending and @ended, for the fast path's one test
 */
struct vmlat_vcpu_acct {
	u64 first_ns;
	u64 since_ns;
	u64 entered_ns;
	u64 time_ns[VMLAT_NR_STATES];
	u64 enters[VMLAT_NR_STATES];
	u64 exits;
	u64 unexpected;
	u64 late_exits;
	u64 late_switched;
	u64 late_ns;
	u64 exit_host_ns;
	u64 left_ns;
	u64 woken_ns;
	struct vmlat_nested nested;
	struct vmlat_as_cursor as;
	struct vmlat_halt halt;
	u32 reset_gen;
	u8 state;
	bool in_user;
	bool halted;
	union {
		struct {
			bool exit_pending;
			bool ended;
		};
		u16 stops;
	};
};

extern const char *const vmlat_state_names[VMLAT_NR_STATES];

/**
 * vmlat_acct_as_times() - state times as an address space's times
 * @time_ns:	a vCPU's time in each state
 * @t:		set to its guest, exit handling (kernel and user),
 *		preempted and wait times (aspace.h)
 */
static inline void vmlat_acct_as_times(const u64 time_ns[VMLAT_NR_STATES],
				       struct vmlat_as_times *t)
{
	t->ns[VMLAT_AS_GUEST] = time_ns[VMLAT_GUEST];
	t->ns[VMLAT_AS_EXIT] = time_ns[VMLAT_KERNEL] + time_ns[VMLAT_USER];
	t->ns[VMLAT_AS_PREEMPTED] = time_ns[VMLAT_PREEMPTED];
	t->ns[VMLAT_AS_WAIT] = time_ns[VMLAT_WAIT];
}

void vmlat_acct_init(struct vmlat_vcpu_acct *a, enum vmlat_event first,
		     u64 now_ns);
void vmlat_acct_event(struct vmlat_vcpu_acct *a, enum vmlat_event ev,
		      bool hlt, u64 now_ns, struct vmlat_done *done);
bool vmlat_acct_event_is_noop(const struct vmlat_vcpu_acct *a,
			      enum vmlat_event ev);
bool vmlat_acct_left_guest(struct vmlat_vcpu_acct *a, u64 exit_ns,
			   bool switched);
void vmlat_acct_reset(struct vmlat_vcpu_acct *a, u32 gen, u64 at_ns);
void vmlat_acct_end(struct vmlat_vcpu_acct *a, u64 now_ns);
void vmlat_acct_snapshot(const struct vmlat_vcpu_acct *a, u64 now_ns,
			 u64 time_ns[VMLAT_NR_STATES], u64 *observed_ns);

/**
 * vmlat_acct_owner_takes() - whether vmlat_acct_owner() takes an event
 * @a:		the vCPU's accounting
 * @old:	its state, as read by the caller
 * @ev:		the event
 *
 * The three events of every exit round trip, in the states they are
 * expected in (kvm_exit in guest, kvm_userspace_exit in kernel, kvm_entry
 * in kernel or user), with no exit pending and the thread not ended. The
 * caller of vmlat_acct_owner_step() asks it first, before its write
 * section: one test of the state serves both.
 */
static inline bool vmlat_acct_owner_takes(const struct vmlat_vcpu_acct *a,
					  u8 old, enum vmlat_event ev)
{
	bool ok;

	switch (ev) {
	case VMLAT_EV_EXIT:
		ok = old == VMLAT_GUEST;
		break;
	case VMLAT_EV_USER_EXIT:
		ok = old == VMLAT_KERNEL;
		break;
	case VMLAT_EV_ENTRY:
		ok = old == VMLAT_KERNEL || old == VMLAT_USER;
		break;
	default:
		return false;
	}
	/* An exit seen before its kvm_exit is the table's to finish. */
	return ok && !a->stops;
}

/**
 * vmlat_acct_owner_step() - the vCPU thread's own KVM event, the fast way
 * @a:		the vCPU's accounting
 * @old:	its state, which vmlat_acct_owner_takes() was asked with
 * @ev:		VMLAT_EV_EXIT, VMLAT_EV_USER_EXIT or VMLAT_EV_ENTRY
 * @hlt:	for VMLAT_EV_EXIT: the exit reason is HLT
 * @now_ns:	time of the event
 * @done:	set to the interval the event completed
 *
 * Accounts @ev exactly as vmlat_acct_event() accounts it (a KUnit test
 * compares the two), without its table walk: this runs three times per VM
 * exit. Only where vmlat_acct_owner_takes() said yes.
 */
static inline void vmlat_acct_owner_step(struct vmlat_vcpu_acct *a, u8 old,
					 enum vmlat_event ev, bool hlt,
					 u64 now_ns, struct vmlat_done *done)
{
	u8 new;
	u64 d;

	d = vmlat_span(a->since_ns, now_ns);
	a->time_ns[old] += d;
	a->since_ns += d;
	done->kind = VMLAT_DONE_NONE;
	done->ns = 0;
	if (ev == VMLAT_EV_EXIT) {
		new = VMLAT_KERNEL;
		a->exits++;
		a->exit_host_ns = 0;
		a->halted = hlt;
		vmlat_halt_arm(&a->halt);
		a->in_user = false;
	} else if (ev == VMLAT_EV_USER_EXIT) {
		new = VMLAT_USER;
		a->exit_host_ns += d;
		a->in_user = true;
	} else {
		new = VMLAT_GUEST;
		a->exit_host_ns += d;
		done->kind = VMLAT_DONE_EXIT;
		done->ns = a->exit_host_ns;
		a->halted = false;
		a->in_user = false;
	}
	a->enters[new]++;
	a->state = new;
	a->entered_ns = a->since_ns;
}

/**
 * vmlat_acct_owner() - the vCPU thread's own KVM events, the fast way
 * @a:		the vCPU's accounting
 * @ev:		VMLAT_EV_EXIT, VMLAT_EV_USER_EXIT or VMLAT_EV_ENTRY
 * @hlt:	for VMLAT_EV_EXIT: the exit reason is HLT
 * @now_ns:	time of the event
 * @done:	set to the interval the event completed, if it returns true
 *
 * vmlat_acct_owner_takes() and vmlat_acct_owner_step() in one.
 *
 * Return: true if it accounted @ev; false, having changed nothing, for
 * anything else (another event or state, an exit pending, or the thread
 * ended): then vmlat_acct_event() is the one to call.
 */
static inline bool vmlat_acct_owner(struct vmlat_vcpu_acct *a,
				    enum vmlat_event ev, bool hlt, u64 now_ns,
				    struct vmlat_done *done)
{
	u8 old = a->state;

	if (!vmlat_acct_owner_takes(a, old, ev))
		return false;
	vmlat_acct_owner_step(a, old, ev, hlt, now_ns, done);
	return true;
}

/**
 * vmlat_acct_owner_late_exit() - a kvm_exit traced late, the fast way
 * @a:		the vCPU's accounting
 * @hlt:	the exit reason is HLT
 * @exit_ns:	when the guest left (exit_late.h); not after @now_ns
 * @now_ns:	time of the kvm_exit
 *
 * Where kvm_exit is traced after the host took the exit's interrupts
 * (6.1 SVM), at every exit: the exit itself, at @exit_ns, as
 * vmlat_acct_owner() takes a prompt one, then the handling from there to
 * the kvm_exit. Accounted exactly as vmlat_acct_left_guest() (@exit_ns,
 * not switched) and then vmlat_acct_event() of the kvm_exit account them
 * (a KUnit test compares the two), without two calls and the table walk.
 *
 * Return: true if it accounted the exit; false, having changed nothing,
 * if vmlat_acct_owner() refuses the exit (the vCPU was not in guest, or
 * its thread ended): then those two are the ones to call.
 */
static inline bool vmlat_acct_owner_late_exit(struct vmlat_vcpu_acct *a,
					      bool hlt, u64 exit_ns,
					      u64 now_ns)
{
	struct vmlat_done done;
	u64 d;

	if (!vmlat_acct_owner(a, VMLAT_EV_EXIT, hlt, exit_ns, &done))
		return false;
	a->left_ns = a->since_ns;
	/* The kvm_exit: the handling so far, from the exit on. */
	d = vmlat_span(a->since_ns, now_ns);
	a->time_ns[VMLAT_KERNEL] += d;
	a->since_ns += d;
	a->exit_host_ns = d;
	a->late_exits++;
	a->late_ns += d;
	return true;
}

#endif /* _VMLAT_STATE_H */

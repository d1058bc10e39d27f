// SPDX-License-Identifier: GPL-2.0
/*
 * The per-vCPU state machine (pure logic, see state.h).
 *
 * The transitions are one table indexed by state and event. An event that
 * makes no sense in the current state (vmlat attached while the vCPU was
 * somewhere else, or an event it could not see) is counted as unexpected
 * and the machine resyncs to where the event says the vCPU is: the state
 * times stay a partition of the observed time whatever comes in.
 *
 * One exception to the table: a kvm_exit in kernel is expected when the
 * guest was seen to leave before it (vmlat_acct_left_guest()).
 */
#include "state.h"

const char *const vmlat_state_names[VMLAT_NR_STATES] = {
	VMLAT_STATES(VMLAT_NAME_, VMLAT_COMMA_)
};

/* Table entries: a target state, or one of these, plus T_BAD. */
#define T_STAY		0x10	/* no change */
#define T_RESUME	0x20	/* back on CPU: to user or kernel, where it was */
#define T_SLEEP		0x30	/* asleep: idle if halted, else blocked */
#define T_BAD		0x80	/* unexpected here: counted */
#define T_TARGET(t)	((t) & 0x7f)

#define G	VMLAT_GUEST
#define K	VMLAT_KERNEL
#define U	VMLAT_USER
#define P	VMLAT_PREEMPTED
#define W	VMLAT_WAIT

static const u8 vmlat_next[VMLAT_NR_STATES][VMLAT_NR_EVENTS] = {
	/*            ENTRY    EXIT     USER_EXIT OUT_RUNNABLE OUT_SLEEP        WAKEUP  IN
	 *            OUT_WOKEN
	 */
	[VMLAT_GUEST] = {
		T_BAD | G, K,       T_BAD | U, T_BAD | P, T_BAD | T_SLEEP, T_STAY, T_BAD | T_STAY,
		T_BAD | W },
	[VMLAT_KERNEL] = {
		G,         T_BAD | K, U,      P,         T_SLEEP,         T_STAY, T_BAD | T_STAY,
		W },
	[VMLAT_USER] = {
		G,         T_BAD | K, T_BAD | U, P,      T_SLEEP,         T_STAY, T_BAD | T_STAY,
		W },
	[VMLAT_PREEMPTED] = {
		T_BAD | G, T_BAD | K, T_BAD | U, T_BAD | T_STAY, T_BAD | T_SLEEP, T_STAY, T_RESUME,
		T_BAD | W },
	[VMLAT_WAIT] = {
		T_BAD | G, T_BAD | K, T_BAD | U, T_BAD | P, T_BAD | T_SLEEP, T_STAY, T_RESUME,
		T_BAD | W },
	[VMLAT_IDLE] = {
		T_BAD | G, T_BAD | K, T_BAD | U, T_BAD | P, T_BAD | T_STAY, W,   T_BAD | T_RESUME,
		T_BAD | W },
	[VMLAT_BLOCKED] = {
		T_BAD | G, T_BAD | K, T_BAD | U, T_BAD | P, T_BAD | T_STAY, W,   T_BAD | T_RESUME,
		T_BAD | W },
};

#undef G
#undef K
#undef U
#undef P
#undef W

/**
 * vmlat_acct_init() - start accounting a vCPU at its first event
 * @a:		the accounting to initialise
 * @first:	the event that made vmlat see this vCPU (kvm_entry/kvm_exit)
 * @now_ns:	its time
 */
void vmlat_acct_init(struct vmlat_vcpu_acct *a, enum vmlat_event first,
		     u64 now_ns)
{
	memset(a, 0, sizeof(*a));
	vmlat_nested_init(&a->nested);
	vmlat_halt_init(&a->halt);
	vmlat_as_cursor_init(&a->as);
	a->first_ns = now_ns;
	a->since_ns = now_ns;
	a->entered_ns = now_ns;
	a->state = first == VMLAT_EV_ENTRY ? VMLAT_GUEST : VMLAT_KERNEL;
	a->enters[a->state] = 1;
	if (first == VMLAT_EV_EXIT)
		a->exits = 1;
}

/**
 * vmlat_acct_event() - account one event of a vCPU
 * @a:		the vCPU's accounting
 * @ev:		the event
 * @hlt:	for VMLAT_EV_EXIT: the exit reason is HLT
 * @now_ns:	time of the event
 * @done:	set to the interval the event completed, if any
 *
 * Context: the caller serialises events of one vCPU.
 */
void vmlat_acct_event(struct vmlat_vcpu_acct *a, enum vmlat_event ev,
		      bool hlt, u64 now_ns, struct vmlat_done *done)
{
	u8 old = a->state, t = vmlat_next[old][ev];
	u64 d = vmlat_span(a->since_ns, now_ns);
	u8 new;

	done->kind = VMLAT_DONE_NONE;
	done->ns = 0;
	/*
	 * Nothing changes: the segment need not be closed now, the next
	 * event closes it. Such events (a wake-up of a running vCPU, from
	 * another CPU) then write nothing, so they cannot race with the
	 * thread's own lock-free events (vmlat_acct_owner()).
	 */
	if (a->ended || t == T_STAY)
		return;
	/* The kvm_exit of an exit seen earlier: it brings the reason. */
	if (ev == VMLAT_EV_EXIT && a->exit_pending && old == VMLAT_KERNEL)
		t = VMLAT_KERNEL;
	if (t & T_BAD)
		a->unexpected++;

	switch (T_TARGET(t)) {
	case T_STAY:
		new = old;
		break;
	case T_RESUME:
		new = a->in_user ? VMLAT_USER : VMLAT_KERNEL;
		break;
	case T_SLEEP:
		new = a->halted ? VMLAT_IDLE : VMLAT_BLOCKED;
		break;
	default:
		new = T_TARGET(t);
		break;
	}

	/* Close the current segment at every event, whatever follows. */
	a->time_ns[old] += d;
	a->since_ns += d;
	/* Exit handling counts only the host time on CPU. */
	if (old == VMLAT_KERNEL || old == VMLAT_USER)
		a->exit_host_ns += d;

	switch (ev) {
	case VMLAT_EV_EXIT:
		a->exits++;
		/* Its handling began when the guest left. */
		if (a->exit_pending && !(t & T_BAD)) {
			a->late_exits++;
			a->late_ns += vmlat_span(a->left_ns, a->since_ns);
		} else {
			a->exit_host_ns = 0;
		}
		a->exit_pending = false;
		a->halted = hlt;
		a->in_user = false;
		vmlat_halt_arm(&a->halt);
		break;
	case VMLAT_EV_ENTRY:
		/* An exit without its kvm_exit: no reason, not counted. */
		if (a->exit_pending) {
			a->exit_pending = false;
			a->unexpected++;
		} else if (old == VMLAT_KERNEL || old == VMLAT_USER) {
			done->kind = VMLAT_DONE_EXIT;
			done->ns = a->exit_host_ns;
		}
		a->halted = false;
		a->in_user = false;
		break;
	case VMLAT_EV_USER_EXIT:
		a->in_user = true;
		break;
	case VMLAT_EV_OUT_WOKEN:
		/* Asleep, and woken already: both at once. */
		if (old == VMLAT_KERNEL && a->halted)
			vmlat_halt_asleep(&a->halt, a->since_ns);
		a->woken_ns = a->since_ns;
		break;
	case VMLAT_EV_WAKEUP:
		a->woken_ns = a->since_ns;
		break;
	case VMLAT_EV_OUT_SLEEP:
		/* In KVM after a HLT exit: KVM's halt. */
		if (old == VMLAT_KERNEL && a->halted)
			vmlat_halt_asleep(&a->halt, a->since_ns);
		break;
	case VMLAT_EV_IN:
		if (t & T_BAD)
			break;
		if (old == VMLAT_PREEMPTED)
			done->kind = VMLAT_DONE_PREEMPT;
		else if (old == VMLAT_WAIT)
			done->kind = VMLAT_DONE_WAIT;
		done->ns = a->since_ns - a->entered_ns;
		break;
	default:
		break;
	}

	if (new == old)
		return;
	a->enters[new]++;
	a->state = new;
	a->entered_ns = a->since_ns;
}

/**
 * vmlat_acct_event_is_noop() - whether vmlat_acct_event() would change
 * nothing
 * @a:		the vCPU's accounting
 * @ev:		the event
 *
 * Return: true if @ev changes nothing in @a's current state (and the
 * caller can skip it, its write barriers included).
 */
bool vmlat_acct_event_is_noop(const struct vmlat_vcpu_acct *a,
			      enum vmlat_event ev)
{
	return a->ended || vmlat_next[a->state][ev] == T_STAY;
}

/**
 * vmlat_acct_left_guest() - the guest left before its kvm_exit came
 * @a:		the vCPU's accounting
 * @exit_ns:	when it left; not before the guest time began (the time of
 *		its kvm_entry, or of the last event), nor after now
 * @switched:	what showed it is the thread's switch-out (a preemption
 *		between the exit and its kvm_exit), not the kvm_exit itself
 *
 * For kernels that trace kvm_exit after the host took the exit's
 * interrupt: the guest time ends at @exit_ns, and the vCPU is in kernel,
 * handling the exit, from then on. Its kvm_exit, when it comes, counts the
 * exit and its reason without starting the handling time again.
 *
 * Return: true if @a was in guest; false, having changed nothing, if not
 * (or if its thread ended).
 */
bool vmlat_acct_left_guest(struct vmlat_vcpu_acct *a, u64 exit_ns,
			   bool switched)
{
	u64 d;

	if (a->ended || a->state != VMLAT_GUEST)
		return false;
	d = vmlat_span(a->since_ns, exit_ns);
	a->time_ns[VMLAT_GUEST] += d;
	a->since_ns += d;
	a->exit_host_ns = 0;
	a->left_ns = a->since_ns;
	a->exit_pending = true;
	a->in_user = false;
	a->late_switched += switched;
	a->enters[VMLAT_KERNEL]++;
	a->state = VMLAT_KERNEL;
	a->entered_ns = a->since_ns;
	return true;
}

/**
 * vmlat_acct_reset() - count the times from @at_ns on
 * @a:		the vCPU's accounting
 * @gen:	the reset's generation, recorded in @a
 * @at_ns:	when the reset was asked for
 *
 * Zeroes the state times and counts and starts the observed time at
 * @at_ns (or at the last event, if later). An exit being handled keeps
 * its host time so far: its duration spans the reset whole, as do the
 * preemption or wait in progress.
 */
void vmlat_acct_reset(struct vmlat_vcpu_acct *a, u32 gen, u64 at_ns)
{
	if (!a->ended && at_ns > a->since_ns) {
		if (a->state == VMLAT_KERNEL || a->state == VMLAT_USER)
			a->exit_host_ns += at_ns - a->since_ns;
		a->since_ns = at_ns;
	}
	/* A pending exit's lateness counts from the reset on, as all else. */
	if (a->exit_pending && a->left_ns < a->since_ns)
		a->left_ns = a->since_ns;
	memset(a->time_ns, 0, sizeof(a->time_ns));
	memset(a->enters, 0, sizeof(a->enters));
	a->exits = 0;
	a->unexpected = 0;
	a->late_exits = 0;
	a->late_switched = 0;
	a->late_ns = 0;
	vmlat_nested_reset(&a->nested);
	vmlat_halt_reset(&a->halt);
	/* The same address space, counted from the times' new zero. */
	memset(&a->as.base, 0, sizeof(a->as.base));
	memset(&a->as.reasons, 0, sizeof(a->as.reasons));
	a->first_ns = a->since_ns;
	a->reset_gen = gen;
}

/**
 * vmlat_acct_end() - the vCPU's thread exited: stop its clock
 * @a:		the vCPU's accounting
 * @now_ns:	the time of the exit
 *
 * The time up to @now_ns goes to the current state; later events and
 * snapshots add nothing, so an exited vCPU's times stay what they were.
 */
void vmlat_acct_end(struct vmlat_vcpu_acct *a, u64 now_ns)
{
	u64 d;

	if (a->ended)
		return;
	d = vmlat_span(a->since_ns, now_ns);
	a->time_ns[a->state] += d;
	a->since_ns += d;
	a->ended = true;
}

/**
 * vmlat_acct_snapshot() - state times up to @now_ns, current state included
 * @a:		the vCPU's accounting
 * @now_ns:	the time of the snapshot
 * @time_ns:	set to the time in each state
 * @observed_ns: set to the time since the first event; the sum of
 *		@time_ns equals it (the invariant the tests check)
 */
void vmlat_acct_snapshot(const struct vmlat_vcpu_acct *a, u64 now_ns,
			 u64 time_ns[VMLAT_NR_STATES], u64 *observed_ns)
{
	u64 d = a->ended ? 0 : vmlat_span(a->since_ns, now_ns);
	int i;

	for (i = 0; i < VMLAT_NR_STATES; i++)
		time_ns[i] = a->time_ns[i];
	time_ns[a->state] += d;
	*observed_ns = a->since_ns + d - a->first_ns;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat_guest.ko: the guest side of vmlat's clock synchronisation.
 *
 * Loaded in a KVM guest, it makes vmlat's clock-sync hypercall
 * (hypercall/vmlat_hypercall.h, version 2) at most rate_hz times a
 * second: its clock right before the call, the call, its clock right
 * after it returned. vmlat.ko on the host pairs each call with host time
 * and maps this guest's clock to the host's (/sys/kernel/debug/vmlat/sync
 * there). Which clock is a parameter: "mono" (default), CLOCK_MONOTONIC
 * as ftrace's "mono" trace clock stamps it (ktime_get_mono_fast_ns()); or
 * "tsc", the TSC as ftrace's "x86-tsc" clock stamps it.
 *
 * Pacing: an hrtimer armed after each call, for 1/rate_hz s and a
 * thousandth more (a guest clock running fast), wakes the work item that
 * makes the next: calls are never closer than that, so the host's rate
 * limit (VMLAT_HC_MAX_RATE a second, as a token bucket) never refuses
 * one. A call the host says it limited all the same is made again, same
 * seq and g2, after a delay that doubles while it lasts.
 *
 * The host's reply in RBX tells whether a vmlat.ko that speaks version 2
 * saw the call. KVM routes VMCALL to its Hyper-V emulation once a guest
 * with Hyper-V enlightenments set its guest OS ID, and to its Xen
 * emulation when the VMM asked for that: vmlat sees no call then, and
 * this module makes none.
 *
 * Names (version 3 of the hypercall, module parameter names): the module
 * tells the host which process owns which page-table root, so that
 * vmlat's guest_tasks shows guest pids and names. Every process once the
 * host answers (at load, and again whenever a host vmlat starts
 * answering: it may be new), then each new address space: the
 * sched_process_fork of a process (not a thread) and sched_process_exec
 * tracepoints. The probes only queue (a bounded ring: a full one drops
 * and asks for a new list of all); a work item makes the calls, at most
 * VMLAT_HC_NAME_RATE / 2 a second, the ring's first, then the list's
 * whose process still has that address space, again later for any the
 * host limited (the two take turns while forks keep the ring full).
 * Every 10 s, the busiest processes again. A host that does not answer
 * three calls in a row takes no names: none are made until one answers
 * the clock-sync calls anew, or for 10 s (then all of them again).
 *
 * /sys/kernel/debug/vmlat_guest/status shows this side: whether the host
 * runs vmlat, why the module makes no calls (if so), calls made, replies
 * and what they said, failures (a return other than KVM's -KVM_ENOSYS: a
 * hypervisor that is not KVM, or one that took the number), round trips;
 * and the names sent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/kstrtox.h>
#include <linux/kvm_para.h>
#include <linux/mem_encrypt.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/mm_types.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <asm/page.h>
#include <asm/kvm_para.h>
#include <asm/msr.h>
#include <asm/processor.h>
#include <uapi/linux/kvm_para.h>

#include "compat.h"
#include "vmlat_guest.h"
#include "vmlat_hypercall.h"

static unsigned int rate_hz = 10;
static bool clock_tsc;
/*
 * names: on by default, but off by default in a confidential guest (SEV,
 * SEV-ES, SEV-SNP, TDX), whose tenant keeps its processes from the host
 * (names_confidential); names=Y or N at load decides either way.
 */
static bool names = true;
static bool names_given;
static bool names_confidential;

static int names_set(const char *val, const struct kernel_param *kp)
{
	int err = param_set_bool(val, kp);

	if (err) {
		pr_warn("names: write Y or N\n");
		return err;
	}
	names_given = true;
	return 0;
}

static const struct kernel_param_ops names_ops = {
	.set = names_set,
	.get = param_get_bool,
};

module_param_cb(names, &names_ops, &names, 0444);
MODULE_PARM_DESC(names, "tell the host which process owns which address space (default Y, N in a confidential guest); set at load");

#ifdef VMLAT_TEST_BUILD
/* selftests' test build only: test_case=confidential takes the guest for one */
static bool vmlat_test_confidential;

static int vmlat_test_case_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "confidential")) {
		vmlat_test_confidential = true;
		return 0;
	}
	if (sysfs_streq(val, "none")) {
		vmlat_test_confidential = false;
		return 0;
	}
	pr_warn("test_case: none or confidential\n");
	return -EINVAL;
}

static const struct kernel_param_ops vmlat_test_case_ops = {
	.set = vmlat_test_case_set,
	.get = param_get_bool,
};
module_param_cb(test_case, &vmlat_test_case_ops, &vmlat_test_confidential, 0444);
MODULE_PARM_DESC(test_case, "selftests' test build only: the guest taken for a confidential one");
#else
#define vmlat_test_confidential	false
#endif

/*
 * Whether this guest's run times of its tasks leave out the steal time KVM
 * reports to it (type-1 steal): only a kernel built with
 * CONFIG_PARAVIRT_TIME_ACCOUNTING does, and only if the host offers steal
 * time (and no-steal-acc is not on its command line, which a module
 * cannot read). Elsewhere (Debian's kernels) they include it.
 */
const char *vmlat_guest_steal_accounting(void)
{
	if (!IS_ENABLED(CONFIG_PARAVIRT_TIME_ACCOUNTING))
		return "included";
	return kvm_para_has_feature(KVM_FEATURE_STEAL_TIME) ?
	       "subtracted" : "included";
}

static int rate_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < 1 || v > VMLAT_HC_MAX_RATE) {
		pr_warn("rate_hz: write a number of exchanges per second from 1 to %d\n",
			VMLAT_HC_MAX_RATE);
		return -EINVAL;
	}
	WRITE_ONCE(rate_hz, v);
	return 0;
}

static const struct kernel_param_ops rate_ops = {
	.set = rate_set,
	.get = param_get_uint,
};

module_param_cb(rate_hz, &rate_ops, &rate_hz, 0644);
MODULE_PARM_DESC(rate_hz, "clock-sync exchanges per second at most, 1 to 100 (default 10)");

static int clock_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "mono")) {
		clock_tsc = false;
		return 0;
	}
	if (sysfs_streq(val, "tsc")) {
		clock_tsc = true;
		return 0;
	}
	pr_warn("clock: write mono or tsc\n");
	return -EINVAL;
}

static int clock_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", clock_tsc ? "tsc" : "mono");
}

static const struct kernel_param_ops clock_ops = {
	.set = clock_set,
	.get = clock_get,
};

/* Read-only once loaded: a mapping is of one clock. */
module_param_cb(clock, &clock_ops, NULL, 0444);
MODULE_PARM_DESC(clock, "the guest clock to map: mono (CLOCK_MONOTONIC, default) or tsc");

/*
 * Hyper-V's interface as KVM recognises it (arch/x86/kvm/hyperv.c): the
 * signature "Hv#1" in EAX of CPUID 0x40000001; its hypercalls take over
 * VMCALL once the guest OS ID MSR is not 0 (kvm_hv_hypercall_enabled()).
 * Values of the Hyper-V TLFS, as <asm/hyperv-tlfs.h> has them.
 */
#define VMLAT_HV_CPUID_INTERFACE	0x40000001
#define VMLAT_HV_SIGNATURE_EAX		0x31237648	/* "Hv#1" */
#define VMLAT_HV_MSR_GUEST_OS_ID	0x40000000

enum vmlat_host {
	VMLAT_HOST_UNKNOWN,	/* no call answered yet, or replies invisible */
	VMLAT_HOST_YES,		/* the last call got vmlat's reply */
	VMLAT_HOST_NO,		/* KVM answered, RBX came back unchanged */
};

static const char *const vmlat_host_names[] = {
	[VMLAT_HOST_UNKNOWN]	= "unknown",
	[VMLAT_HOST_YES]	= "yes",
	[VMLAT_HOST_NO]		= "no",
};

/* The exchanges so far; written by the work item, read by debugfs. */
static DEFINE_MUTEX(vmlat_guest_lock);
static struct {
	bool stopping;		/* module unload: arm no timer */
	bool hv_interface;	/* Hyper-V's CPUID interface is present */
	bool replies_hidden;	/* RBX does not come back (SEV-ES) */
	const char *disabled;	/* why no calls are made, or NULL */
	enum vmlat_host host;
	u64 seq;		/* of the next call */
	u64 prev_g2;
	u64 calls;
	u64 failures;
	long last_ret;
	u64 last_reply;
	u64 replies;
	u64 taken;
	u64 limited;
	u64 rejected;		/* malformed, replayed: not expected */
	u64 mapped;
	u64 unpaired;
	u64 refused;
	u64 restarted;
	unsigned int backoff;	/* delay shift after a limited call */
	u64 rtt_min;
	u64 rtt_max;
	u64 rtt_sum;
	u64 rtt_last;
} st = { .seq = 1 };

static struct dentry *vmlat_guest_dir;
static struct hrtimer vmlat_guest_timer;

static u64 guest_clock(void)
{
	return clock_tsc ? rdtsc_ordered() : ktime_get_mono_fast_ns();
}

/*
 * Whether KVM sends this guest's VMCALL elsewhere than its own hypercalls
 * (where vmlat listens); the reason if so. Hyper-V's guest OS ID can be
 * set at any time: read it before each call.
 */
static const char *vmlat_guest_routed_away(void)
{
	u64 id;

	if (st.hv_interface && !vmlat_rdmsrq_safe(VMLAT_HV_MSR_GUEST_OS_ID, &id) &&
	    id)
		return "hyperv";
	return NULL;
}

/*
 * vmlat's hypercall, with RBX in and out (kvm_hypercall4() has it in
 * only), and RDI (the name call's): the clock sync and the name calls.
 */
static long vmlat_guest_hypercall(u64 *rbx, u64 rcx, u64 rdx, u64 rsi,
				  u64 rdi)
{
	long ret;

	asm volatile(KVM_HYPERCALL
		     : "=a"(ret), "+b"(*rbx)
		     : "a"(VMLAT_HC_NR), "c"(rcx), "d"(rdx), "S"(rsi),
		       "D"(rdi)
		     : "memory");
	return ret;
}

/**
 * vmlat_guest_no_calls() - why this guest makes no hypercalls, or NULL
 *
 * Xen or TDX (no call reaches vmlat), Hyper-V's interface enabled (KVM
 * takes VMCALL for it), or an SEV-ES guest: the host's replies never
 * reach its registers.
 */
const char *vmlat_guest_no_calls(void)
{
	const char *why;

	mutex_lock(&vmlat_guest_lock);
	why = st.disabled ?: st.replies_hidden ? "confidential" :
	      vmlat_guest_routed_away();
	mutex_unlock(&vmlat_guest_lock);
	return why;
}

static u64 vmlat_guest_period_ns(void)
{
	u64 ns = DIV_ROUND_UP_ULL(NSEC_PER_SEC, READ_ONCE(rate_hz));

	/* A thousandth more: a guest clock up to 1000 ppm fast stays under. */
	return ns + ns / 1000;
}

/* From one call to the next: a period, longer after a limited call. */
static u64 vmlat_guest_delay_ns(void)
{
	u64 period = vmlat_guest_period_ns();

	return min_t(u64, period << st.backoff,
		     max_t(u64, period, NSEC_PER_SEC));
}

/* What the host's reply says. Context: vmlat_guest_lock held. */
static void vmlat_names_host_answers(void);

static void vmlat_guest_reply(u64 rbx, u64 g2)
{
	if (st.host != VMLAT_HOST_YES)
		vmlat_names_host_answers();
	st.host = VMLAT_HOST_YES;
	st.replies++;
	st.last_reply = rbx;
	switch (VMLAT_HC_REPLY_CALL(rbx)) {
	case VMLAT_HC_CALL_TAKEN:
		st.taken++;
		st.backoff = 0;
		break;
	case VMLAT_HC_CALL_LIMITED:
		/* Nothing changed there: the same call again, later. */
		st.limited++;
		st.backoff = min(st.backoff + 1, 6U);
		return;
	default:
		st.rejected++;
		break;
	}
	switch (VMLAT_HC_REPLY_PREV(rbx)) {
	case VMLAT_HC_PREV_MAPPED:
		st.mapped++;
		break;
	case VMLAT_HC_PREV_UNPAIRED:
		st.unpaired++;
		break;
	case VMLAT_HC_PREV_REFUSED:
		st.refused++;
		break;
	case VMLAT_HC_PREV_RESTARTED:
		st.restarted++;
		break;
	}
	st.seq++;
	st.prev_g2 = g2;
}

static void vmlat_guest_exchange(struct work_struct *work)
{
	unsigned long flags;
	u64 g1, g2, rtt, rbx = VMLAT_HC_HDR;
	long ret;

	mutex_lock(&vmlat_guest_lock);
	if (st.stopping)
		goto out;
	st.disabled = vmlat_guest_routed_away();
	if (st.disabled) {
		/* vmlat would see nothing: make no call, say why. */
		st.host = VMLAT_HOST_UNKNOWN;
		goto out;
	}
	/* Nothing of this guest between the clock reads and the call. */
	local_irq_save(flags);
	g1 = guest_clock();
	ret = vmlat_guest_hypercall(&rbx, g1, st.prev_g2, st.seq, 0);
	g2 = guest_clock();
	local_irq_restore(flags);

	st.calls++;
	st.last_ret = ret;
	if (ret != -KVM_ENOSYS) {
		st.failures++;
		st.host = VMLAT_HOST_UNKNOWN;
		st.seq++;
		st.prev_g2 = g2;
	} else if (VMLAT_HC_IS_REPLY(rbx)) {
		vmlat_guest_reply(rbx, g2);
	} else {
		/* No vmlat that speaks version 2 saw it: a call all the same. */
		st.host = st.replies_hidden ? VMLAT_HOST_UNKNOWN : VMLAT_HOST_NO;
		st.seq++;
		st.prev_g2 = g2;
	}
	rtt = g2 - g1;
	st.rtt_last = rtt;
	st.rtt_sum += rtt;
	if (st.calls == 1 || rtt < st.rtt_min)
		st.rtt_min = rtt;
	if (rtt > st.rtt_max)
		st.rtt_max = rtt;
	/* Armed after the call: the next one is at least a period later. */
	hrtimer_start(&vmlat_guest_timer, ns_to_ktime(vmlat_guest_delay_ns()),
		      HRTIMER_MODE_REL);
out:
	mutex_unlock(&vmlat_guest_lock);
}

static DECLARE_WORK(vmlat_guest_work, vmlat_guest_exchange);

static enum hrtimer_restart vmlat_guest_timer_fn(struct hrtimer *t)
{
	schedule_work(&vmlat_guest_work);
	return HRTIMER_NORESTART;
}

/* ---- names ---------------------------------------------------------- */

/* What one name call says. */
struct vmlat_name {
	u64 root;		/* RCX: __pa(pgd), and VMLAT_HC_NAME_NEW */
	u64 runtime;		/* the list's order: least CPU time first */
	u32 tgid;
	char comm[TASK_COMM_LEN];
};

/* Calls a second at most: half the host's limit, in batches. */
#define VMLAT_NAMES_BATCH	10
#define VMLAT_NAMES_PERIOD_MS	(1000 * VMLAT_NAMES_BATCH * 2 / VMLAT_HC_NAME_RATE)
/* New address spaces queued by the probes, and processes in one list. */
#define VMLAT_NAMES_RING	256
#define VMLAT_NAMES_LIST_MAX	4096
/*
 * Every VMLAT_NAMES_REFRESH_S, the VMLAT_NAMES_REFRESH busiest processes
 * again: the host's cache keeps a name while its process has a row there,
 * and drops the oldest of the others; a process that runs alone on a vCPU
 * for long may have no row yet when many new ones come.
 */
#define VMLAT_NAMES_REFRESH	32
#define VMLAT_NAMES_REFRESH_S	10

static DEFINE_RAW_SPINLOCK(vmlat_names_ring_lock);
static struct {
	struct vmlat_name e[VMLAT_NAMES_RING];
	unsigned int head;	/* next to send */
	unsigned int len;
	bool relist;		/* dropped some: list all again */
	u64 queued;
	u64 dropped;
} ring;

/* The work item's, and debugfs's under vmlat_names_lock. */
static DEFINE_MUTEX(vmlat_names_lock);
static struct {
	bool stopping;
	bool host_takes;	/* the last name call got an answer */
	bool relist;		/* make a list of all processes */
	bool refresh;		/* make one, send the busiest */
	struct vmlat_name *list;	/* a list being sent */
	unsigned int list_len;
	unsigned int list_next;
	unsigned int backoff;	/* delay shift after a limited call */
	u64 lists;
	u64 refreshes;
	u64 listed;
	u64 over;		/* processes past VMLAT_NAMES_LIST_MAX */
	u64 stale;		/* list entries gone by their turn */
	unsigned int silent;	/* calls in a row without a reply */
	u64 calls;
	u64 taken;
	u64 limited;
	u64 malformed;
	u64 unanswered;
} nm;

static void vmlat_names_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(vmlat_names_work, vmlat_names_work_fn);
static void vmlat_names_refresh_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(vmlat_names_refresh_work, vmlat_names_refresh_fn);

static struct tracepoint *vmlat_tp_fork, *vmlat_tp_exec;

/* What the guest's CR3 holds for @mm: the SME/SEV C-bit included. */
static u64 vmlat_name_root(struct mm_struct *mm)
{
	return __sme_pa(mm->pgd);
}

/*
 * The root of process @p's address space, from any of its threads that
 * has it (the leader may have exited), as find_lock_task_mm() finds it.
 * Context: rcu_read_lock() held, process context (task_lock()).
 * Return: false if none has one (it is exiting).
 */
static bool vmlat_process_root(struct task_struct *p, u64 *root)
{
	struct task_struct *t;
	struct mm_struct *mm;

	for_each_thread(p, t) {
		task_lock(t);
		mm = t->mm;
		if (mm)
			*root = vmlat_name_root(mm);
		task_unlock(t);
		if (mm)
			return true;
	}
	return false;
}

/* Fill @n for process @p of @root; @new: a new address space. */
static void vmlat_name_of(struct vmlat_name *n, struct task_struct *p,
			  u64 root, bool new)
{
	n->root = root | (new ? VMLAT_HC_NAME_NEW : 0);
	n->tgid = p->tgid;
	n->runtime = p->se.sum_exec_runtime;
	/* As tracepoints copy it: no task_lock() in a probe. */
	memcpy(n->comm, p->comm, sizeof(n->comm));
	n->comm[TASK_COMM_LEN - 1] = '\0';
}

/* A new address space, from a probe: queue it, or drop and ask a list. */
static void vmlat_names_queue(struct task_struct *p, struct mm_struct *mm)
{
	unsigned long flags;
	bool kick;

	raw_spin_lock_irqsave(&vmlat_names_ring_lock, flags);
	if (ring.len < VMLAT_NAMES_RING) {
		vmlat_name_of(&ring.e[(ring.head + ring.len) %
				      VMLAT_NAMES_RING], p,
			      vmlat_name_root(mm), true);
		ring.len++;
		ring.queued++;
	} else {
		ring.dropped++;
		ring.relist = true;
	}
	kick = ring.len == 1;
	raw_spin_unlock_irqrestore(&vmlat_names_ring_lock, flags);
	/*
	 * A period later, as from one batch to the next: the work item comes
	 * back while there are more, and a burst of forks never makes calls
	 * faster than the batches do.
	 */
	if (kick)
		queue_delayed_work(system_wq, &vmlat_names_work,
				   msecs_to_jiffies(VMLAT_NAMES_PERIOD_MS));
}

static void vmlat_names_fork(void *data, struct task_struct *parent,
			     struct task_struct *child)
{
	/* Threads (and vfork) share the parent's address space. */
	if (!(child->flags & PF_KTHREAD) && child->mm &&
	    child->mm != parent->mm)
		vmlat_names_queue(child, child->mm);
}

static void vmlat_names_exec(void *data, struct task_struct *p,
			     pid_t old_pid, struct linux_binprm *bprm)
{
	if (p->mm)
		vmlat_names_queue(p, p->mm);
}

static void vmlat_names_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		vmlat_tp_fork = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		vmlat_tp_exec = tp;
}

static int vmlat_name_cmp(const void *a, const void *b)
{
	const struct vmlat_name *x = a, *y = b;

	return x->runtime < y->runtime ? -1 : x->runtime > y->runtime;
}

/* Drop the list being sent (a new one replaces it, or none is sent). */
static void vmlat_names_drop_list(void)
{
	kvfree(nm.list);
	nm.list = NULL;
	nm.list_len = 0;
	nm.list_next = 0;
}

/*
 * A list of every process (that has an address space), least CPU time
 * first: the busiest are the freshest in the host's cache; for a refresh,
 * only the VMLAT_NAMES_REFRESH busiest. Context: vmlat_names_lock held.
 */
static void vmlat_names_list(bool refresh)
{
	struct task_struct *p;
	unsigned int n = 0;
	u64 over = 0;

	vmlat_names_drop_list();
	nm.list = kvmalloc_array(VMLAT_NAMES_LIST_MAX, sizeof(*nm.list),
				 GFP_KERNEL);
	if (!nm.list)
		return;		/* the caller tries again later */
	rcu_read_lock();
	for_each_process(p) {
		struct task_struct *t;
		u64 root, runtime = 0;

		if (p->flags & PF_KTHREAD)
			continue;
		if (n == VMLAT_NAMES_LIST_MAX) {
			over++;
			continue;
		}
		if (!vmlat_process_root(p, &root))
			continue;
		/* The CPU time of all its threads. */
		for_each_thread(p, t)
			runtime += t->se.sum_exec_runtime;
		vmlat_name_of(&nm.list[n], p, root, false);
		nm.list[n++].runtime = runtime;
	}
	rcu_read_unlock();
	sort(nm.list, n, sizeof(*nm.list), vmlat_name_cmp, NULL);
	nm.list_len = n;
	if (refresh) {
		nm.list_next = n > VMLAT_NAMES_REFRESH ?
			       n - VMLAT_NAMES_REFRESH : 0;
		nm.refreshes++;
		return;
	}
	nm.lists++;
	nm.listed += n;
	nm.over += over;
}

/* One name call; its reply. */
static u64 vmlat_names_call(const struct vmlat_name *n)
{
	u64 rbx = VMLAT_HC_HDR_NAME, c[2] = { 0, 0 };
	long ret;

	memcpy(c, n->comm, min(sizeof(c), sizeof(n->comm)));
	ret = vmlat_guest_hypercall(&rbx, n->root, n->tgid, c[0], c[1]);
	nm.calls++;
	return ret == -KVM_ENOSYS && VMLAT_HC_IS_REPLY(rbx) ? rbx : 0;
}

/*
 * Whether list entry @n still says the truth: its process is alive and
 * has that address space. A list is older than the ring's new address
 * spaces, which go first: a process that exited since may have left its
 * root to one of them.
 */
static bool vmlat_name_current(const struct vmlat_name *n)
{
	struct task_struct *p;
	bool ok;
	u64 root;

	rcu_read_lock();
	p = pid_task(find_pid_ns(n->tgid, &init_pid_ns), PIDTYPE_PID);
	ok = p && vmlat_process_root(p, &root) &&
	     root == (n->root & ~VMLAT_HC_NAME_NEW);
	rcu_read_unlock();
	return ok;
}

/* The list's next entry still true, if any; stale ones skipped. */
static bool vmlat_names_next_listed(struct vmlat_name *n)
{
	while (nm.list && nm.list_next < nm.list_len) {
		*n = nm.list[nm.list_next];
		if (vmlat_name_current(n))
			return true;
		nm.stale++;
		nm.list_next++;
	}
	return false;
}

/*
 * The next name to send: the ring's first (new address spaces), or the
 * list's first if @list_first; the other if that one has none. Both get
 * their turns while forks keep the ring full.
 */
static bool vmlat_names_next(struct vmlat_name *n, bool *from_list,
			     bool list_first)
{
	unsigned long flags;
	bool any = false;

	*from_list = true;
	if (list_first && vmlat_names_next_listed(n))
		return true;
	raw_spin_lock_irqsave(&vmlat_names_ring_lock, flags);
	if (ring.relist) {
		ring.relist = false;
		nm.relist = true;
	}
	if (ring.len) {
		*n = ring.e[ring.head];
		any = true;
	}
	raw_spin_unlock_irqrestore(&vmlat_names_ring_lock, flags);
	*from_list = false;
	if (any)
		return true;
	*from_list = true;
	return !list_first && vmlat_names_next_listed(n);
}

static void vmlat_names_pop(bool from_list)
{
	unsigned long flags;

	if (from_list) {
		nm.list_next++;
		return;
	}
	raw_spin_lock_irqsave(&vmlat_names_ring_lock, flags);
	ring.head = (ring.head + 1) % VMLAT_NAMES_RING;
	ring.len--;
	raw_spin_unlock_irqrestore(&vmlat_names_ring_lock, flags);
}

/* Forget what is queued: a list of all comes next. */
static void vmlat_names_flush_ring(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&vmlat_names_ring_lock, flags);
	ring.len = 0;
	ring.relist = false;
	raw_spin_unlock_irqrestore(&vmlat_names_ring_lock, flags);
}

static void vmlat_names_work_fn(struct work_struct *work)
{
	unsigned long delay = 0;
	struct vmlat_name n;
	bool from_list;
	unsigned int i;
	u64 reply;

	mutex_lock(&vmlat_names_lock);
	if (nm.stopping || !nm.host_takes)
		goto out;
	for (i = 0; i < VMLAT_NAMES_BATCH; i++) {
		/*
		 * A list of all replaces the one being sent, and what is
		 * queued is in it; a refresh waits for the one being sent.
		 */
		if (nm.relist || (nm.refresh && !nm.list)) {
			if (nm.relist)
				vmlat_names_flush_ring();
			vmlat_names_list(!nm.relist);
			if (!nm.list) {
				delay = HZ;	/* no memory: later */
				goto again;
			}
			nm.relist = false;
			nm.refresh = false;
		}
		if (!vmlat_names_next(&n, &from_list, i % 2)) {
			vmlat_names_drop_list();	/* all sent */
			if (nm.relist || nm.refresh)
				continue;
			goto out;	/* the probes kick again */
		}
		/* As the clock sync: KVM would route it elsewhere. */
		if (vmlat_guest_routed_away())
			goto out;
		reply = vmlat_names_call(&n);
		if (!reply) {
			/*
			 * No vmlat that takes names (three in a row: not one
			 * call lost): none until one answers anew.
			 */
			nm.unanswered++;
			if (++nm.silent < 3) {
				delay = msecs_to_jiffies(VMLAT_NAMES_PERIOD_MS);
				goto again;
			}
			nm.silent = 0;
			nm.host_takes = false;
			vmlat_names_flush_ring();
			vmlat_names_drop_list();
			goto out;
		}
		nm.silent = 0;
		if (VMLAT_HC_REPLY_CALL(reply) == VMLAT_HC_CALL_LIMITED) {
			nm.limited++;
			nm.backoff = min(nm.backoff + 1, 6U);
			delay = msecs_to_jiffies(VMLAT_NAMES_PERIOD_MS << nm.backoff);
			goto again;
		}
		nm.backoff = 0;
		if (VMLAT_HC_REPLY_CALL(reply) == VMLAT_HC_CALL_TAKEN)
			nm.taken++;
		else
			nm.malformed++;
		vmlat_names_pop(from_list);
	}
	delay = msecs_to_jiffies(VMLAT_NAMES_PERIOD_MS);
again:
	queue_delayed_work(system_wq, &vmlat_names_work, delay ?: 1);
out:
	mutex_unlock(&vmlat_names_lock);
}

static void vmlat_names_refresh_fn(struct work_struct *work)
{
	bool sync_answered;

	mutex_lock(&vmlat_guest_lock);
	sync_answered = st.host == VMLAT_HOST_YES;
	mutex_unlock(&vmlat_guest_lock);

	mutex_lock(&vmlat_names_lock);
	if (nm.stopping) {
		mutex_unlock(&vmlat_names_lock);
		return;
	}
	if (!nm.host_takes && sync_answered) {
		/*
		 * Names stopped while a vmlat answers sync (reloaded between
		 * two sync calls, or a version 2 host): try again, all.
		 */
		nm.host_takes = true;
		nm.relist = true;
	} else if (nm.host_takes) {
		nm.refresh = true;
	}
	/* Not mod_delayed_work(): a limited call's delay stays. */
	if (nm.host_takes)
		queue_delayed_work(system_wq, &vmlat_names_work, 0);
	mutex_unlock(&vmlat_names_lock);
	queue_delayed_work(system_wq, &vmlat_names_refresh_work,
			   VMLAT_NAMES_REFRESH_S * HZ);
}

/*
 * A host vmlat answers the clock-sync calls, and did not before: it may be
 * new (loaded, reloaded) and know no names. Send it all. Context:
 * vmlat_guest_lock held (the names work never takes it).
 */
static void vmlat_names_host_answers(void)
{
	if (!names)
		return;
	mutex_lock(&vmlat_names_lock);
	nm.host_takes = true;
	nm.relist = true;
	mutex_unlock(&vmlat_names_lock);
	mod_delayed_work(system_wq, &vmlat_names_work, 0);
}

static const char *vmlat_names_state(void)
{
	if (!names)
		return names_confidential ? "off-confidential" : "off";
	return !vmlat_tp_fork ? "no-tracepoints" : "on";
}

static void vmlat_names_show(struct seq_file *m)
{
	unsigned long flags;
	u64 queued, dropped;

	raw_spin_lock_irqsave(&vmlat_names_ring_lock, flags);
	queued = ring.queued;
	dropped = ring.dropped;
	raw_spin_unlock_irqrestore(&vmlat_names_ring_lock, flags);
	mutex_lock(&vmlat_names_lock);
	seq_printf(m, "names %s\n", vmlat_names_state());
	seq_printf(m, "names_host %s\n", nm.host_takes ? "yes" : "no");
	seq_printf(m, "names_lists %llu\n", nm.lists);
	seq_printf(m, "names_refreshes %llu\n", nm.refreshes);
	seq_printf(m, "names_listed %llu\n", nm.listed);
	seq_printf(m, "names_over %llu\n", nm.over);
	seq_printf(m, "names_stale %llu\n", nm.stale);
	seq_printf(m, "names_queued %llu\n", queued);
	seq_printf(m, "names_dropped %llu\n", dropped);
	seq_printf(m, "names_calls %llu\n", nm.calls);
	seq_printf(m, "names_taken %llu\n", nm.taken);
	seq_printf(m, "names_limited %llu\n", nm.limited);
	seq_printf(m, "names_malformed %llu\n", nm.malformed);
	seq_printf(m, "names_unanswered %llu\n", nm.unanswered);
	mutex_unlock(&vmlat_names_lock);
}

/* Attach the probes: names on, before any call. */
static void vmlat_names_start(void)
{
	if (!names)
		return;
	queue_delayed_work(system_wq, &vmlat_names_refresh_work,
			   VMLAT_NAMES_REFRESH_S * HZ);
	for_each_kernel_tracepoint(vmlat_names_find_tp, NULL);
	if (!vmlat_tp_fork || !vmlat_tp_exec ||
	    tracepoint_probe_register(vmlat_tp_fork, vmlat_names_fork, NULL)) {
		vmlat_tp_fork = NULL;
		pr_warn("names: no sched_process_fork/exec tracepoints; naming only the processes there are\n");
		return;
	}
	if (tracepoint_probe_register(vmlat_tp_exec, vmlat_names_exec, NULL)) {
		tracepoint_probe_unregister(vmlat_tp_fork, vmlat_names_fork,
					    NULL);
		vmlat_tp_fork = NULL;
		pr_warn("names: no sched_process_exec tracepoint; naming only the processes there are\n");
	}
}

static void vmlat_names_stop(void)
{
	if (vmlat_tp_fork) {
		tracepoint_probe_unregister(vmlat_tp_fork, vmlat_names_fork,
					    NULL);
		tracepoint_probe_unregister(vmlat_tp_exec, vmlat_names_exec,
					    NULL);
		tracepoint_synchronize_unregister();
	}
	mutex_lock(&vmlat_names_lock);
	nm.stopping = true;
	mutex_unlock(&vmlat_names_lock);
	/* The refresh queues the names work: it goes first. */
	cancel_delayed_work_sync(&vmlat_names_refresh_work);
	cancel_delayed_work_sync(&vmlat_names_work);
	vmlat_names_drop_list();
}

static int status_show(struct seq_file *m, void *unused)
{
	mutex_lock(&vmlat_guest_lock);
	seq_printf(m, "# vmlat_guest: hypercall versions %d (clock sync), 3 (names) and 4 (steal), clock %s\n",
		   VMLAT_HC_VERSION, clock_tsc ? "tsc" : "mono");
	seq_printf(m, "host_vmlat %s\n", vmlat_host_names[st.host]);
	seq_printf(m, "disabled %s\n", st.disabled ?: "no");
	seq_printf(m, "rate_hz %u\n", READ_ONCE(rate_hz));
	seq_printf(m, "calls %llu\n", st.calls);
	seq_printf(m, "seq %llu\n", st.seq);
	seq_printf(m, "failures %llu\n", st.failures);
	seq_printf(m, "last_return %ld\n", st.last_ret);
	seq_printf(m, "replies %llu\n", st.replies);
	seq_printf(m, "taken %llu\n", st.taken);
	seq_printf(m, "limited %llu\n", st.limited);
	seq_printf(m, "rejected %llu\n", st.rejected);
	seq_printf(m, "mapped %llu\n", st.mapped);
	seq_printf(m, "unpaired %llu\n", st.unpaired);
	seq_printf(m, "refused %llu\n", st.refused);
	seq_printf(m, "restarted %llu\n", st.restarted);
	seq_printf(m, "last_reply %#llx\n", st.last_reply);
	seq_printf(m, "rtt_min %llu\n", st.rtt_min);
	seq_printf(m, "rtt_avg %llu\n",
		   st.calls ? div64_u64(st.rtt_sum, st.calls) : 0);
	seq_printf(m, "rtt_max %llu\n", st.rtt_max);
	seq_printf(m, "rtt_last %llu\n", st.rtt_last);
	seq_printf(m, "steal_accounting %s\n", vmlat_guest_steal_accounting());
	mutex_unlock(&vmlat_guest_lock);
	vmlat_names_show(m);
	vmlat_guest_steal_show_status(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(status);

static int __init vmlat_guest_init(void)
{
	if (!boot_cpu_has(X86_FEATURE_HYPERVISOR) || !kvm_para_available()) {
		pr_err("not running in a KVM guest: load vmlat_guest.ko in one (on the host, load vmlat.ko)\n");
		return -ENODEV;
	}
	if (!IS_ENABLED(CONFIG_64BIT)) {
		pr_err("the clock-sync hypercall needs a 64-bit guest\n");
		return -ENODEV;
	}
	st.hv_interface = cpuid_eax(0x40000000) >= VMLAT_HV_CPUID_INTERFACE &&
			  cpuid_eax(VMLAT_HV_CPUID_INTERFACE) ==
			  VMLAT_HV_SIGNATURE_EAX;
	/* SEV-ES: the #VC handler brings back RAX only. */
	st.replies_hidden = vmlat_guest_state_encrypted();
	if (!names_given &&
	    (vmlat_confidential_guest() || vmlat_test_confidential)) {
		names = false;
		names_confidential = true;
	}
	if (vmlat_tdx_guest())
		st.disabled = "tdx";
	else if (vmlat_cpuid_base_hypervisor("XenVMMXenVMM", 2))
		st.disabled = "xen";
	vmlat_hrtimer_setup(&vmlat_guest_timer, vmlat_guest_timer_fn,
			    CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	vmlat_guest_dir = debugfs_create_dir("vmlat_guest", NULL);
	debugfs_create_file("status", 0444, vmlat_guest_dir, NULL,
			    &status_fops);
	vmlat_guest_steal_create(vmlat_guest_dir);
	if (st.disabled) {
		pr_warn("%s: KVM would not pass the clock-sync hypercall to vmlat; making none\n",
			st.disabled);
		return 0;
	}
	vmlat_names_start();
	schedule_work(&vmlat_guest_work);
	pr_info("clock-sync exchanges with the host, at most %u per second, clock %s; names %s\n",
		rate_hz, clock_tsc ? "tsc" : "mono", vmlat_names_state());
	return 0;
}

static void __exit vmlat_guest_exit(void)
{
	mutex_lock(&vmlat_guest_lock);
	st.stopping = true;
	mutex_unlock(&vmlat_guest_lock);
	/* The work arms the timer, the timer queues the work: both ways. */
	hrtimer_cancel(&vmlat_guest_timer);
	cancel_work_sync(&vmlat_guest_work);
	hrtimer_cancel(&vmlat_guest_timer);
	/* The sync work queues the names work: it is done. */
	vmlat_names_stop();
	debugfs_remove_recursive(vmlat_guest_dir);
	vmlat_guest_steal_stop();
}

module_init(vmlat_guest_init);
module_exit(vmlat_guest_exit);

MODULE_DESCRIPTION("vmlat guest side: clock-sync and process-name hypercalls to the host");
MODULE_LICENSE("GPL");

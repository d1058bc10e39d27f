// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat report: one run (the totals since load, or a window of -d), a
 * table per VM, and a diagnosis in plain words, in the way of rtla's
 * auto-analysis: which VMs lost the most time and to whom (a host task,
 * another VM's vCPU, the idle CPU waking up), type-1 steal (runnable,
 * not running) against type-2 (the host handling exits) and the exit
 * reasons behind type 2, the cost of nested bounces, and the state of
 * clock sync. Every claim comes with its number. --json gives the same
 * as one JSON document, for scripts.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmlat.h"

/* Below these shares of its time, a VM's loss is not worth a finding. */
#define TYPE1_NOTE_PCT	1.0
#define TYPE2_NOTE_PCT	5.0
#define TOP_TAKERS	3
#define TOP_REASONS	3
/* Interrupts delivered later than this at their p99 are a finding. */
#define IRQ_NOTE_NS	100000ULL
/* Halt-polling that took this share of a VM's time is a finding. */
#define HALT_POLL_NOTE_PCT	1.0
/* Below this share of polls that paid off, polling is said to waste. */
#define HALT_POLL_HIT_PCT	50.0
/*
 * TSC-deadline timers past their deadline by this at their p99 (as
 * interrupts), or fired early by this at their p50 (KVM busy-waits the
 * rest of each), are a finding.
 */
#define EXPIRE_EARLY_NOTE_NS	50000ULL

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static int by_lost(const void *pa, const void *pb)
{
	const struct vm *a = pa, *b = pb;
	double la = pct(a->steal.ready_ns + a->steal.handling_ns,
			a->st.observed_ns);
	double lb = pct(b->steal.ready_ns + b->steal.handling_ns,
			b->st.observed_ns);

	return la < lb ? 1 : la > lb ? -1 : (a->id > b->id) - (a->id < b->id);
}

static int by_stolen(const void *pa, const void *pb)
{
	const struct preemptor *a = pa, *b = pb;

	return a->stolen_ns < b->stolen_ns ? 1 : a->stolen_ns > b->stolen_ns ?
	       -1 : 0;
}

static int by_total(const void *pa, const void *pb)
{
	const struct exit_reason *a = pa, *b = pb;

	return a->total_ns < b->total_ns ? 1 : a->total_ns > b->total_ns ?
	       -1 : 0;
}

static void table(const struct vm *vms, size_t n)
{
	char obs[16], p99[16], name[sizeof(vms->name)];
	size_t i;

	printf("%-16s %7s %5s %10s %6s %9s %8s %6s %8s %6s %6s %11s\n",
	       "VM", "PID", "VCPUS", "OBSERVED", "GUEST%", "PREEMPT%",
	       "WAIT%", "KERN%", "VMMUSER%", "IDLE%", "BLK%", "P99-PREEMPT");
	for (i = 0; i < n; i++) {
		const struct vm *v = &vms[i];
		const struct states *s = &v->st;
		uint64_t q = hist_quantile(&v->h[VMLAT_HIST_PREEMPT], 0.99);

		if (q)
			fmt_ns(p99, sizeof(p99), q);
		else
			snprintf(p99, sizeof(p99), "-");
		printf("%-16.16s %7d %5zu %10s %6.1f %9.1f %8.1f %6.1f %8.1f %6.1f %6.1f %11s%s\n",
		       fmt_name(name, sizeof(name), v->name), v->pid,
		       v->nr_vcpus,
		       fmt_ns(obs, sizeof(obs), s->observed_ns),
		       pct(s->ns[VMLAT_GUEST], s->observed_ns),
		       pct(s->ns[VMLAT_PREEMPTED], s->observed_ns),
		       pct(s->ns[VMLAT_WAIT], s->observed_ns),
		       pct(s->ns[VMLAT_KERNEL], s->observed_ns),
		       pct(s->ns[VMLAT_USER], s->observed_ns),
		       pct(s->ns[VMLAT_IDLE], s->observed_ns),
		       pct(s->ns[VMLAT_BLOCKED], s->observed_ns), p99,
		       v->exited ? " (exited)" : "");
	}
}

/*
 * In a guest: who took its time, as totals (its host names no other
 * tenant's task or VM).
 */
static void guest_takers(FILE *o, const struct vm *v)
{
	const struct {
		const char *who;
		uint64_t ns;
	} t[] = {
		{ "host tasks", v->stolen_by_host },
		{ "other VMs", v->stolen_by_vms },
		{ "its own vCPUs", v->stolen_by_own },
	};
	char a[16];
	size_t i, shown = 0;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		if (!t[i].ns)
			continue;
		fprintf(o, "%s%s %s (%.1f%%)", shown ? ", " : "    taken by: ",
			t[i].who, fmt_ns(a, sizeof(a), t[i].ns),
			pct(t[i].ns, v->st.observed_ns));
		shown++;
	}
	if (shown)
		fprintf(o, ".\n");
}

/* Type 1: runnable, not running; who took the time. */
static void type1(FILE *o, const struct vm *v, const struct snap *s)
{
	uint64_t obs = v->st.observed_ns, idle_ns = 0, tasks_ns = 0;
	struct preemptor *pre;
	char a[16], b[16], c[16], who[128];
	size_t i, shown = 0;

	fprintf(o, "  - lost %.1f%% of its vCPU time (%s of %s) runnable but not running (type-1 steal): preempted %.1f%%, waiting for a CPU %.1f%%",
		pct(v->steal.ready_ns, obs),
		fmt_ns(a, sizeof(a), v->steal.ready_ns),
		fmt_ns(b, sizeof(b), obs), pct(v->steal.preempted_ns, obs),
		pct(v->steal.wait_ns, obs));
	if (v->h[VMLAT_HIST_PREEMPT].count)
		fprintf(o, "; its %llu preemptions lasted p99 %s, at most %s",
			(unsigned long long)v->h[VMLAT_HIST_PREEMPT].count,
			fmt_ns(c, sizeof(c), hist_quantile(&v->h[VMLAT_HIST_PREEMPT],
							   0.99)),
			fmt_ns(a, sizeof(a), v->h[VMLAT_HIST_PREEMPT].max_ns));
	fprintf(o, ".\n");
	if (s->guest) {
		guest_takers(o, v);
		return;
	}
	if (!v->nr_pre)
		return;
	pre = calloc(v->nr_pre, sizeof(*pre));
	if (!pre)
		return;
	memcpy(pre, v->pre, v->nr_pre * sizeof(*pre));
	qsort(pre, v->nr_pre, sizeof(*pre), by_stolen);
	for (i = 0; i < v->nr_pre; i++) {
		if (pre[i].kind == VMLAT_BY_IDLE)
			idle_ns += pre[i].stolen_ns;
		else if (pre[i].kind != VMLAT_BY_NONE)
			tasks_ns += pre[i].stolen_ns;
	}
	if (tasks_ns) {
		fprintf(o, "    taken by: ");
		for (i = 0; i < v->nr_pre && shown < TOP_TAKERS; i++) {
			if (pre[i].kind == VMLAT_BY_IDLE || pre[i].kind == VMLAT_BY_NONE)
				continue;
			preemptor_label(who, sizeof(who), &pre[i], s);
			fprintf(o, "%s%s %s (%.1f%%, %llu time%s)",
				shown ? ", " : "", who,
				fmt_ns(a, sizeof(a), pre[i].stolen_ns),
				pct(pre[i].stolen_ns, obs),
				(unsigned long long)pre[i].slices,
				pre[i].slices == 1 ? "" : "s");
			shown++;
		}
		if (v->pre_other_ns)
			fprintf(o, ", others %s", fmt_ns(a, sizeof(a),
						       v->pre_other_ns));
		fprintf(o, ".\n");
	}
	if (idle_ns)
		fprintf(o, "    %s of it (%.1f%%) was its CPU waking from idle to run it: no task took that time; a CPU kept out of deep idle (or idle=poll, a cpuidle governor for latency) gives it back.\n",
			fmt_ns(a, sizeof(a), idle_ns), pct(idle_ns, obs));
	free(pre);
}

/* Type 2: the host handling its exits, and the reasons behind. */
static void type2(FILE *o, const struct vm *v, const struct snap *s)
{
	uint64_t obs = v->st.observed_ns, all = 0;
	struct exit_reason *x;
	char a[16], b[16], c[16];
	size_t i;

	fprintf(o, "  - spent %.1f%% of its vCPU time (%s) in the host handling its %llu exits (type-2 steal): %.1f%% in the host kernel, %.1f%% in the VMM's userspace.\n",
		pct(v->steal.handling_ns, obs),
		fmt_ns(a, sizeof(a), v->steal.handling_ns),
		(unsigned long long)v->st.exits,
		pct(v->steal.kernel_ns, obs), pct(v->steal.user_ns, obs));
	if (!v->nr_exits)
		return;
	x = calloc(v->nr_exits, sizeof(*x));
	if (!x)
		return;
	memcpy(x, v->exits, v->nr_exits * sizeof(*x));
	qsort(x, v->nr_exits, sizeof(*x), by_total);
	for (i = 0; i < v->nr_exits; i++)
		all += x[i].total_ns;
	fprintf(o, "    behind it: ");
	for (i = 0; i < v->nr_exits && i < TOP_REASONS; i++)
		fprintf(o, "%s%s %.1f%% of the exits' time (%llu exits, %s in all, mean %s)",
			i ? ", " : "", x[i].name, pct(x[i].total_ns, all),
			(unsigned long long)x[i].count,
			fmt_ns(b, sizeof(b), x[i].total_ns),
			fmt_ns(c, sizeof(c), x[i].count ?
			       x[i].total_ns / x[i].count : 0));
	fprintf(o, ".\n");
	free(x);
}

static void nested(FILE *o, const struct vm *v, const struct snap *s)
{
	const struct nested *n = &v->nested;
	uint64_t l0 = n->l2_exits_l0, l1 = n->l2_exits_l1;
	char a[16], b[16], c[16], d[16];
	const struct nested_exit *top = NULL;
	size_t i;

	fprintf(o, "  - runs a nested guest (L2) on %d vCPU(s): L2 ran %s, its L1 hypervisor %s; of its %llu L2 exits, %llu were reflected to L1 and %llu handled by the host alone.\n",
		n->nr_vcpus, fmt_ns(a, sizeof(a), n->l2_ns),
		fmt_ns(b, sizeof(b), n->l1_ns),
		(unsigned long long)(l0 + l1), (unsigned long long)l1,
		(unsigned long long)l0);
	if (l1 && l0)
		fprintf(o, "    a reflected exit (a bounce through L1) costs %s on average against %s for one the host handles: %.1fx.\n",
			fmt_ns(c, sizeof(c), n->l2_exit_l1_ns / l1),
			fmt_ns(d, sizeof(d), n->l2_exit_l0_ns / l0),
			n->l2_exit_l0_ns ? ((double)n->l2_exit_l1_ns / l1) /
			((double)n->l2_exit_l0_ns / l0) : 0);
	else if (l1)
		fprintf(o, "    a reflected exit (a bounce through L1) costs %s on average.\n",
			fmt_ns(c, sizeof(c), n->l2_exit_l1_ns / l1));
	if (n->l2_sync_calls)
		fprintf(o, "    L2 made %llu clock-sync calls to L1 (%s each, not counted in its exits).\n",
			(unsigned long long)n->l2_sync_calls,
			fmt_ns(c, sizeof(c),
			       n->l2_sync_ns / n->l2_sync_calls));
	for (i = 0; i < n->nr_exits; i++)
		if (!top || n->exits[i].l1 > top->l1)
			top = &n->exits[i];
	if (top && top->l1)
		fprintf(o, "    the reason most reflected: %s (%llu of the %llu bounces).\n",
			top->name, (unsigned long long)top->l1,
			(unsigned long long)l1);
}

static void sync_state(FILE *o, const struct vm *v, const struct snap *sn)
{
	const struct sync *s = &v->sync;
	char a[16];
	uint64_t bad = s->malformed + s->replayed + s->unpaired;

	if (s->mapped)
		fprintf(o, "  - clock sync %s: %llu exchanges, guest clock mapped to the host's within +/- %s, drift %lld ppb.\n",
			s->state, (unsigned long long)s->exchanges_total,
			fmt_ns(a, sizeof(a), s->bound_ns),
			(long long)s->drift_ppb);
	else
		fprintf(o, "  - clock sync %s after %llu exchanges: no mapping of its clock yet%s.\n",
			s->state, (unsigned long long)s->exchanges_total,
			!strcmp(s->state, "waiting") ?
			" (it needs more exchanges)" :
			" (its guest's clock disagrees with what it sent before: restart the guest module)");
	if (s->user)
		fprintf(o, "    %llu calls came from guest user space (CPL 3): KVM refused them, vmlat counted them apart.\n",
			(unsigned long long)s->user);
	if (bad || s->refused || s->limited)
		fprintf(o, "    %llu calls were malformed, replayed or unpaired, %llu refused and %llu over the rate limit: not used.\n",
			(unsigned long long)bad, (unsigned long long)s->refused,
			(unsigned long long)s->limited);
}

/* Who took the most from all the VMs together. */
struct taker {
	char who[128];
	uint64_t ns;
	unsigned int vms;	/* how many VMs it took from */
	size_t last_vm;		/* the last of them, + 1 */
};

static int by_taken(const void *pa, const void *pb)
{
	const struct taker *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	return strcmp(a->who, b->who);
}

/* The takers of @vms, the most first, into @*t (NULL: none); how many. */
static size_t takers(struct taker **t, const struct vm *vms, size_t n,
		     const struct snap *s)
{
	size_t i, j, k, nt = 0, cap = 0;
	char who[128];

	for (i = 0; i < n; i++)
		cap += vms[i].nr_pre;
	*t = calloc(cap ? cap : 1, sizeof(**t));
	if (!*t)
		return 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < vms[i].nr_pre; j++) {
			const struct preemptor *p = &vms[i].pre[j];

			if (p->kind == VMLAT_BY_NONE || !p->stolen_ns)
				continue;
			preemptor_label(who, sizeof(who), p, s);
			/* A VM's own vCPUs are its own business. */
			if (p->kind == VMLAT_BY_SAME_VM)
				snprintf(who, sizeof(who), "VMs' own vCPUs");
			for (k = 0; k < nt && strcmp((*t)[k].who, who); k++)
				;
			if (k == nt)
				snprintf((*t)[nt++].who, sizeof((*t)->who), "%s",
					 who);
			(*t)[k].ns += p->stolen_ns;
			if ((*t)[k].last_vm != i + 1) {
				(*t)[k].vms++;
				(*t)[k].last_vm = i + 1;
			}
		}
	}
	qsort(*t, nt, sizeof(**t), by_taken);
	return nt;
}

/* What a report is made of, collected before a line of it is printed. */
struct report {
	const struct report_params *p;
	struct window win;
	struct vm *vms;		/* over the window; the most lost first */
	size_t n;
	size_t idle;		/* VMs with no vCPU time in the window */
	struct taker *takers;	/* from all of them, the most first */
	size_t nr_takers;
};

/* The summary's sentences (after "Summary: "). */
static void summary(FILE *o, const struct report *r)
{
	const struct vm *v = &r->vms[0];
	char a[16], name[sizeof(v->name)];
	size_t k;

	if (v->steal.ready_ns + v->steal.handling_ns)
		fprintf(o, "%s lost the most, %.1f%% of its time (%.1f%% runnable but not running, %.1f%% in exit handling).",
			fmt_name(name, sizeof(name), v->name),
			pct(v->steal.ready_ns + v->steal.handling_ns,
			    v->st.observed_ns),
			pct(v->steal.ready_ns, v->st.observed_ns),
			pct(v->steal.handling_ns, v->st.observed_ns));
	else
		fprintf(o, "no VM lost time.");
	if (r->nr_takers) {
		fprintf(o, " Who took the most from the VMs: ");
		for (k = 0; k < r->nr_takers && k < TOP_TAKERS; k++)
			fprintf(o, "%s%s %s (from %u VM%s)", k ? ", " : "",
				r->takers[k].who,
				fmt_ns(a, sizeof(a), r->takers[k].ns),
				r->takers[k].vms, r->takers[k].vms > 1 ? "s" : "");
		fprintf(o, ".");
	}
}

/*
 * The findings of the diagnosis on a VM, in their order: whether the VM
 * has each (@has) and its lines (@print: "  - " the first, "    " the
 * others).
 */
static bool has_partly(const struct vm *v)
{
	return v->partly;
}

static void partly(FILE *o, const struct vm *v, const struct snap *s)
{
	fprintf(o, "  - partly tracked: vmlat turned one of its vCPU threads away at its caps (max_vms, max_vcpus), and its figures miss that thread's time; the status file's tables line says how full they are.\n");
}

static bool has_type1(const struct vm *v)
{
	return pct(v->steal.ready_ns, v->st.observed_ns) >= TYPE1_NOTE_PCT;
}

static bool has_type2(const struct vm *v)
{
	return pct(v->steal.handling_ns, v->st.observed_ns) >= TYPE2_NOTE_PCT;
}

static bool has_nested(const struct vm *v)
{
	return v->nested.nr_vcpus;
}

static bool has_sync(const struct vm *v)
{
	return v->sync.present;
}

/* Whether @v's interrupts of source @src came late enough to say so. */
static bool irq_late(const struct vm *v, int src)
{
	return hist_quantile(&v->h[HK_IRQ(src)], 0.99) >= IRQ_NOTE_NS;
}

static bool has_irq(const struct vm *v)
{
	int src;

	for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++)
		if (irq_late(v, src))
			return true;
	return false;
}

/* Where a vCPU was while an interrupt for it was pending, in prose. */
static const char *const irq_at_prose[VMLAT_NR_IRQ_ATS] = {
	[VMLAT_AT_GUEST] = "running in the guest",
	[VMLAT_AT_HOST] = "in the host handling an exit",
	[VMLAT_AT_HALTED] = "halted (its wake-up and the wait for its CPU)",
	[VMLAT_AT_PREEMPTED] = "preempted or waiting for its CPU",
	[VMLAT_AT_BLOCKED] = "blocked in the host",
};

static const char *const irq_src_prose[VMLAT_NR_IRQ_SOURCES] = {
	[VMLAT_IRQ_TIMER] = "LAPIC timer interrupts",
	[VMLAT_IRQ_IPI] = "IPIs",
	[VMLAT_IRQ_DEVICE] = "device interrupts",
	[VMLAT_IRQ_OTHER] = "other interrupts",
};

/*
 * Who took the most of @v's vCPUs' time while they were runnable (a
 * task, or a CPU waking from idle), in @who; false if nobody.
 */
static bool top_taker(const struct vm *v, const struct snap *s, char *who,
		      size_t n)
{
	const struct preemptor *top = NULL;
	size_t i;

	for (i = 0; i < v->nr_pre; i++) {
		if (v->pre[i].kind == VMLAT_BY_NONE)
			continue;
		if (!top || v->pre[i].stolen_ns > top->stolen_ns)
			top = &v->pre[i];
	}
	if (!top)
		return false;
	preemptor_label(who, n, top, s);
	return true;
}

/*
 * Each source whose deliveries came late: how late, where the target
 * was, how much of it the target waited for a CPU, and who took CPUs from
 * the VM the most.
 */
static void irq_delivery(FILE *o, const struct vm *v, const struct snap *s)
{
	const struct hist *h;
	uint64_t sum, lost, wait;
	char a[16], b[16], c[16], who[128];
	int src, at, n;

	for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
		if (!irq_late(v, src))
			continue;
		h = &v->h[HK_IRQ(src)];
		fprintf(o, "  - its %s were delivered p99 %s late (max %s, mean %s, %llu delivered",
			irq_src_prose[src],
			fmt_ns(a, sizeof(a), hist_quantile(h, 0.99)),
			fmt_ns(b, sizeof(b), h->max_ns),
			fmt_ns(c, sizeof(c), h->count ? h->sum_ns / h->count : 0),
			(unsigned long long)h->count);
		for (at = 0, sum = 0, lost = 0, wait = 0; at < VMLAT_NR_IRQ_ATS;
		     at++) {
			sum += v->irq[src][at].sum_ns;
			lost += v->irq[src][at].lost;
			wait += v->irq[src][at].wait_ns;
		}
		if (lost)
			fprintf(o, ", %llu never seen delivered",
				(unsigned long long)lost);
		fprintf(o, ")");
		for (at = 0, n = 0; at < VMLAT_NR_IRQ_ATS && sum; at++) {
			if (!v->irq[src][at].sum_ns)
				continue;
			fprintf(o, "%s%.1f%% %s", n++ ? ", " : "; of that time, ",
				pct(v->irq[src][at].sum_ns, sum),
				irq_at_prose[at]);
		}
		if (wait && sum) {
			fprintf(o, "; %.1f%% waiting for a CPU",
				pct(wait > sum ? sum : wait, sum));
			if (top_taker(v, s, who, sizeof(who)))
				fprintf(o, " (the VM's waits: mostly %s)", who);
		}
		fprintf(o, ".\n");
	}
}

static bool has_halt_poll(const struct vm *v)
{
	return pct(v->halt.hit_ns + v->halt.miss_ns, v->st.observed_ns) >=
	       HALT_POLL_NOTE_PCT;
}

/*
 * What KVM's halt-polling cost the VM's host CPUs, what share paid off,
 * and what a poll that paid off saved: about the wake-up of a halt that
 * slept, from its wake-up to its end.
 */
static void halt_poll(FILE *o, const struct vm *v, const struct snap *s)
{
	const struct halt *h = &v->halt;
	uint64_t cpu = h->hit_ns + h->miss_ns;
	char a[16], b[16], c[16];

	fprintf(o, "  - its vCPUs polled for %s of CPU in their halts (%.1f%% of their time): %llu of %llu polls paid off (%.1f%%)",
		fmt_ns(a, sizeof(a), cpu), pct(cpu, v->st.observed_ns),
		(unsigned long long)h->hits, (unsigned long long)h->polled,
		pct(h->hits, h->polled));
	if (h->polled > h->hits)
		fprintf(o, ", the %llu that did not took %s",
			(unsigned long long)(h->polled - h->hits),
			fmt_ns(b, sizeof(b), h->miss_ns));
	if (h->woken)
		fprintf(o, "; one that pays off saves about the %s a halt that slept took from its wake-up to its end (%llu such halts)",
			fmt_ns(c, sizeof(c), h->wake_ns / h->woken),
			(unsigned long long)h->woken);
	if (pct(h->hits, h->polled) < HALT_POLL_HIT_PCT)
		fprintf(o, "; most polls did not pay off: KVM's halt_poll_ns (or the VM's KVM_CAP_HALT_POLL) bounds what they cost");
	fprintf(o, ".\n");
}

static bool timer_late(const struct vm *v)
{
	return hist_quantile(&v->h[HK_EXPIRE(VMLAT_EXPIRE_LATE)], 0.99) >=
	       IRQ_NOTE_NS;
}

static bool has_timer_deadline(const struct vm *v)
{
	return timer_late(v) ||
	       hist_quantile(&v->h[HK_EXPIRE(VMLAT_EXPIRE_EARLY)], 0.5) >=
	       EXPIRE_EARLY_NOTE_NS;
}

/*
 * Whether KVM's timer advance fits the host, from its TSC-deadline
 * timers at the VM entries that delivered them: how many reached the
 * guest past their deadline and how late, and how many fired early and
 * what KVM's busy-wait to the deadline cost.
 */
static void timer_deadline(FILE *o, const struct vm *v, const struct snap *s)
{
	const struct hist *late = &v->h[HK_EXPIRE(VMLAT_EXPIRE_LATE)];
	const struct hist *early = &v->h[HK_EXPIRE(VMLAT_EXPIRE_EARLY)];
	char a[16], b[16], c[16];

	fprintf(o, "  - its TSC-deadline timers: %llu of %llu reached the guest past their deadline",
		(unsigned long long)late->count,
		(unsigned long long)(late->count + early->count));
	if (late->count)
		fprintf(o, ", p99 %s late (max %s, mean %s)",
			fmt_ns(a, sizeof(a), hist_quantile(late, 0.99)),
			fmt_ns(b, sizeof(b), late->max_ns),
			fmt_ns(c, sizeof(c), late->sum_ns / late->count));
	if (early->count)
		fprintf(o, "; %llu fired early, and KVM busy-waited %s of CPU to their deadlines (p50 %s each)",
			(unsigned long long)early->count,
			fmt_ns(a, sizeof(a), early->sum_ns),
			fmt_ns(b, sizeof(b), hist_quantile(early, 0.5)));
	if (timer_late(v))
		fprintf(o, "; KVM's timer advance (lapic_timer_advance_ns) did not cover the host's part: its timer firing (an hrtimer, or VMX's preemption timer), then the vCPU's wake-up and wait for a CPU (the LAPIC timer's delivery)");
	else
		fprintf(o, "; KVM's timer advance (lapic_timer_advance_ns) is more than this host needs");
	fprintf(o, ".\n");
}

static bool has_lock_holder(const struct vm *v)
{
	return v->lhp.count;
}

/*
 * Its vCPUs' preemptions during which another of its vCPUs spun (PAUSE
 * exits, Hyper-V long-spin-wait calls): how many, how long, and who held
 * the CPU in the longest.
 */
static void lock_holder(FILE *o, const struct vm *v, const struct snap *s)
{
	const struct lock_holder *l = &v->lhp;
	char a[16], b[16], who[256];

	fprintf(o, "  - lock-holder preemption suspected %llu times: a vCPU was preempted while another of its vCPUs spun (%llu PAUSE exits or long-spin-wait calls), %s in all, the longest %s",
		(unsigned long long)l->count, (unsigned long long)l->spins,
		fmt_ns(a, sizeof(a), l->ns), fmt_ns(b, sizeof(b), l->max_ns));
	if (l->max_by.kind != VMLAT_BY_NONE)
		fprintf(o, ", by %s",
			preemptor_label(who, sizeof(who), &l->max_by, s));
	fprintf(o, "; a guest spinlock's holder waits for its CPU while the others spin: fewer vCPUs than free CPUs, pinning, or paravirtual spinlocks (KVM_FEATURE_PV_UNHALT) avoid it.\n");
}

static const struct {
	const char *kind;	/* its name in report --json */
	bool (*has)(const struct vm *v);
	void (*print)(FILE *o, const struct vm *v, const struct snap *s);
} findings[] = {
	{ "partly_tracked", has_partly, partly },
	{ "type1_steal", has_type1, type1 },
	{ "type2_steal", has_type2, type2 },
	{ "nested", has_nested, nested },
	{ "clock_sync", has_sync, sync_state },
	{ "irq_delivery", has_irq, irq_delivery },
	{ "halt_polling", has_halt_poll, halt_poll },
	{ "timer_deadline", has_timer_deadline, timer_deadline },
	{ "lock_holder", has_lock_holder, lock_holder },
};

#define NR_FINDINGS	ARRAY_SIZE(findings)

static bool has_findings(const struct vm *v)
{
	size_t f;

	for (f = 0; f < NR_FINDINGS; f++)
		if (findings[f].has(v))
			return true;
	return false;
}

struct report_params {
	struct common_params common;	/* the VM, -d */
	bool json;			/* --json */
};

#define OPT_JSON	256

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmlat report [-d DURATION] [--json] [VM]\n"
		"  per VM where its time went, then a diagnosis: who lost time, to whom,\n"
		"  type-1 and type-2 steal and the exits behind it, nested bounces, clock sync\n"
		"  -d DURATION  over the next DURATION (10s, 1m) rather than since load\n"
		"  --json       the report as one JSON document, for scripts: per VM its\n"
		"               times (ns), shares, steal, exits, latency percentiles,\n"
		"               preemptors and the diagnosis's findings; null for none\n"
		"  VM           only this VM (its name, VMM pid, or id:N)\n");
}

static int parse_opt(int opt, const char *arg, struct common_params *common)
{
	struct report_params *p = container_of(common, struct report_params,
					       common);

	if (opt != OPT_JSON)
		return EXIT_USAGE;
	p->json = true;
	return 0;
}

static const struct option report_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

static const struct cmd_options report_cmd = {
	.name = "report",
	.duration = true,
	.longopts = report_longopts,
	.usage = usage,
	.parse_opt = parse_opt,
};

static void report_free(struct report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		vm_free(&r->vms[i]);
	free(r->vms);
	free(r->takers);
	window_free(&r->win);
}

/* Read, and the VMs to report on, sorted: 0, or -1 (its message out). */
static int report_collect(struct report *r, const struct report_params *rp)
{
	const struct common_params *p = &rp->common;
	const struct snap *s;
	char w[16];
	size_t i;

	memset(r, 0, sizeof(*r));
	r->p = rp;
	if (window_read(&r->win, p->duration_ms))
		return -1;
	s = &r->win.cur;
	r->vms = calloc(s->nr_vms ? s->nr_vms : 1, sizeof(*r->vms));
	if (!r->vms) {
		window_free(&r->win);
		return -1;
	}
	for (i = 0; i < s->nr_vms; i++) {
		const struct vm *v = &s->vms[i];
		struct vm *d = &r->vms[r->n];

		if (!vm_matches(v, p->filter))
			continue;
		window_vm(d, &r->win, v);
		/* Gone before the window, or before a reset: nothing to say. */
		if (!d->st.observed_ns) {
			vm_free(d);
			r->idle++;
			continue;
		}
		r->n++;
	}
	if (!r->n) {
		if (p->filter)
			fprintf(stderr, "vmlat report: no VM %s\n", p->filter);
		else if (p->duration_ms)
			fprintf(stderr, "vmlat report: no VM ran in those %s\n",
				fmt_ns(w, sizeof(w), p->duration_ms * 1000000ULL));
		else
			fprintf(stderr, "vmlat report: no VM has run since vmlat was loaded or reset\n");
		report_free(r);
		return -1;
	}
	qsort(r->vms, r->n, sizeof(*r->vms), by_lost);
	r->nr_takers = takers(&r->takers, r->vms, r->n, s);
	return 0;
}

/* Per VM worth a word, the most lost first: what it lost, and to whom. */
static void diagnosis(const struct report *r)
{
	const struct snap *s = &r->win.cur;
	char name[sizeof(r->vms->name)];
	size_t i, f, quiet = 0;

	printf("\nDiagnosis (VMs that lost the most first):\n");
	for (i = 0; i < r->n; i++) {
		const struct vm *v = &r->vms[i];

		if (!has_findings(v)) {
			quiet++;
			continue;
		}
		if (s->guest)
			printf("\n%s (this guest):\n",
			       fmt_name(name, sizeof(name), v->name));
		else
			printf("\n%s (pid %d, vm_id %u)%s:\n",
			       fmt_name(name, sizeof(name), v->name), v->pid,
			       v->id, v->exited ? ", exited" : "");
		for (f = 0; f < NR_FINDINGS; f++)
			if (findings[f].has(v))
				findings[f].print(stdout, v, s);
	}
	if (quiet)
		printf("\n%zu other VM(s) lost less than %.0f%% of their time to preemption and waiting and less than %.0f%% to exit handling.\n",
		       quiet, TYPE1_NOTE_PCT, TYPE2_NOTE_PCT);
}

static void report_print(const struct report *r)
{
	const struct snap *s = &r->win.cur;
	char w[16];

	if (s->guest && r->p->common.duration_ms)
		printf("vmlat report: this guest over %s, as its host's vmlat measured it (vmlat %s)\n\n",
		       fmt_ns(w, sizeof(w), window_ns(&r->win)), s->version);
	else if (s->guest)
		printf("vmlat report: this guest, as its host's vmlat measured it: totals since that vmlat was loaded or reset (vmlat %s)\n\n",
		       s->version);
	else if (r->p->common.duration_ms)
		printf("vmlat report: %zu VMs over %s (vmlat %s)\n\n", r->n,
		       fmt_ns(w, sizeof(w), window_ns(&r->win)), s->version);
	else
		printf("vmlat report: %zu VMs, totals since vmlat was loaded or reset (vmlat %s)\n\n",
		       r->n, s->version);
	table(r->vms, r->n);
	if (r->idle)
		printf("(and %zu VM(s) with no vCPU time in it: exited before)\n",
		       r->idle);
	diagnosis(r);
	printf("\nSummary: ");
	summary(stdout, r);
	printf("\n");
	if (s->guest)
		printf("\nThis guest's kernel %s: its tasks' run times %s the time its vCPUs were runnable but not running.\n",
		       !strcmp(s->steal_accounting, "subtracted") ?
		       "subtracts the steal time KVM reports (CONFIG_PARAVIRT_TIME_ACCOUNTING)" :
		       "does not subtract the steal time KVM reports",
		       !strcmp(s->steal_accounting, "subtracted") ?
		       "leave out" : "include");
	if (s->dropped_vms || s->dropped_vcpus)
		printf("\nvmlat dropped %llu VMs and %llu vCPUs: its tables were full; load it with larger max_vms and max_vcpus.\n",
		       (unsigned long long)s->dropped_vms,
		       (unsigned long long)s->dropped_vcpus);
}

/*
 * --json: the report as one JSON document. Times in ns (integers), shares
 * as ratios of the time observed, names as the text shows them (valid
 * UTF-8, no control character), null for none.
 */
static json_object *ju(uint64_t v)
{
	return json_object_new_uint64(v);
}

/* @v, or null if it is 0 (none: a quantile of no sample, "-" in text). */
static json_object *ju_or_null(uint64_t v)
{
	return v ? ju(v) : NULL;
}

static json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static void add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

/* The fields @f (a table of snap.c's) of the struct at @base. */
static void add_fields(json_object *o, const void *base,
		       const struct field *f, size_t n)
{
	const char *p;
	size_t i;

	for (i = 0; i < n; i++) {
		p = (const char *)base + f[i].off;
		add(o, f[i].key, f[i].is_signed ?
		    json_object_new_int64(*(const int64_t *)p) :
		    ju(*(const uint64_t *)p));
	}
}

/* A latency histogram: its count, sum, and percentiles as the text's. */
static json_object *hist_json(const struct hist *h)
{
	static const struct {
		const char *key;
		double q;
	} qs[] = {
		{ "p50_ns", 0.50 }, { "p90_ns", 0.90 }, { "p99_ns", 0.99 },
		{ "p99_9_ns", 0.999 },
	};
	json_object *o = json_object_new_object();
	size_t i;

	add(o, "count", ju(h->count));
	add(o, "sum_ns", ju(h->sum_ns));
	add(o, "min_ns", h->count ? ju(h->min_ns) : NULL);
	for (i = 0; i < ARRAY_SIZE(qs); i++)
		add(o, qs[i].key, ju_or_null(hist_quantile(h, qs[i].q)));
	add(o, "max_ns", h->count ? ju(h->max_ns) : NULL);
	return o;
}

static json_object *preemptors_json(const struct vm *v, const struct snap *s)
{
	json_object *a = json_object_new_array(), *o;
	struct preemptor *pre;
	char who[128], comm[sizeof(pre->comm)];
	bool by_vm;
	size_t i;

	pre = calloc(v->nr_pre ? v->nr_pre : 1, sizeof(*pre));
	if (!pre)
		return a;
	memcpy(pre, v->pre, v->nr_pre * sizeof(*pre));
	qsort(pre, v->nr_pre, sizeof(*pre), by_stolen);
	for (i = 0; i < v->nr_pre; i++) {
		const struct preemptor *p = &pre[i];

		by_vm = p->kind == VMLAT_BY_VM || p->kind == VMLAT_BY_SAME_VM;
		o = json_object_new_object();
		add(o, "who", jstr(preemptor_label(who, sizeof(who), p, s)));
		add(o, "kind", jstr(pkind_names[p->kind]));
		add(o, "pid", p->kind == VMLAT_BY_HOST || by_vm ?
		    json_object_new_int(p->pid) : NULL);
		add(o, "comm", p->comm[0] ?
		    jstr(fmt_name(comm, sizeof(comm), p->comm)) : NULL);
		add(o, "vm_pid", by_vm ? json_object_new_int(p->vm_pid) : NULL);
		add(o, "vcpu", by_vm ? json_object_new_int(p->vcpu) : NULL);
		add(o, "cpu", p->kind == VMLAT_BY_IDLE ?
		    json_object_new_int(p->cpu) : NULL);
		add(o, "stolen_ns", ju(p->stolen_ns));
		add(o, "slices", ju(p->slices));
		json_object_array_add(a, o);
	}
	free(pre);
	return a;
}

static json_object *exit_reasons_json(const struct vm *v)
{
	json_object *a = json_object_new_array(), *o;
	struct exit_reason *x;
	size_t i;

	x = calloc(v->nr_exits ? v->nr_exits : 1, sizeof(*x));
	if (!x)
		return a;
	memcpy(x, v->exits, v->nr_exits * sizeof(*x));
	qsort(x, v->nr_exits, sizeof(*x), by_total);
	for (i = 0; i < v->nr_exits; i++) {
		o = json_object_new_object();
		add(o, "isa", jstr(x[i].isa));
		add(o, "code", ju(x[i].code));
		add(o, "name", jstr(x[i].name));
		add(o, "count", ju(x[i].count));
		add(o, "total_ns", ju(x[i].total_ns));
		add(o, "mean_ns", x[i].count ? ju(x[i].total_ns / x[i].count) :
		    NULL);
		json_object_array_add(a, o);
	}
	free(x);
	return a;
}

static json_object *nested_json(const struct vm *v)
{
	const struct nested *n = &v->nested;
	json_object *o, *a, *e;
	size_t i;

	if (!n->nr_vcpus)
		return NULL;
	o = json_object_new_object();
	add(o, "vcpus", json_object_new_int(n->nr_vcpus));
	add_fields(o, n, nested_fields, nr_nested_fields);
	a = json_object_new_array();
	for (i = 0; i < n->nr_exits; i++) {
		e = json_object_new_object();
		add(e, "name", jstr(n->exits[i].name));
		add(e, "handled_by_l0", ju(n->exits[i].l0));
		add(e, "reflected_to_l1", ju(n->exits[i].l1));
		json_object_array_add(a, e);
	}
	add(o, "exits", a);
	return o;
}

static json_object *sync_json(const struct vm *v)
{
	const struct sync *sy = &v->sync;
	json_object *o;

	if (!sy->present)
		return NULL;
	o = json_object_new_object();
	add(o, "state", jstr(sy->state));
	add(o, "mapped", json_object_new_boolean(sy->mapped));
	add(o, "exchanges_total", ju(sy->exchanges_total));
	add_fields(o, sy, sync_fields, nr_sync_fields);
	/* The fit holds only while the guest's clock is mapped. */
	if (!sy->mapped) {
		add(o, "drift_ppb", NULL);
		add(o, "offset_ns", NULL);
		add(o, "bound_ns", NULL);
	}
	return o;
}

/* The lines of finding @f on @v, without their marks ("  - ", "    "). */
static json_object *finding_json(size_t f, const struct vm *v,
				 const struct snap *s)
{
	json_object *o = json_object_new_object(), *lines;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *m;

	add(o, "kind", jstr(findings[f].kind));
	lines = json_object_new_array();
	add(o, "text", lines);
	m = open_memstream(&buf, &len);
	if (!m)
		return o;
	findings[f].print(m, v, s);
	fclose(m);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " ");
		if (!strncmp(line, "- ", 2))
			line += 2;
		json_object_array_add(lines, jstr(line));
	}
	free(buf);
	return o;
}

static json_object *vm_json(const struct vm *v, const struct snap *s)
{
	const struct states *st = &v->st;
	json_object *o = json_object_new_object(), *t, *sh, *l, *fs;
	char name[sizeof(v->name)];
	size_t f;
	int k;

	add(o, "vm", jstr(fmt_name(name, sizeof(name), v->name)));
	add(o, "pid", json_object_new_int(v->pid));
	add(o, "vm_id", ju(v->id));
	add(o, "uuid", v->uuid[0] ? jstr(v->uuid) : NULL);
	add(o, "comm", jstr(fmt_name(name, sizeof(name), v->comm)));
	add(o, "vcpus", ju(v->nr_vcpus));
	add(o, "exited", json_object_new_boolean(v->exited));
	add(o, "partly_tracked", json_object_new_boolean(v->partly));
	add(o, "observed_ns", ju(st->observed_ns));
	t = json_object_new_object();
	sh = json_object_new_object();
	for (k = 0; k < VMLAT_NR_STATES; k++) {
		add(t, state_names[k], ju(st->ns[k]));
		add(sh, state_names[k], json_object_new_double(
			pct(st->ns[k], st->observed_ns) / 100));
	}
	add(o, "time_ns", t);
	add(o, "shares", sh);
	t = json_object_new_object();
	add(t, "ready_ns", ju(v->steal.ready_ns));
	add(t, "preempted_ns", ju(v->steal.preempted_ns));
	add(t, "wait_ns", ju(v->steal.wait_ns));
	add(t, "handling_ns", ju(v->steal.handling_ns));
	add(t, "kernel_ns", ju(v->steal.kernel_ns));
	add(t, "user_ns", ju(v->steal.user_ns));
	add(o, "steal", t);
	add(o, "exits", ju(st->exits));
	add(o, "exit_reasons", exit_reasons_json(v));
	l = json_object_new_object();
	for (k = 0; k < NR_HK; k++)
		if ((!hk_is_nested(k) || v->nested.nr_vcpus) &&
		    (!hk_is_irq(k) || v->h[k].count))
			add(l, hkind_names[k], hist_json(&v->h[k]));
	add(o, "latency", l);
	add(o, "preemptors", preemptors_json(v, s));
	add(o, "preemptors_other_ns", ju(v->pre_other_ns));
	add(o, "nested", nested_json(v));
	add(o, "sync", sync_json(v));
	fs = json_object_new_array();
	for (f = 0; f < NR_FINDINGS; f++)
		if (findings[f].has(v))
			json_object_array_add(fs, finding_json(f, v, s));
	add(o, "findings", fs);
	return o;
}

static json_object *summary_json(const struct report *r)
{
	const struct vm *v = &r->vms[0];
	json_object *o = json_object_new_object(), *m = NULL, *a, *t;
	char name[sizeof(v->name)], *buf = NULL;
	size_t k, len = 0;
	FILE *f;

	if (v->steal.ready_ns + v->steal.handling_ns) {
		m = json_object_new_object();
		add(m, "vm", jstr(fmt_name(name, sizeof(name), v->name)));
		add(m, "pid", json_object_new_int(v->pid));
		add(m, "vm_id", ju(v->id));
		add(m, "lost_ns", ju(v->steal.ready_ns + v->steal.handling_ns));
	}
	add(o, "most_lost", m);
	a = json_object_new_array();
	for (k = 0; k < r->nr_takers; k++) {
		t = json_object_new_object();
		add(t, "who", jstr(r->takers[k].who));
		add(t, "stolen_ns", ju(r->takers[k].ns));
		add(t, "vms", ju(r->takers[k].vms));
		json_object_array_add(a, t);
	}
	add(o, "takers", a);
	f = open_memstream(&buf, &len);
	if (f) {
		summary(f, r);
		fclose(f);
		add(o, "text", jstr(buf));
		free(buf);
	}
	return o;
}

/* In a guest: who took its time, and its kernel's steal accounting. */
static json_object *guest_json(const struct report *r)
{
	const struct vm *v = &r->vms[0];
	json_object *o = json_object_new_object();

	add(o, "steal_accounting", jstr(r->win.cur.steal_accounting));
	add(o, "taken_by_host_tasks_ns", ju(v->stolen_by_host));
	add(o, "taken_by_other_vms_ns", ju(v->stolen_by_vms));
	add(o, "taken_by_own_vcpus_ns", ju(v->stolen_by_own));
	return o;
}

static int report_json(const struct report *r)
{
	const struct snap *s = &r->win.cur;
	json_object *o = json_object_new_object(), *a, *d;
	size_t i;
	int ret = 0;

	add(o, "version", jstr(s->version));
	add(o, "window_ns", r->p->common.duration_ms ?
	    ju(window_ns(&r->win)) : NULL);
	a = json_object_new_array();
	for (i = 0; i < r->n; i++)
		json_object_array_add(a, vm_json(&r->vms[i], s));
	add(o, "vms", a);
	add(o, "vms_without_time", ju(r->idle));
	if (s->guest)
		add(o, "guest", guest_json(r));
	add(o, "summary", summary_json(r));
	d = json_object_new_object();
	add(d, "vms", ju(s->dropped_vms));
	add(d, "vcpus", ju(s->dropped_vcpus));
	add(o, "dropped", d);
	if (printf("%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 || fflush(stdout)) {
		fprintf(stderr, "vmlat report: cannot write the report\n");
		ret = EXIT_ERR;
	}
	json_object_put(o);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_params p = { 0 };
	struct report r;
	int ret;

	ret = common_parse_options(argc, argv, &report_cmd, &p.common);
	if (ret >= 0)
		return ret;
	if (report_collect(&r, &p))
		return EXIT_ERR;
	if (p.json) {
		ret = report_json(&r);
	} else {
		report_print(&r);
		ret = 0;
	}
	report_free(&r);
	return ret;
}

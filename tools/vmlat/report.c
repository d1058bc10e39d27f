// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat report: one run (the totals since load, or a window of -d), a
 * table per VM, and a diagnosis in plain words, in the way of rtla's
 * auto-analysis: which VMs lost the most time and to whom (a host task,
 * another VM's vCPU, the idle CPU waking up), type-1 steal (runnable,
 * not running) against type-2 (the host handling exits) and the exit
 * reasons behind type 2, the cost of nested bounces, and the state of
 * clock sync. Every claim comes with its number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmlat.h"

/* Below these shares of its time, a VM's loss is not worth a finding. */
#define TYPE1_NOTE_PCT	1.0
#define TYPE2_NOTE_PCT	5.0
#define TOP_TAKERS	3
#define TOP_REASONS	3

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

/* Type 1: runnable, not running; who took the time. */
static void type1(const struct vm *v, const struct snap *s)
{
	uint64_t obs = v->st.observed_ns, idle_ns = 0, tasks_ns = 0;
	struct preemptor *pre;
	char a[16], b[16], c[16], who[128];
	size_t i, shown = 0;

	printf("  - lost %.1f%% of its vCPU time (%s of %s) runnable but not running (type-1 steal): preempted %.1f%%, waiting for a CPU %.1f%%",
	       pct(v->steal.ready_ns, obs),
	       fmt_ns(a, sizeof(a), v->steal.ready_ns),
	       fmt_ns(b, sizeof(b), obs), pct(v->steal.preempted_ns, obs),
	       pct(v->steal.wait_ns, obs));
	if (v->h[VMLAT_HIST_PREEMPT].count)
		printf("; its %llu preemptions lasted p99 %s, at most %s",
		       (unsigned long long)v->h[VMLAT_HIST_PREEMPT].count,
		       fmt_ns(c, sizeof(c), hist_quantile(&v->h[VMLAT_HIST_PREEMPT],
							  0.99)),
		       fmt_ns(a, sizeof(a), v->h[VMLAT_HIST_PREEMPT].max_ns));
	printf(".\n");
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
		printf("    taken by: ");
		for (i = 0; i < v->nr_pre && shown < TOP_TAKERS; i++) {
			if (pre[i].kind == VMLAT_BY_IDLE || pre[i].kind == VMLAT_BY_NONE)
				continue;
			preemptor_label(who, sizeof(who), &pre[i], s);
			printf("%s%s %s (%.1f%%, %llu time%s)",
			       shown ? ", " : "", who,
			       fmt_ns(a, sizeof(a), pre[i].stolen_ns),
			       pct(pre[i].stolen_ns, obs),
			       (unsigned long long)pre[i].slices,
			       pre[i].slices == 1 ? "" : "s");
			shown++;
		}
		if (v->pre_other_ns)
			printf(", others %s", fmt_ns(a, sizeof(a),
						      v->pre_other_ns));
		printf(".\n");
	}
	if (idle_ns)
		printf("    %s of it (%.1f%%) was its CPU waking from idle to run it: no task took that time; a CPU kept out of deep idle (or idle=poll, a cpuidle governor for latency) gives it back.\n",
		       fmt_ns(a, sizeof(a), idle_ns), pct(idle_ns, obs));
	free(pre);
}

/* Type 2: the host handling its exits, and the reasons behind. */
static void type2(const struct vm *v)
{
	uint64_t obs = v->st.observed_ns, all = 0;
	struct exit_reason *x;
	char a[16], b[16], c[16];
	size_t i;

	printf("  - spent %.1f%% of its vCPU time (%s) in the host handling its %llu exits (type-2 steal): %.1f%% in the host kernel, %.1f%% in the VMM's userspace.\n",
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
	printf("    behind it: ");
	for (i = 0; i < v->nr_exits && i < TOP_REASONS; i++)
		printf("%s%s %.1f%% of the exits' time (%llu exits, %s in all, mean %s)",
		       i ? ", " : "", x[i].name, pct(x[i].total_ns, all),
		       (unsigned long long)x[i].count,
		       fmt_ns(b, sizeof(b), x[i].total_ns),
		       fmt_ns(c, sizeof(c), x[i].count ?
			      x[i].total_ns / x[i].count : 0));
	printf(".\n");
	free(x);
}

static void nested(const struct vm *v)
{
	const struct nested *n = &v->nested;
	uint64_t l0 = n->l2_exits_l0, l1 = n->l2_exits_l1;
	char a[16], b[16], c[16], d[16];
	const struct nested_exit *top = NULL;
	size_t i;

	printf("  - runs a nested guest (L2) on %d vCPU(s): L2 ran %s, its L1 hypervisor %s; of its %llu L2 exits, %llu were reflected to L1 and %llu handled by the host alone.\n",
	       n->nr_vcpus, fmt_ns(a, sizeof(a), n->l2_ns),
	       fmt_ns(b, sizeof(b), n->l1_ns),
	       (unsigned long long)(l0 + l1), (unsigned long long)l1,
	       (unsigned long long)l0);
	if (l1 && l0)
		printf("    a reflected exit (a bounce through L1) costs %s on average against %s for one the host handles: %.1fx.\n",
		       fmt_ns(c, sizeof(c), n->l2_exit_l1_ns / l1),
		       fmt_ns(d, sizeof(d), n->l2_exit_l0_ns / l0),
		       n->l2_exit_l0_ns ? ((double)n->l2_exit_l1_ns / l1) /
		       ((double)n->l2_exit_l0_ns / l0) : 0);
	else if (l1)
		printf("    a reflected exit (a bounce through L1) costs %s on average.\n",
		       fmt_ns(c, sizeof(c), n->l2_exit_l1_ns / l1));
	if (n->l2_sync_calls)
		printf("    L2 made %llu clock-sync calls to L1 (%s each, not counted in its exits).\n",
		       (unsigned long long)n->l2_sync_calls,
		       fmt_ns(c, sizeof(c),
			      n->l2_sync_ns / n->l2_sync_calls));
	for (i = 0; i < n->nr_exits; i++)
		if (!top || n->exits[i].l1 > top->l1)
			top = &n->exits[i];
	if (top && top->l1)
		printf("    the reason most reflected: %s (%llu of the %llu bounces).\n",
		       top->name, (unsigned long long)top->l1,
		       (unsigned long long)l1);
}

static void sync_state(const struct vm *v)
{
	const struct sync *s = &v->sync;
	char a[16];
	uint64_t bad = s->malformed + s->replayed + s->unpaired;

	if (s->mapped)
		printf("  - clock sync %s: %llu exchanges, guest clock mapped to the host's within +/- %s, drift %lld ppb.\n",
		       s->state, (unsigned long long)s->exchanges_total,
		       fmt_ns(a, sizeof(a), s->bound_ns),
		       (long long)s->drift_ppb);
	else
		printf("  - clock sync %s after %llu exchanges: no mapping of its clock yet%s.\n",
		       s->state, (unsigned long long)s->exchanges_total,
		       !strcmp(s->state, "waiting") ?
		       " (it needs more exchanges)" :
		       " (its guest's clock disagrees with what it sent before: restart the guest module)");
	if (s->user)
		printf("    %llu calls came from guest user space (CPL 3): KVM refused them, vmlat counted them apart.\n",
		       (unsigned long long)s->user);
	if (bad || s->refused || s->limited)
		printf("    %llu calls were malformed, replayed or unpaired, %llu refused and %llu over the rate limit: not used.\n",
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

	return a->ns < b->ns ? 1 : a->ns > b->ns ? -1 : 0;
}

static void summary(const struct vm *vms, size_t n, const struct snap *s)
{
	struct taker *t;
	size_t i, j, k, nt = 0, cap = 0;
	char who[128], a[16], name[sizeof(vms->name)];

	for (i = 0; i < n; i++)
		cap += vms[i].nr_pre;
	t = calloc(cap ? cap : 1, sizeof(*t));
	if (!t)
		return;
	for (i = 0; i < n; i++) {
		for (j = 0; j < vms[i].nr_pre; j++) {
			const struct preemptor *p = &vms[i].pre[j];

			if (p->kind == VMLAT_BY_NONE || !p->stolen_ns)
				continue;
			preemptor_label(who, sizeof(who), p, s);
			/* A VM's own vCPUs are its own business. */
			if (p->kind == VMLAT_BY_SAME_VM)
				snprintf(who, sizeof(who), "VMs' own vCPUs");
			for (k = 0; k < nt && strcmp(t[k].who, who); k++)
				;
			if (k == nt)
				snprintf(t[nt++].who, sizeof(t->who), "%s", who);
			t[k].ns += p->stolen_ns;
			if (t[k].last_vm != i + 1) {
				t[k].vms++;
				t[k].last_vm = i + 1;
			}
		}
	}
	qsort(t, nt, sizeof(*t), by_taken);
	printf("\nSummary: ");
	if (vms[0].steal.ready_ns + vms[0].steal.handling_ns)
		printf("%s lost the most, %.1f%% of its time (%.1f%% runnable but not running, %.1f%% in exit handling).",
		       fmt_name(name, sizeof(name), vms[0].name),
		       pct(vms[0].steal.ready_ns + vms[0].steal.handling_ns,
			   vms[0].st.observed_ns),
		       pct(vms[0].steal.ready_ns, vms[0].st.observed_ns),
		       pct(vms[0].steal.handling_ns, vms[0].st.observed_ns));
	else
		printf("no VM lost time.");
	if (nt) {
		printf(" Who took the most from the VMs: ");
		for (k = 0; k < nt && k < TOP_TAKERS; k++)
			printf("%s%s %s (from %u VM%s)", k ? ", " : "",
			       t[k].who, fmt_ns(a, sizeof(a), t[k].ns),
			       t[k].vms, t[k].vms > 1 ? "s" : "");
		printf(".");
	}
	printf("\n");
	free(t);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmlat report [-d DURATION] [VM]\n"
		"  per VM where its time went, then a diagnosis: who lost time, to whom,\n"
		"  type-1 and type-2 steal and the exits behind it, nested bounces, clock sync\n"
		"  -d DURATION  over the next DURATION (10s, 1m) rather than since load\n"
		"  VM           only this VM (its name, VMM pid, or id:N)\n");
}

static const struct cmd_options report_cmd = {
	.name = "report",
	.duration = true,
	.usage = usage,
};

/* What a report is made of, collected before a line of it is printed. */
struct report {
	const struct common_params *p;
	struct window win;
	struct vm *vms;		/* over the window; the most lost first */
	size_t n;
	size_t idle;		/* VMs with no vCPU time in the window */
};

static void report_free(struct report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		vm_free(&r->vms[i]);
	free(r->vms);
	window_free(&r->win);
}

/* Read, and the VMs to report on, sorted: 0, or -1 (its message out). */
static int report_collect(struct report *r, const struct common_params *p)
{
	const struct snap *s;
	char w[16];
	size_t i;

	memset(r, 0, sizeof(*r));
	r->p = p;
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
	return 0;
}

/* Per VM worth a word, the most lost first: what it lost, and to whom. */
static void diagnosis(const struct report *r)
{
	const struct snap *s = &r->win.cur;
	char name[sizeof(r->vms->name)];
	size_t i, quiet = 0;

	printf("\nDiagnosis (VMs that lost the most first):\n");
	for (i = 0; i < r->n; i++) {
		const struct vm *v = &r->vms[i];
		double t1 = pct(v->steal.ready_ns, v->st.observed_ns);
		double t2 = pct(v->steal.handling_ns, v->st.observed_ns);
		bool more = v->nested.nr_vcpus || v->sync.present;

		if (t1 < TYPE1_NOTE_PCT && t2 < TYPE2_NOTE_PCT && !more) {
			quiet++;
			continue;
		}
		printf("\n%s (pid %d, vm_id %u)%s:\n",
		       fmt_name(name, sizeof(name), v->name), v->pid, v->id,
		       v->exited ? ", exited" : "");
		if (t1 >= TYPE1_NOTE_PCT)
			type1(v, s);
		if (t2 >= TYPE2_NOTE_PCT)
			type2(v);
		if (v->nested.nr_vcpus)
			nested(v);
		if (v->sync.present)
			sync_state(v);
	}
	if (quiet)
		printf("\n%zu other VM(s) lost less than %.0f%% of their time to preemption and waiting and less than %.0f%% to exit handling.\n",
		       quiet, TYPE1_NOTE_PCT, TYPE2_NOTE_PCT);
}

static void report_print(const struct report *r)
{
	const struct snap *s = &r->win.cur;
	char w[16];

	if (r->p->duration_ms)
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
	summary(r->vms, r->n, s);
	if (s->dropped_vms || s->dropped_vcpus)
		printf("\nvmlat dropped %llu VMs and %llu vCPUs: its tables were full; load it with larger max_vms and max_vcpus.\n",
		       (unsigned long long)s->dropped_vms,
		       (unsigned long long)s->dropped_vcpus);
}

int cmd_report(int argc, char **argv)
{
	struct common_params p = { 0 };
	struct report r;
	int ret;

	ret = common_parse_options(argc, argv, &report_cmd, &p);
	if (ret >= 0)
		return ret;
	if (report_collect(&r, &p))
		return EXIT_ERR;
	report_print(&r);
	report_free(&r);
	return 0;
}

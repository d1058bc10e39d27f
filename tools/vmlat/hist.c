// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat hist: a VM's latency histograms as text, like rtla timerlat
 * hist: one row per power-of-two range of durations, its count and a
 * bar. Powers of two from 128 ns are bounds of the module's own buckets
 * (16 per octave), so every row counts exactly the samples of its range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmlat.h"

#define BAR_WIDTH	40
#define NR_ROWS		64

enum { OPT_NS = 256 };

struct hist_opts {
	struct common_params common;	/* the VM, -d */
	const char *kind;	/* NULL: preempt, wait, exit (and nested) */
	const char *reason;	/* kind "exit:REASON" */
	bool ns;		/* counts per module bucket, in ns */
};

/* The row of a bucket starting at @lo: [0, 128), then [2^k, 2^(k+1)). */
static int row_of(uint64_t lo)
{
	int k = 0;

	if (lo < 128)
		return 0;
	while (k < 63 && (lo >> (k + 1)))
		k++;
	return k - 6;	/* 128 = 2^7 is row 1 */
}

static uint64_t row_lo(int r)
{
	return r ? 1ULL << (r + 6) : 0;
}

static void print_hist(const struct vm *v, const char *title,
		       const char *what, const struct hist *h, bool ns)
{
	uint64_t rows[NR_ROWS] = { 0 }, max = 0;
	char a[16], b[16], c[16], d[16], e[16], name[sizeof(v->name)];
	int r, first = NR_ROWS, last = -1, w;
	size_t i;

	printf("# %s (pid %d, vm_id %u): %s%s%s\n",
	       fmt_name(name, sizeof(name), v->name), v->pid, v->id,
	       title, what ? " - " : "", what ? what : "");
	if (!h->count) {
		printf("# no samples\n\n");
		return;
	}
	printf("# %llu samples, min %s, p50 %s, p99 %s, max %s, mean %s\n",
	       (unsigned long long)h->count, fmt_ns(a, sizeof(a), h->min_ns),
	       fmt_ns(b, sizeof(b), hist_quantile(h, 0.5)),
	       fmt_ns(c, sizeof(c), hist_quantile(h, 0.99)),
	       fmt_ns(d, sizeof(d), h->max_ns),
	       fmt_ns(e, sizeof(e), h->sum_ns / h->count));
	if (ns) {
		printf("%12s %12s %10s\n", "lo_ns", "hi_ns", "count");
		for (i = 0; i < h->nr; i++)
			printf("%12llu %12llu %10llu\n",
			       (unsigned long long)h->b[i].lo_ns,
			       (unsigned long long)h->b[i].hi_ns,
			       (unsigned long long)h->b[i].count);
		printf("\n");
		return;
	}
	for (i = 0; i < h->nr; i++) {
		r = row_of(h->b[i].lo_ns);
		rows[r] += h->b[i].count;
		if (r < first)
			first = r;
		if (r > last)
			last = r;
	}
	for (r = first; r <= last; r++)
		if (rows[r] > max)
			max = rows[r];
	printf("%21s %10s\n", "duration", "count");
	for (r = first; r <= last; r++) {
		fmt_ns(a, sizeof(a), row_lo(r));
		if (r + 1 < NR_ROWS && row_lo(r + 1) <= 10000000000ULL)
			fmt_ns(b, sizeof(b), row_lo(r + 1));
		else
			snprintf(b, sizeof(b), "...");
		w = max ? (int)((rows[r] * BAR_WIDTH + max - 1) / max) : 0;
		printf("%9s - %9s %10llu |%.*s\n", r ? a : "0", b,
		       (unsigned long long)rows[r], w,
		       "########################################");
	}
	printf("\n");
}

static void vm_hists(const struct vm *v, const struct hist_opts *o)
{
	size_t i;
	int k;

	if (o->reason) {
		for (i = 0; i < v->nr_exits; i++) {
			const struct exit_reason *x = &v->exits[i];
			char title[80];

			if (strcasecmp(x->name, o->reason) || !x->has_hist)
				continue;
			snprintf(title, sizeof(title), "exit %s", x->name);
			print_hist(v, title, "its handling time", &x->h, o->ns);
		}
		return;
	}
	for (k = 0; k < NR_HK; k++) {
		if (o->kind && strcmp(o->kind, hkind_names[k]))
			continue;
		/*
		 * No rows of zero L2 histograms for VMs that run no L2, nor
		 * of interrupt sources with no delivery.
		 */
		if (!o->kind && hk_is_nested(k) && !v->nested.nr_vcpus)
			continue;
		if (!o->kind && hk_is_irq(k) && !v->h[k].count)
			continue;
		print_hist(v, hkind_names[k], hkind_what[k], &v->h[k], o->ns);
	}
}

static void usage(FILE *f)
{
	int k;

	fprintf(f,
		"usage: vmlat hist [-k KIND] [-d DURATION] [--ns] [VM]\n"
		"  text histograms of each VM's latencies (since load, or over -d)\n"
		"  -k KIND      one kind: ");
	for (k = 0; k < NR_HK; k++)
		fprintf(f, "%s, ", hkind_names[k]);
	fprintf(f, "\n               or exit:REASON (an exit reason's handling time, e.g. exit:IOIO)\n"
		"               (default: preempt, wait, exit, the L2 ones of nested VMs,\n"
		"               and the interrupt sources' of VMs with deliveries)\n"
		"  -d DURATION  the histograms of the next DURATION (10s, 1m) only\n"
		"  --ns         the module's own buckets, in ns\n"
		"  VM           only this VM (its name, VMM pid, or id:N)\n");
}

static int parse_opt(int opt, const char *arg, struct common_params *common)
{
	struct hist_opts *o = container_of(common, struct hist_opts, common);
	int k;

	switch (opt) {
	case 'k':
		o->kind = arg;
		if (!strncmp(arg, "exit:", 5) && arg[5]) {
			o->reason = arg + 5;
			break;
		}
		for (k = 0; k < NR_HK; k++)
			if (!strcmp(arg, hkind_names[k]))
				break;
		if (k == NR_HK)
			return common_refuse("hist", "-k %s: no such kind", arg);
		break;
	case OPT_NS:
		o->ns = true;
		break;
	}
	return 0;
}

static const struct option longopts[] = {
	{ "kind", required_argument, NULL, 'k' },
	{ "ns", no_argument, NULL, OPT_NS },
	{ NULL, 0, NULL, 0 },
};

static const struct cmd_options hist_cmd = {
	.name = "hist",
	.optstring = "k:",
	.longopts = longopts,
	.duration = true,
	.usage = usage,
	.parse_opt = parse_opt,
};

int cmd_hist(int argc, char **argv)
{
	struct hist_opts o = { 0 };
	const char *filter;
	struct window w;
	struct vm d;
	size_t i, shown = 0;
	int ret;

	ret = common_parse_options(argc, argv, &hist_cmd, &o.common);
	if (ret >= 0)
		return ret;
	filter = o.common.filter;
	if (window_read(&w, o.common.duration_ms))
		return EXIT_ERR;
	for (i = 0; i < w.cur.nr_vms; i++) {
		const struct vm *v = &w.cur.vms[i];

		if (!vm_matches(v, filter))
			continue;
		shown++;
		if (w.two) {
			window_vm(&d, &w, v);
			vm_hists(&d, &o);
			vm_free(&d);
		} else {
			vm_hists(v, &o);
		}
	}
	window_free(&w);
	if (!shown && filter) {
		fprintf(stderr, "vmlat hist: no VM %s (vmlat top -a lists them)\n",
			filter);
		return EXIT_ERR;
	}
	return 0;
}

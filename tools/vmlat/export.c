// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat export --prometheus [-o FILE] [VM]: one document as Prometheus
 * metrics, in the text exposition format 0.0.4, the format that
 * node_exporter's textfile collector reads (no "# EOF" line, no
 * timestamps). With -o the file is replaced atomically, so that the
 * collector never reads half of it.
 *
 * Every value is in base units (seconds). Times are exact: the decimal
 * of ns / 1e9. Every per-VM series has the labels vm (its name), vm_pid
 * and vm_id: two VMs of one VMM process share the pid and the name, the
 * id (unique per VM since the module loaded) keeps their series apart.
 * Counters restart from 0 when the module is reloaded or reset, which
 * Prometheus' rate() takes as a counter reset.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "vmlat.h"

/*
 * Histogram buckets, as "le" (upper bound, in seconds) and in ns. A
 * module bucket [lo, hi) counts towards le only when all of its values
 * are at most le (hi - 1 <= le): the buckets are cumulative and
 * conservative, a module bucket that straddles a bound counts only
 * towards the next one.
 */
static const struct {
	uint64_t ns;
	const char *le;
} les[] = {
	{ 1000ULL, "1e-06" },		{ 2500ULL, "2.5e-06" },
	{ 5000ULL, "5e-06" },		{ 10000ULL, "1e-05" },
	{ 25000ULL, "2.5e-05" },	{ 50000ULL, "5e-05" },
	{ 100000ULL, "0.0001" },	{ 250000ULL, "0.00025" },
	{ 500000ULL, "0.0005" },	{ 1000000ULL, "0.001" },
	{ 2500000ULL, "0.0025" },	{ 5000000ULL, "0.005" },
	{ 10000000ULL, "0.01" },	{ 25000000ULL, "0.025" },
	{ 50000000ULL, "0.05" },	{ 100000000ULL, "0.1" },
	{ 250000000ULL, "0.25" },	{ 500000000ULL, "0.5" },
	{ 1000000000ULL, "1" },		{ 2500000000ULL, "2.5" },
	{ 5000000000ULL, "5" },		{ 10000000000ULL, "10" },
};
#define NR_LES	(sizeof(les) / sizeof(les[0]))

/* Extra labels of a series: `key="value",...`, values escaped. */
struct labels {
	char buf[1024];
	size_t n;
};

/* Where the metrics go, and the family being written. */
struct out {
	FILE *f;
	const char *name, *type, *help;
	bool started;		/* the family's HELP and TYPE are out */
};

/* ---- values -------------------------------------------------------------- */

/* @ns as seconds, exactly: "12", "0.000123456", "1.5". */
static char *fmt_sec(char *buf, size_t n, uint64_t ns, bool neg)
{
	unsigned long long s = ns / 1000000000ULL, f = ns % 1000000000ULL;
	int len;

	len = snprintf(buf, n, "%s%llu.%09llu", neg && ns ? "-" : "", s, f);
	/* No trailing zeros, nor a lone dot. */
	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 0 && buf[len - 1] == '.')
		buf[--len] = '\0';
	return buf;
}

static char *fmt_u64(char *buf, size_t n, uint64_t v)
{
	snprintf(buf, n, "%" PRIu64, v);
	return buf;
}

static char *fmt_s64(char *buf, size_t n, int64_t v)
{
	snprintf(buf, n, "%" PRId64, v);
	return buf;
}

/* A value's text, in a buffer that lives until the end of the block. */
#define SEC(ns)		fmt_sec((char[32]){ 0 }, 32, (ns), false)
#define SSEC(ns)	fmt_sec((char[32]){ 0 }, 32, \
				(ns) < 0 ? -(uint64_t)(ns) : (uint64_t)(ns), \
				(ns) < 0)
#define U64(v)		fmt_u64((char[24]){ 0 }, 24, (v))
#define S64(v)		fmt_s64((char[24]){ 0 }, 24, (v))

/* ---- label values -------------------------------------------------------- */

/*
 * @v as a label value into @buf: backslash, double quote and newline
 * escaped as the format requires, and valid UTF-8 (a name from a
 * process's command line may be anything; one bad byte would make
 * node_exporter drop the whole file). Any other control character (C0,
 * DEL, C1), which the format would carry as it is to whoever reads the
 * export on a terminal, becomes '?', as fmt_name() shows it. Returns the
 * length, or @n if it does not fit.
 */
static size_t escape_value(char *buf, size_t n, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t o = 0, len, left = strlen(v);
	unsigned int bad;

	while (*s) {
		const char *rep = NULL;
		char one[2] = { 0 };

		len = *s < 0x80 ? 1 : vmlat_utf8_seq(s, left, &bad);
		if (!len) {
			rep = "\xef\xbf\xbd";
			len = bad;
		} else if (*s == '\\') {
			rep = "\\\\";
		} else if (*s == '"') {
			rep = "\\\"";
		} else if (*s == '\n') {
			rep = "\\n";
		} else if (name_control(s, len)) {
			rep = "?";
		} else if (len == 1) {
			one[0] = (char)*s;
			rep = one;
		}
		if (rep) {
			size_t r = strlen(rep);

			if (o + r >= n)
				return n;
			memcpy(buf + o, rep, r);
			o += r;
		} else {
			if (o + len >= n)
				return n;
			memcpy(buf + o, s, len);
			o += len;
		}
		s += len;
		left -= len;
	}
	if (o >= n)
		return n;
	buf[o] = '\0';
	return o;
}

static void labels_init(struct labels *l)
{
	l->n = 0;
	l->buf[0] = '\0';
}

/*
 * Add key="value". The values are bounded (names of at most 127 bytes,
 * comms of 63, exit reasons of 47): they always fit; if one ever does
 * not, it is cut rather than giving a broken line.
 */
static void labels_add(struct labels *l, const char *key, const char *value)
{
	char esc[512];
	size_t e = escape_value(esc, sizeof(esc), value);
	int r;

	if (e >= sizeof(esc))
		esc[0] = '\0';
	r = snprintf(l->buf + l->n, sizeof(l->buf) - l->n, "%s%s=\"%s\"",
		     l->n ? "," : "", key, esc);
	if (r < 0 || (size_t)r >= sizeof(l->buf) - l->n)
		l->buf[l->n] = '\0';
	else
		l->n += (size_t)r;
}

/* ---- series -------------------------------------------------------------- */

/* The family the next series belong to: its HELP and TYPE come first. */
static void family(struct out *o, const char *name, const char *type,
		   const char *help)
{
	o->name = name;
	o->type = type;
	o->help = help;
	o->started = false;
}

static void put_vm_labels(FILE *f, const struct vm *v)
{
	char esc[512];

	if (escape_value(esc, sizeof(esc), v->name) >= sizeof(esc))
		esc[0] = '\0';
	fprintf(f, "vm=\"%s\",vm_pid=\"%d\",vm_id=\"%u\"", esc, v->pid,
		v->id);
}

/*
 * One sample of the current family: its name with @suffix ("_bucket"...,
 * or NULL), the labels of @v (NULL: none), then @l (NULL: none), then
 * the value. HELP and TYPE go out before the family's first sample:
 * families without a sample are left out altogether.
 */
static void sample(struct out *o, const char *suffix, const struct vm *v,
		   const struct labels *l, const char *value)
{
	bool extra = l && l->n;

	if (!o->started) {
		fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", o->name, o->help,
			o->name, o->type);
		o->started = true;
	}
	fprintf(o->f, "%s%s", o->name, suffix ?: "");
	if (v || extra) {
		fputc('{', o->f);
		if (v)
			put_vm_labels(o->f, v);
		if (extra)
			fprintf(o->f, "%s%s", v ? "," : "", l->buf);
		fputc('}', o->f);
	}
	fprintf(o->f, " %s\n", value);
}

/* A sample with one extra label (@key NULL: none). */
static void sample1(struct out *o, const struct vm *v, const char *key,
		    const char *lv, const char *value)
{
	struct labels l;

	labels_init(&l);
	if (key)
		labels_add(&l, key, lv);
	sample(o, NULL, v, &l, value);
}

/*
 * The series of histogram @h: cumulative buckets, _sum and _count, with
 * the labels of @v and @l.
 */
static void hist_samples(struct out *o, const struct vm *v,
			 const struct labels *l, const struct hist *h)
{
	struct labels b;
	uint64_t cum;
	size_t i, j;

	for (i = 0; i < NR_LES; i++) {
		cum = 0;
		for (j = 0; j < h->nr; j++)
			if (h->b[j].hi_ns && h->b[j].hi_ns - 1 <= les[i].ns)
				cum += h->b[j].count;
		/* Never above +Inf, whatever the document says. */
		if (cum > h->count)
			cum = h->count;
		b = *l;
		labels_add(&b, "le", les[i].le);
		sample(o, "_bucket", v, &b, U64(cum));
	}
	b = *l;
	labels_add(&b, "le", "+Inf");
	sample(o, "_bucket", v, &b, U64(h->count));
	sample(o, "_sum", v, l, SEC(h->sum_ns));
	sample(o, "_count", v, l, U64(h->count));
}

/* ---- the families -------------------------------------------------------- */

struct ctx {
	struct out o;
	const struct snap *s;
	const char *filter;
};

#define for_each_vm(c, v)						\
	for (size_t vm_i_ = 0; vm_i_ < (c)->s->nr_vms; vm_i_++)	\
		if (((v) = &(c)->s->vms[vm_i_]),			\
		    vm_matches((v), (c)->filter))

/*
 * Whether vCPU @i of @v is the first of its index: a vCPU run by two
 * threads in turn has an entry per thread; its series sum them.
 */
static bool vcpu_first(const struct vm *v, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (v->vcpus[j].idx == v->vcpus[i].idx)
			return false;
	return true;
}

/* The states of vCPU index @idx of @v, over all its threads. */
static void vcpu_states(const struct vm *v, int idx, struct states *st)
{
	size_t j;
	int k;

	memset(st, 0, sizeof(*st));
	for (j = 0; j < v->nr_vcpus; j++) {
		if (v->vcpus[j].idx != idx)
			continue;
		st->observed_ns += v->vcpus[j].st.observed_ns;
		for (k = 0; k < VMLAT_NR_STATES; k++)
			st->ns[k] += v->vcpus[j].st.ns[k];
		st->exits += v->vcpus[j].st.exits;
	}
}

static void export_vms(struct ctx *c)
{
	struct out *o = &c->o;
	const struct vm *v;
	struct labels l;
	size_t i, n;
	int k;

	family(o, "vmlat_vm_info", "gauge",
	       "A VM vmlat knows (always 1): the comm of its VMM process, and whether all its vCPU threads exited (exited=\"1\").");
	for_each_vm(c, v) {
		labels_init(&l);
		labels_add(&l, "comm", v->comm);
		labels_add(&l, "exited", v->exited ? "1" : "0");
		sample(o, NULL, v, &l, "1");
	}

	family(o, "vmlat_vcpus", "gauge", "vCPUs of the VM that vmlat saw.");
	for_each_vm(c, v) {
		for (i = n = 0; i < v->nr_vcpus; i++)
			n += vcpu_first(v, i);
		sample(o, NULL, v, NULL, U64(n));
	}

	family(o, "vmlat_vm_observed_seconds_total", "counter",
	       "Time vmlat observed the VM's vCPUs, summed over its vCPUs.");
	for_each_vm(c, v)
		sample(o, NULL, v, NULL, SEC(v->st.observed_ns));

	family(o, "vmlat_vm_state_seconds_total", "counter",
	       "Time the VM's vCPUs spent in each state, summed over its vCPUs: guest (running the guest), kernel and user (exit handling in KVM and in the VMM), preempted, wait (runnable, waiting for a CPU), idle, blocked.");
	for_each_vm(c, v)
		for (k = 0; k < VMLAT_NR_STATES; k++)
			sample1(o, v, "state", state_names[k],
				SEC(v->st.ns[k]));

	family(o, "vmlat_vcpu_observed_seconds_total", "counter",
	       "Time vmlat observed the vCPU.");
	for_each_vm(c, v)
		for (i = 0; i < v->nr_vcpus; i++) {
			struct states st;
			char idx[16];

			if (!vcpu_first(v, i))
				continue;
			vcpu_states(v, v->vcpus[i].idx, &st);
			snprintf(idx, sizeof(idx), "%d", v->vcpus[i].idx);
			sample1(o, v, "vcpu", idx, SEC(st.observed_ns));
		}

	family(o, "vmlat_vcpu_state_seconds_total", "counter",
	       "Time the vCPU spent in each state (see vmlat_vm_state_seconds_total).");
	for_each_vm(c, v)
		for (i = 0; i < v->nr_vcpus; i++) {
			struct states st;
			char idx[16];

			if (!vcpu_first(v, i))
				continue;
			vcpu_states(v, v->vcpus[i].idx, &st);
			snprintf(idx, sizeof(idx), "%d", v->vcpus[i].idx);
			for (k = 0; k < VMLAT_NR_STATES; k++) {
				labels_init(&l);
				labels_add(&l, "vcpu", idx);
				labels_add(&l, "state", state_names[k]);
				sample(o, NULL, v, &l, SEC(st.ns[k]));
			}
		}
}

/*
 * A family of the samples of a field list (snap.h): its fields name it,
 * in their order; @has: the VMs that have it (NULL: all); @undecoded:
 * exits of no known reason count in it too.
 */
struct family_desc {
	const char *name;
	const char *help;
	bool (*has)(const struct vm *v);
	bool undecoded;
};

/* Field @f of @obj as its family writes it: seconds, or a count. */
static const char *field_value(char *buf, size_t n, const void *obj,
			       const struct field *f)
{
	uint64_t u = *(const uint64_t *)((const char *)obj + f->off);
	int64_t s = (int64_t)u;

	if (!strstr(f->metric, "_seconds"))
		return f->is_signed ? fmt_s64(buf, n, s) : fmt_u64(buf, n, u);
	if (f->is_signed)
		return fmt_sec(buf, n, s < 0 ? -(uint64_t)s : u, s < 0);
	return fmt_sec(buf, n, u, false);
}

/* The first field of @fs that family @name has, or NULL. */
static const struct field *family_field(const char *name,
					const struct field *fs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fs[i].metric && !strcmp(fs[i].metric, name))
			return &fs[i];
	return NULL;
}

/*
 * Families @fam, each with its fields of @fs, of the object at @off in
 * every VM that has the family. A counter or a gauge as its fields are.
 */
static void export_fields(struct ctx *c, const struct family_desc *fam,
			  size_t nfam, const struct field *fs, size_t n,
			  size_t off)
{
	struct out *o = &c->o;
	const struct field *f;
	const struct vm *v;
	char buf[32];
	size_t i, j;

	for (i = 0; i < nfam; i++) {
		f = family_field(fam[i].name, fs, n);
		if (!f)
			continue;
		family(o, fam[i].name, f->counter ? "counter" : "gauge",
		       fam[i].help);
		for_each_vm(c, v) {
			if (fam[i].has && !fam[i].has(v))
				continue;
			for (j = f - fs; j < n; j++)
				if (fs[j].metric &&
				    !strcmp(fs[j].metric, fam[i].name))
					sample1(o, v, fs[j].lkey, fs[j].lval,
						field_value(buf, sizeof(buf),
							    (const char *)v +
							    off, &fs[j]));
		}
	}
}

static void export_exits(struct ctx *c)
{
	static const struct family_desc fam[] = {
		{ "vmlat_exits_total",
		  "VM exits by exit reason (the reason's name; exits of an unknown reason, or one vmlat could not read: reason=\"undecoded\", without isa).",
		  NULL, true },
		{ "vmlat_exit_handling_seconds_total",
		  "Time spent handling VM exits (in KVM and in the VMM), by exit reason.",
		  NULL, false },
	};
	struct out *o = &c->o;
	const struct field *f;
	const struct vm *v;
	struct labels l;
	char buf[32];
	size_t i, k;

	for (k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		f = family_field(fam[k].name, exit_fields, nr_exit_fields);
		if (!f)
			continue;
		family(o, fam[k].name, "counter", fam[k].help);
		for_each_vm(c, v) {
			for (i = 0; i < v->nr_exits; i++) {
				labels_init(&l);
				labels_add(&l, "isa", v->exits[i].isa);
				labels_add(&l, "reason", v->exits[i].name);
				sample(o, NULL, v, &l,
				       field_value(buf, sizeof(buf),
						   &v->exits[i], f));
			}
			if (fam[k].undecoded && v->exits_undecoded)
				sample1(o, v, "reason", "undecoded",
					U64(v->exits_undecoded));
		}
	}
}

static void export_preempted(struct ctx *c)
{
	struct out *o = &c->o;
	uint64_t by[VMLAT_NR_BY_KINDS];
	const struct vm *v;
	size_t i;
	int k;

	family(o, "vmlat_preempted_seconds_total", "counter",
	       "Time the VM's vCPUs were kept off a CPU, by who ran instead: host (host tasks), vm (other VMs' vCPUs), same_vm (its own vCPUs), idle (a CPU waking from idle), none; summed over the module's list of top preemptors, whose rest is preemptor_kind=\"other\" (the preemptors not in the list, of any kind).");
	for_each_vm(c, v) {
		memset(by, 0, sizeof(by));
		for (i = 0; i < v->nr_pre; i++)
			if (v->pre[i].kind < VMLAT_NR_BY_KINDS)
				by[v->pre[i].kind] += v->pre[i].stolen_ns;
		for (k = 0; k < VMLAT_NR_BY_KINDS; k++)
			sample1(o, v, "preemptor_kind", pkind_names[k],
				SEC(by[k]));
		sample1(o, v, "preemptor_kind", "other", SEC(v->pre_other_ns));
	}
}

static void export_hists(struct ctx *c)
{
	struct out *o = &c->o;
	const struct vm *v;
	struct labels l;
	size_t i;
	int k;

	family(o, "vmlat_latency_seconds", "histogram",
	       "Latencies by kind: preempt (preempted: off CPU, another task ran), wait (runnable, waiting for a CPU), exit (exit handling), and for VMs running a nested guest l2_exit_l0, l2_exit_l1 (L2 exits handled by L0, reflected to L1), wakeup_l2, wakeup_l1. Buckets are conservative: a module bucket counts towards le only if all its values are at most le.");
	for_each_vm(c, v)
		for (k = 0; k < NR_HK; k++) {
			if (hk_is_nested(k) && v->nested.nr_vcpus <= 0)
				continue;
			labels_init(&l);
			labels_add(&l, "kind", hkind_names[k]);
			hist_samples(o, v, &l, &v->h[k]);
		}

	family(o, "vmlat_exit_latency_seconds", "histogram",
	       "Exit handling latencies by exit reason, for the reasons the module keeps a histogram of. Buckets are conservative: a module bucket counts towards le only if all its values are at most le.");
	for_each_vm(c, v)
		for (i = 0; i < v->nr_exits; i++) {
			if (!v->exits[i].has_hist)
				continue;
			labels_init(&l);
			labels_add(&l, "isa", v->exits[i].isa);
			labels_add(&l, "reason", v->exits[i].name);
			hist_samples(o, v, &l, &v->exits[i].h);
		}
}

static bool nested_ran(const struct vm *v)
{
	return v->nested.nr_vcpus > 0;
}

static void export_nested(struct ctx *c)
{
	static const struct family_desc fam[] = {
		{ "vmlat_nested_seconds_total",
		  "Time of the VM's vCPUs running a nested guest, by part: l1 (the guest hypervisor), l2 (the nested guest), l2_exit_l0 and l2_exit_l1 (L2 exits handled by L0, reflected to L1), l2_sync (the L2's clock-sync calls to L1). Only VMs that ran a nested guest.",
		  nested_ran, false },
		{ "vmlat_nested_l2_exits_total",
		  "Exits of the nested guest (L2), by who handled them: l0 (the host alone), l1 (reflected to the guest hypervisor).",
		  nested_ran, false },
		{ "vmlat_nested_l2_sync_calls_total",
		  "Clock-sync hypercalls of the nested guest (L2) to its guest hypervisor (L1), vmlat's own traffic: not in vmlat_nested_l2_exits_total.",
		  nested_ran, false },
		{ "vmlat_nested_l1_to_l2_total",
		  "Entries from the guest hypervisor (L1) into its nested guest (L2).",
		  nested_ran, false },
	};

	export_fields(c, fam, sizeof(fam) / sizeof(fam[0]), nested_fields,
		      nr_nested_fields, offsetof(struct vm, nested));
}

static bool sync_present(const struct vm *v)
{
	return v->sync.present;
}

static bool sync_mapped(const struct vm *v)
{
	return v->sync.present && v->sync.mapped;
}

static void export_sync(struct ctx *c)
{
	static const struct family_desc fam[] = {
		{ "vmlat_clock_sync_bound_seconds",
		  "How far the true host time of the last exchange can be from the mapping's (state ok only).",
		  sync_mapped, false },
		{ "vmlat_clock_sync_drift_ppb",
		  "Drift of the guest clock against the host's, in parts per billion: (a - 1) * 1e9 in host = a * guest + b (state ok only).",
		  sync_mapped, false },
		{ "vmlat_clock_sync_offset_seconds",
		  "Host time minus guest time at the last exchange (state ok only).",
		  sync_mapped, false },
		{ "vmlat_clock_sync_exchanges_total",
		  "Clock-sync exchanges taken into the mapping.",
		  sync_present, false },
		{ "vmlat_clock_sync_calls_total",
		  "Clock-sync calls the guest made, all of them (those of vmlat_clock_sync_rejected_calls_total included).",
		  sync_present, false },
		{ "vmlat_clock_sync_rejected_calls_total",
		  "Clock-sync calls (unpaired: exchanges) the mapping did not take, by reason: user (not made at CPL 0: only counted), malformed, replayed, unpaired (no second call), refused (out of order, or too far), limited (over the rate limit).",
		  sync_present, false },
		{ "vmlat_clock_sync_restarts_total",
		  "Times the guest started a new clock-sync session, and the mapping over.",
		  sync_present, false },
	};
	struct out *o = &c->o;
	const struct vm *v;
	size_t i;

	family(o, "vmlat_clock_sync_state", "gauge",
	       "The state of the guest -> host clock mapping of VMs whose guest makes vmlat's clock-sync calls: 1 for the current state, 0 for the others (ok; waiting: too few exchanges yet; inconsistent: no line fits all exchanges; out_of_range: slope outside [0, 2]).");
	for_each_vm(c, v) {
		if (!v->sync.present)
			continue;
		for (i = 0; i < VMLAT_NR_SYNC_STATES; i++)
			sample1(o, v, "state", sync_state_names[i],
				strcmp(v->sync.state, sync_state_names[i]) ?
				"0" : "1");
	}
	export_fields(c, fam, sizeof(fam) / sizeof(fam[0]), sync_fields,
		      nr_sync_fields, offsetof(struct vm, sync));
}

static void export_module(struct ctx *c)
{
	struct out *o = &c->o;
	const struct snap *s = c->s;

	family(o, "vmlat_dropped_total", "counter",
	       "What the module could not track, its tables being full: vms, vcpus, victims (waits on a CPU).");
	sample1(o, NULL, "what", "vms", U64(s->dropped_vms));
	sample1(o, NULL, "what", "vcpus", U64(s->dropped_vcpus));
	sample1(o, NULL, "what", "victims", U64(s->dropped_victims));

	family(o, "vmlat_json_schema", "gauge",
	       "The schema of the module's JSON document these metrics come from.");
	sample(o, NULL, NULL, NULL, S64(s->schema));

	family(o, "vmlat_module_info", "gauge",
	       "The vmlat module (always 1), and its version.");
	sample1(o, NULL, "version", s->version, "1");
}

static void export_all(FILE *f, const struct snap *s, const char *filter)
{
	struct ctx c = { .o = { .f = f }, .s = s, .filter = filter };

	export_vms(&c);
	export_exits(&c);
	export_preempted(&c);
	export_hists(&c);
	export_nested(&c);
	export_sync(&c);
	export_module(&c);
}

/* ---- output -------------------------------------------------------------- */

/* Write to stdout: 0, or -1 with the message printed. */
static int write_stdout(const struct snap *s, const char *filter)
{
	errno = 0;
	export_all(stdout, s, filter);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "vmlat: writing the metrics: %s\n",
			strerror(errno ?: EIO));
		return -1;
	}
	return 0;
}

/* Make @path's rename durable: fsync its directory (best effort). */
static void sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * Replace @path atomically: write @path.tmp.<pid> beside it (a name the
 * textfile collector ignores: it reads *.prom only), fsync, rename. 0, or
 * -1 with the message (about @path, the file asked for) printed and
 * nothing left behind.
 */
static int write_file(const char *path, const struct snap *s,
		      const char *filter)
{
	char *tmp;
	FILE *f;
	int fd, e;

	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		fprintf(stderr, "vmlat: out of memory\n");
		return -1;
	}
	/*
	 * A new file, never a planted symlink's target (the directory may be
	 * writable by node_exporter's user): a leftover of a run with our
	 * pid is removed (a symlink itself, not its target) and made anew.
	 */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0 && errno == EEXIST && !unlink(tmp))
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "vmlat: %s: %s\n", path, strerror(errno));
		free(tmp);
		return -1;
	}
	/* Readable by node_exporter's user whatever our umask. */
	if (fchmod(fd, 0644)) {
		e = errno;
		close(fd);
		goto fail;
	}
	f = fdopen(fd, "w");
	if (!f) {
		e = errno;
		close(fd);
		goto fail;
	}
	errno = 0;
	export_all(f, s, filter);
	if (fflush(f) || ferror(f)) {
		e = errno ?: EIO;
		fclose(f);
		goto fail;
	}
	if (fsync(fileno(f))) {
		e = errno;
		fclose(f);
		goto fail;
	}
	if (fclose(f)) {
		e = errno;
		goto fail;
	}
	if (rename(tmp, path)) {
		fprintf(stderr, "vmlat: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	sync_dir(path);
	free(tmp);
	return 0;
fail:
	fprintf(stderr, "vmlat: %s: %s\n", path, strerror(e));
	unlink(tmp);
	free(tmp);
	return -1;
}

/* ---- the command --------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmlat [-f FILE]... export --prometheus [-o FILE] [VM]\n"
		"\n"
		"The module's statistics as Prometheus metrics (text format 0.0.4,\n"
		"as node_exporter's textfile collector reads them).\n"
		"\n"
		"  --prometheus       the Prometheus text format (the only one; required)\n"
		"  -o, --output FILE  write FILE instead of stdout, atomically (FILE.tmp.<pid>,\n"
		"                     then rename), e.g. into node_exporter's textfile\n"
		"                     directory: /var/lib/prometheus/node-exporter/vmlat.prom\n"
		"  VM                 only this VM: its name, VMM pid or id:N\n"
		"  -h, --help         this help\n");
}

enum { OPT_PROMETHEUS = 256 };

struct export_opts {
	struct common_params common;	/* the VM */
	bool prometheus;
	const char *out;		/* -o; NULL: stdout */
};

static int parse_opt(int opt, const char *arg, struct common_params *common)
{
	struct export_opts *o = container_of(common, struct export_opts,
					     common);

	switch (opt) {
	case OPT_PROMETHEUS:
		o->prometheus = true;
		break;
	case 'o':
		o->out = arg;
		break;
	}
	return 0;
}

static const struct option longopts[] = {
	{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

static const struct cmd_options export_cmd = {
	.name = "export",
	.optstring = "o:",
	.longopts = longopts,
	.usage = usage,
	.parse_opt = parse_opt,
};

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { 0 };
	const char *filter;
	struct snap s;
	bool any;
	size_t i;
	int ret;

	ret = common_parse_options(argc, argv, &export_cmd, &o.common);
	if (ret >= 0)
		return ret;
	if (!o.prometheus)
		return common_refuse("export", "say which format: --prometheus, the only one");
	if (o.out && !*o.out)
		return common_refuse("export", "-o: an empty name");
	filter = o.common.filter;

	if (vmlat_read(&s))
		return EXIT_ERR;
	if (filter) {
		for (i = 0, any = false; i < s.nr_vms && !any; i++)
			any = vm_matches(&s.vms[i], filter);
		/*
		 * Not an error: a VM that is not running (yet) has no
		 * series; the module's own ones are still written.
		 */
		if (!any)
			fprintf(stderr, "vmlat: export: no VM matches '%s': writing no VM's series\n",
				filter);
	}
	ret = o.out ? write_file(o.out, &s, filter) :
	      write_stdout(&s, filter);
	snap_free(&s);
	return ret ? EXIT_ERR : 0;
}

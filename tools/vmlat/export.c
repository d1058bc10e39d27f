// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat export --prometheus [--detail LIST] [-o FILE] [VM]: one document
 * as Prometheus metrics, in the text exposition format 0.0.4, the format
 * that node_exporter's textfile collector reads (no "# EOF" line, no
 * timestamps). With -o the file is replaced atomically, so that the
 * collector never reads half of it.
 *
 * A fleet stores what every host exports: by default 24 series per VM
 * (its time shares, exits, preemption and wait histograms in four
 * decades), the rest only with --detail (vmlat-command.rst, "Series
 * budget", a budget of 25). Every value is in base units (seconds,
 * ratios). Times are exact: the decimal of ns / 1e9. Only live VMs are
 * exported. A VM's series have its identity as labels, none of which
 * changes while it runs: vm (its name), uuid (if it has one: the same VM
 * on every host, across restarts), namespace and name (a KubeVirt VM),
 * and vm_pid and vm_id where its UUID cannot tell it apart (it has none,
 * or another live VM has it too: two VMs of one VMM process share pid,
 * name and UUID, the module's id keeps their series apart). Counters
 * restart from 0 when the module is reloaded or reset, or the VM
 * restarts, which Prometheus' rate() takes as a counter reset.
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
#include "names.h"
#include "vmlat.h"

/*
 * Histogram bounds, as "le" (upper bound, in seconds) and in ns. A
 * module bucket [lo, hi) counts towards le only when all of its values
 * are at most le (hi - 1 <= le): the buckets are cumulative and
 * conservative, a module bucket that straddles a bound counts only
 * towards the next one.
 */
struct le {
	uint64_t ns;
	const char *le;
};

/* --detail buckets: 1-2.5-5 per decade, 1 us to 10 s. */
static const struct le les_fine[] = {
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

/*
 * The default bounds, four decades each (the series budget): where a
 * vCPU kept off its CPU starts to hurt (100 us: a wake-up; 1 ms, 10 ms:
 * a scheduler tick, a time slice; 100 ms: a guest that stalls), and
 * where an exit's handling does (10 us: a round trip through KVM; 100
 * us: one through the VMM; 1 ms, 10 ms: a slow device, a stall).
 */
static const struct le les_sched[] = {
	{ 100000ULL, "0.0001" },	{ 1000000ULL, "0.001" },
	{ 10000000ULL, "0.01" },	{ 100000000ULL, "0.1" },
};

static const struct le les_exit[] = {
	{ 10000ULL, "1e-05" },		{ 100000ULL, "0.0001" },
	{ 1000000ULL, "0.001" },	{ 10000000ULL, "0.01" },
};

struct layout {
	const struct le *le;
	size_t n;
};

#define LAYOUT(a)	{ a, sizeof(a) / sizeof(a[0]) }

static const struct layout layout_fine = LAYOUT(les_fine);
static const struct layout layout_sched = LAYOUT(les_sched);
static const struct layout layout_exit = LAYOUT(les_exit);

/*
 * What --detail adds to the default series (vmlat-command.rst, "Series
 * budget"); "all" is all of them.
 */
enum detail {
	D_VCPU,		/* per-vCPU state times */
	D_REASON,	/* exits per reason, their histograms and times */
	D_EXIT,		/* the VM's exit handling histogram */
	D_PREEMPTOR,	/* type-1 steal by preemptor kind, lock holders */
	D_NESTED,	/* the nested (L2) families */
	D_SYNC,		/* the clock sync families */
	D_IRQ,		/* the interrupt delivery families */
	D_HALT,		/* the halt-polling families */
	D_BUCKETS,	/* the fine buckets in every histogram */
	NR_DETAILS
};

static const char *const detail_names[NR_DETAILS] = {
	[D_VCPU] = "vcpu",
	[D_REASON] = "reason",
	[D_EXIT] = "exit",
	[D_PREEMPTOR] = "preemptor",
	[D_NESTED] = "nested",
	[D_SYNC] = "sync",
	[D_IRQ] = "irq",
	[D_HALT] = "halt",
	[D_BUCKETS] = "buckets",
};

#define DETAIL(d)	(1U << (d))
#define ALL_DETAILS	(DETAIL(NR_DETAILS) - 1)

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

/*
 * One sample of the current family: its name with @suffix ("_bucket"...,
 * or NULL), the identity labels @id of a VM (NULL: none), then @l (NULL:
 * none), then the value. HELP and TYPE go out before the family's first
 * sample: families without a sample are left out altogether.
 */
static void sample(struct out *o, const char *suffix, const char *id,
		   const struct labels *l, const char *value)
{
	bool extra = l && l->n;

	if (!o->started) {
		fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", o->name, o->help,
			o->name, o->type);
		o->started = true;
	}
	fputs(o->name, o->f);
	if (suffix)
		fputs(suffix, o->f);
	if (id || extra) {
		fputc('{', o->f);
		if (id)
			fputs(id, o->f);
		if (extra) {
			if (id)
				fputc(',', o->f);
			fputs(l->buf, o->f);
		}
		fputc('}', o->f);
	}
	fputc(' ', o->f);
	fputs(value, o->f);
	fputc('\n', o->f);
}

/* A sample with one extra label (@key NULL: none). */
static void sample1(struct out *o, const char *id, const char *key,
		    const char *lv, const char *value)
{
	struct labels l;

	labels_init(&l);
	if (key)
		labels_add(&l, key, lv);
	sample(o, NULL, id, &l, value);
}

/*
 * The series of histogram @h: cumulative buckets at the bounds of @lay,
 * _sum and _count, with the labels @id and @l (NULL: none).
 */
static void hist_samples(struct out *o, const char *id,
			 const struct labels *l, const struct hist *h,
			 const struct layout *lay)
{
	struct labels b, none;
	uint64_t cum;
	size_t i, j;

	if (!l) {
		labels_init(&none);
		l = &none;
	}

	for (i = 0; i < lay->n; i++) {
		cum = 0;
		for (j = 0; j < h->nr; j++)
			if (h->b[j].hi_ns && h->b[j].hi_ns - 1 <= lay->le[i].ns)
				cum += h->b[j].count;
		/* Never above +Inf, whatever the document says. */
		if (cum > h->count)
			cum = h->count;
		b = *l;
		labels_add(&b, "le", lay->le[i].le);
		sample(o, "_bucket", id, &b, U64(cum));
	}
	b = *l;
	labels_add(&b, "le", "+Inf");
	sample(o, "_bucket", id, &b, U64(h->count));
	sample(o, "_sum", id, l, SEC(h->sum_ns));
	sample(o, "_count", id, l, U64(h->count));
}

/* ---- the VMs' identity --------------------------------------------------- */

struct ctx {
	struct out o;
	const struct snap *s;
	const char *filter;
	unsigned int detail;	/* DETAIL() bits */
	char **ids;		/* each VM's identity labels (vm_ident()) */
};

/*
 * The VMs exported: live ones (a VM whose vCPU threads all exited is
 * left out: its series end) that the filter names.
 */
static bool exported(const struct ctx *c, const struct vm *v)
{
	return !v->exited && vm_matches(v, c->filter);
}

#define for_each_vm(c, v)						\
	for (size_t vm_i_ = 0; vm_i_ < (c)->s->nr_vms; vm_i_++)	\
		if (((v) = &(c)->s->vms[vm_i_]), exported((c), (v)))

/* The identity labels of @v, as every series of it starts. */
#define ID(c, v)	((c)->ids[(v) - (c)->s->vms])

/* Whether another live VM of @s has the UUID of @v. */
static bool uuid_shared(const struct snap *s, const struct vm *v)
{
	size_t i;

	for (i = 0; i < s->nr_vms; i++)
		if (&s->vms[i] != v && !s->vms[i].exited &&
		    !strcmp(s->vms[i].uuid, v->uuid))
			return true;
	return false;
}

/*
 * The identity labels of @v: vm (its name); uuid (if it has one);
 * namespace and name (a libvirt domain named as KubeVirt names them);
 * vm_pid and vm_id if its UUID does not tell it apart: it has none, or
 * another live VM has it too. NULL if out of memory.
 */
static char *vm_ident(const struct snap *s, const struct vm *v)
{
	char ns[64], name[sizeof(v->name)];
	struct labels l;

	labels_init(&l);
	labels_add(&l, "vm", v->name);
	if (v->uuid[0])
		labels_add(&l, "uuid", v->uuid);
	if (v->libvirt && !kubevirt_name(v->name, ns, sizeof(ns), name,
					 sizeof(name))) {
		labels_add(&l, "namespace", ns);
		labels_add(&l, "name", name);
	}
	if (!v->uuid[0] || uuid_shared(s, v)) {
		labels_add(&l, "vm_pid", S64(v->pid));
		labels_add(&l, "vm_id", U64(v->id));
	}
	return strdup(l.buf);
}

/* ---- the families -------------------------------------------------------- */

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
	       "A live VM vmlat knows (always 1), with the comm of its VMM process.");
	for_each_vm(c, v)
		sample1(o, ID(c, v), "comm", v->comm, "1");

	/* Sparse: a series of its own for every VM would cost the budget. */
	family(o, "vmlat_vm_partly_tracked", "gauge",
	       "1 for a VM one of whose vCPU threads vmlat turned away at its caps (max_vms, max_vcpus): its figures miss that thread's time. Only such VMs have the series.");
	for_each_vm(c, v)
		if (v->partly)
			sample(o, NULL, ID(c, v), NULL, "1");

	family(o, "vmlat_vcpus", "gauge", "vCPUs of the VM that vmlat saw.");
	for_each_vm(c, v) {
		for (i = n = 0; i < v->nr_vcpus; i++)
			n += vcpu_first(v, i);
		sample(o, NULL, ID(c, v), NULL, U64(n));
	}

	family(o, "vmlat_vm_state_seconds_total", "counter",
	       "Time the VM's vCPUs spent in each state, summed over its vCPUs, the interval in progress included: guest (running the guest), kernel and user (exit handling in KVM and in the VMM: type-2 steal), preempted (another task ran) and wait (runnable, waiting for a CPU: type-1 steal), idle, blocked. Their sum is the time vmlat observed the vCPUs.");
	for_each_vm(c, v)
		for (k = 0; k < VMLAT_NR_STATES; k++)
			sample1(o, ID(c, v), "state", state_names[k],
				SEC(v->st.ns[k]));

	if (!(c->detail & DETAIL(D_VCPU)))
		return;
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
				sample(o, NULL, ID(c, v), &l, SEC(st.ns[k]));
			}
		}
}

/*
 * A family of the samples of a field list (snap.h): its fields name it,
 * in their order; @has: the VMs that have it (NULL: all).
 */
struct family_desc {
	const char *name;
	const char *help;
	bool (*has)(const struct vm *v);
};

/* Field @f of @obj as its family writes it: seconds, a ratio, a count. */
static const char *field_value(char *buf, size_t n, const void *obj,
			       const struct field *f)
{
	uint64_t u = *(const uint64_t *)((const char *)obj + f->off);
	int64_t s = (int64_t)u;

	/* ns in seconds, ppb as a ratio: both / 1e9, exactly. */
	if (!strstr(f->metric, "_seconds") && !strstr(f->metric, "_ratio"))
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
					sample1(o, ID(c, v), fs[j].lkey,
						fs[j].lval,
						field_value(buf, sizeof(buf),
							    (const char *)v +
							    off, &fs[j]));
		}
	}
}

/* The exits of @v vmlat decoded or not: those of vmlat_exits_total. */
static uint64_t vm_exits(const struct vm *v)
{
	uint64_t n = v->exits_undecoded;
	size_t i;

	for (i = 0; i < v->nr_exits; i++)
		n += v->exits[i].count;
	return n;
}

/* isa and reason of exit reason @x. */
static void reason_labels(struct labels *l, const struct exit_reason *x)
{
	labels_init(l);
	labels_add(l, "isa", x->isa);
	labels_add(l, "reason", x->name);
}

static void export_exits(struct ctx *c)
{
	bool reason = c->detail & DETAIL(D_REASON);
	const struct layout *lay = c->detail & DETAIL(D_BUCKETS) ?
				   &layout_fine : &layout_exit;
	struct out *o = &c->o;
	const struct vm *v;
	struct labels l;
	size_t i;

	family(o, "vmlat_exits_total", "counter", reason ?
	       "VM exits by exit reason (the reason's name; exits of an unknown reason, or one vmlat could not read: reason=\"undecoded\", without isa). The guest's clock-sync calls are not counted." :
	       "VM exits (the guest's clock-sync calls not counted); --detail reason: by exit reason.");
	for_each_vm(c, v) {
		if (!reason) {
			sample(o, NULL, ID(c, v), NULL, U64(vm_exits(v)));
			continue;
		}
		for (i = 0; i < v->nr_exits; i++) {
			reason_labels(&l, &v->exits[i]);
			sample(o, NULL, ID(c, v), &l, U64(v->exits[i].count));
		}
		if (v->exits_undecoded)
			sample1(o, ID(c, v), "reason", "undecoded",
				U64(v->exits_undecoded));
	}

	if (c->detail & DETAIL(D_EXIT)) {
		family(o, "vmlat_exit_seconds", "histogram",
		       "Exit handling latencies (in KVM and in the VMM), of all reasons: their sum is the VM's type-2 steal of completed exits. Buckets are conservative: a module bucket counts towards le only if all its values are at most le.");
		for_each_vm(c, v)
			hist_samples(o, ID(c, v), NULL, &v->h[VMLAT_HIST_EXIT],
				     lay);
	}
	if (!reason)
		return;

	family(o, "vmlat_exit_reason_seconds", "histogram",
	       "Exit handling latencies by exit reason, for the reasons the module keeps a histogram of (the others' time: vmlat_exit_handling_seconds_total). Buckets are conservative: a module bucket counts towards le only if all its values are at most le.");
	for_each_vm(c, v)
		for (i = 0; i < v->nr_exits; i++) {
			if (!v->exits[i].has_hist)
				continue;
			reason_labels(&l, &v->exits[i]);
			hist_samples(o, ID(c, v), &l, &v->exits[i].h, lay);
		}

	family(o, "vmlat_exit_handling_seconds_total", "counter",
	       "Time spent handling VM exits (in KVM and in the VMM), by exit reason, for the reasons the module keeps no histogram of (the others' time is the _sum of vmlat_exit_reason_seconds).");
	for_each_vm(c, v)
		for (i = 0; i < v->nr_exits; i++) {
			if (v->exits[i].has_hist)
				continue;
			reason_labels(&l, &v->exits[i]);
			sample(o, NULL, ID(c, v), &l,
			       SEC(v->exits[i].total_ns));
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
	       "Type-1 steal: time the VM's vCPUs were kept off a CPU (preempted and waiting), by who ran instead: host (host tasks), vm (other VMs' vCPUs), same_vm (its own vCPUs), idle (a CPU waking from idle), none; summed over the module's list of top preemptors, whose rest is preemptor_kind=\"other\" (the preemptors not in the list, of any kind).");
	for_each_vm(c, v) {
		memset(by, 0, sizeof(by));
		for (i = 0; i < v->nr_pre; i++)
			if (v->pre[i].kind < VMLAT_NR_BY_KINDS)
				by[v->pre[i].kind] += v->pre[i].stolen_ns;
		for (k = 0; k < VMLAT_NR_BY_KINDS; k++)
			sample1(o, ID(c, v), "preemptor_kind", pkind_names[k],
				SEC(by[k]));
		sample1(o, ID(c, v), "preemptor_kind", "other",
			SEC(v->pre_other_ns));
	}
}

static bool nested_ran(const struct vm *v)
{
	return v->nested.nr_vcpus > 0;
}

/* Histogram families of one kind each, the nested ones of nested VMs. */
static void export_hists(struct ctx *c)
{
	static const struct {
		int kind;
		const char *name, *help;
	} fam[] = {
		{ VMLAT_HIST_PREEMPT, "vmlat_preempt_seconds",
		  "Preemption latencies: how long a vCPU was off its CPU while another task ran." },
		{ VMLAT_HIST_WAIT, "vmlat_wait_seconds",
		  "Wait latencies: how long a runnable vCPU waited for a CPU." },
		{ HK_NESTED(VMLAT_NH_L2_EXIT_L0),
		  "vmlat_nested_l2_exit_l0_seconds",
		  "Round trips of the nested guest's (L2) exits that the host (L0) handled." },
		{ HK_NESTED(VMLAT_NH_L2_EXIT_L1),
		  "vmlat_nested_l2_exit_l1_seconds",
		  "Round trips of the nested guest's (L2) exits reflected to the guest hypervisor (L1)." },
		{ HK_NESTED(VMLAT_NH_WAKEUP_L2),
		  "vmlat_nested_wakeup_l2_seconds",
		  "From the nested guest's (L2) HLT or wake-up until it runs again." },
		{ HK_NESTED(VMLAT_NH_WAKEUP_L1),
		  "vmlat_nested_wakeup_l1_seconds",
		  "From the guest hypervisor's (L1) HLT or wake-up until it runs again." },
	};
	const struct layout *lay, *exit_lay;
	struct out *o = &c->o;
	const struct vm *v;
	char help[512];
	size_t i;
	int k;

	lay = c->detail & DETAIL(D_BUCKETS) ? &layout_fine : &layout_sched;
	exit_lay = c->detail & DETAIL(D_BUCKETS) ? &layout_fine : &layout_exit;
	for (i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		k = fam[i].kind;
		if (hk_is_nested(k) && !(c->detail & DETAIL(D_NESTED)))
			continue;
		snprintf(help, sizeof(help), "%s%s Buckets are conservative: a module bucket counts towards le only if all its values are at most le.",
			 fam[i].help, hk_is_nested(k) ?
			 " Only VMs that ran a nested guest." : "");
		family(&c->o, fam[i].name, "histogram", help);
		for_each_vm(c, v) {
			if (hk_is_nested(k) && !nested_ran(v))
				continue;
			hist_samples(o, ID(c, v), NULL, &v->h[k],
				     k == HK_NESTED(VMLAT_NH_L2_EXIT_L0) ||
				     k == HK_NESTED(VMLAT_NH_L2_EXIT_L1) ?
				     exit_lay : lay);
		}
	}
}

static void export_nested(struct ctx *c)
{
	static const struct family_desc fam[] = {
		{ "vmlat_nested_seconds_total",
		  "Time of the VM's vCPUs running a nested guest, by part: l1 (the guest hypervisor), l2 (the nested guest), l2_sync (the L2's clock-sync calls to L1); its L2 exits' time is the _sum of vmlat_nested_l2_exit_l0_seconds and vmlat_nested_l2_exit_l1_seconds. Only VMs that ran a nested guest.",
		  nested_ran },
		{ "vmlat_nested_l2_exits_total",
		  "Exits of the nested guest (L2), by who handled them: l0 (the host alone), l1 (reflected to the guest hypervisor).",
		  nested_ran },
		{ "vmlat_nested_l2_sync_calls_total",
		  "Clock-sync hypercalls of the nested guest (L2) to its guest hypervisor (L1), vmlat's own traffic: not in vmlat_nested_l2_exits_total.",
		  nested_ran },
		{ "vmlat_nested_l1_to_l2_total",
		  "Entries from the guest hypervisor (L1) into its nested guest (L2).",
		  nested_ran },
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
		  sync_mapped },
		{ "vmlat_clock_sync_drift_ratio",
		  "Drift of the guest clock against the host's, a ratio: a - 1 in host = a * guest + b (state ok only).",
		  sync_mapped },
		{ "vmlat_clock_sync_offset_seconds",
		  "Host time minus guest time at the last exchange (state ok only).",
		  sync_mapped },
		{ "vmlat_clock_sync_exchanges_total",
		  "Clock-sync exchanges taken into the mapping.",
		  sync_present },
		{ "vmlat_clock_sync_calls_total",
		  "Clock-sync calls the guest made, all of them (those of vmlat_clock_sync_rejected_calls_total included).",
		  sync_present },
		{ "vmlat_clock_sync_rejected_calls_total",
		  "Clock-sync calls (unpaired: exchanges) the mapping did not take, by reason: user (not made at CPL 0: only counted), malformed, replayed, unpaired (no second call), refused (out of order, or too far), limited (over the rate limit).",
		  sync_present },
		{ "vmlat_clock_sync_restarts_total",
		  "Times the guest started a new clock-sync session, and the mapping over.",
		  sync_present },
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
			sample1(o, ID(c, v), "state", sync_state_names[i],
				strcmp(v->sync.state, sync_state_names[i]) ?
				"0" : "1");
	}
	export_fields(c, fam, sizeof(fam) / sizeof(fam[0]), sync_fields,
		      nr_sync_fields, offsetof(struct vm, sync));
}

/* Whether @v had interrupts of source @src delivered. */
static bool irq_had(const struct vm *v, int src)
{
	return v->h[HK_IRQ(src)].count > 0;
}

/*
 * Interrupt delivery: its latency by source, where the target was, how
 * much of it the target waited for a CPU, and what was lost. Sparse:
 * only the sources, and the source and state pairs, a VM had.
 */
static void export_irq(struct ctx *c)
{
	const struct layout *lay = c->detail & DETAIL(D_BUCKETS) ?
				   &layout_fine : &layout_sched;
	struct out *o = &c->o;
	const struct vm *v;
	struct labels l;
	uint64_t n;
	int src, at;

	family(o, "vmlat_irq_delivery_seconds", "histogram",
	       "Interrupt delivery latencies by source (timer: the LAPIC timer, ipi, device, other): from when KVM made the interrupt pending to the VM entry that delivered it. Only the sources a VM had. Buckets are conservative: a module bucket counts towards le only if all its values are at most le.");
	for_each_vm(c, v)
		for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
			if (!irq_had(v, src))
				continue;
			labels_init(&l);
			labels_add(&l, "source", irq_src_names[src]);
			hist_samples(o, ID(c, v), &l, &v->h[HK_IRQ(src)], lay);
		}

	family(o, "vmlat_irq_by_state_seconds_total", "counter",
	       "Interrupt delivery latencies, summed by source and by where the target vCPU was when the interrupt became pending: guest, host (handling an exit), halted, preempted (or woken and waiting for its CPU), blocked. Only the pairs a VM had.");
	for_each_vm(c, v)
		for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++)
			for (at = 0; at < VMLAT_NR_IRQ_ATS; at++) {
				if (!v->irq[src][at].count)
					continue;
				labels_init(&l);
				labels_add(&l, "source", irq_src_names[src]);
				labels_add(&l, "at", irq_at_names[at]);
				sample(o, NULL, ID(c, v), &l,
				       SEC(v->irq[src][at].sum_ns));
			}

	family(o, "vmlat_irq_wait_seconds_total", "counter",
	       "Of the interrupt delivery latencies, the time the target vCPUs waited for a CPU (runnable, off CPU), by source. Only the sources a VM had.");
	for_each_vm(c, v)
		for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
			if (!irq_had(v, src))
				continue;
			for (at = 0, n = 0; at < VMLAT_NR_IRQ_ATS; at++)
				n += v->irq[src][at].wait_ns;
			sample1(o, ID(c, v), "source", irq_src_names[src],
				SEC(n));
		}

	family(o, "vmlat_irq_lost_total", "counter",
	       "Interrupts made pending and never seen delivered, by source: pushed out by newer ones (a vCPU keeps 4 pending), or not injected by KVM within 16 VM entries (APICv, AVIC). Only the sources a VM lost any of.");
	for_each_vm(c, v)
		for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
			for (at = 0, n = 0; at < VMLAT_NR_IRQ_ATS; at++)
				n += v->irq[src][at].lost;
			if (n)
				sample1(o, ID(c, v), "source",
					irq_src_names[src], U64(n));
		}
}

/*
 * Halt-polling: halts, polls that paid off and not, their CPU time, the
 * wake-ups of the halts that slept. Sparse: only the VMs that halted.
 */
static void export_halt(struct ctx *c)
{
	struct out *o = &c->o;
	const struct vm *v;

	family(o, "vmlat_halts_total", "counter",
	       "Halts of the VM's vCPUs that KVM ended (after a HLT exit). Only the VMs that halted.");
	for_each_vm(c, v)
		if (v->halt.halts)
			sample(o, NULL, ID(c, v), NULL, U64(v->halt.halts));

	family(o, "vmlat_halt_polls_total", "counter",
	       "Halts KVM polled in before sleeping, by result: hit (the vCPU went back to the guest without sleeping), miss (it slept after all).");
	for_each_vm(c, v) {
		if (!v->halt.halts)
			continue;
		sample1(o, ID(c, v), "result", "hit", U64(v->halt.hits));
		sample1(o, ID(c, v), "result", "miss",
			U64(v->halt.polled - v->halt.hits));
	}

	family(o, "vmlat_halt_poll_seconds_total", "counter",
	       "CPU time KVM spent polling in the VM's halts, by result: hit, miss (polling that bought nothing).");
	for_each_vm(c, v) {
		if (!v->halt.halts)
			continue;
		sample1(o, ID(c, v), "result", "hit", SEC(v->halt.hit_ns));
		sample1(o, ID(c, v), "result", "miss", SEC(v->halt.miss_ns));
	}

	family(o, "vmlat_halt_wakeups_total", "counter",
	       "Halts that slept and were woken: the count of vmlat_halt_wakeup_seconds_total.");
	for_each_vm(c, v)
		if (v->halt.halts)
			sample(o, NULL, ID(c, v), NULL, U64(v->halt.woken));

	family(o, "vmlat_halt_wakeup_seconds_total", "counter",
	       "Time from the wake-up of a halt that slept to the halt's end (woken, waiting for a CPU, back in KVM): what a poll that pays off saves, about.");
	for_each_vm(c, v)
		if (v->halt.halts)
			sample(o, NULL, ID(c, v), NULL, SEC(v->halt.wake_ns));
}

/*
 * Suspected lock-holder preemptions: how many, their time, the spins.
 * Sparse: only the VMs that had one.
 */
static void export_lock_holder(struct ctx *c)
{
	struct out *o = &c->o;
	const struct vm *v;

	family(o, "vmlat_lock_holder_preemptions_total", "counter",
	       "Preemptions of the VM's vCPUs during which another of its vCPUs spun (made PAUSE exits or Hyper-V long-spin-wait calls): lock-holder preemptions, suspected. Only the VMs that had one.");
	for_each_vm(c, v)
		if (v->lhp.count)
			sample(o, NULL, ID(c, v), NULL, U64(v->lhp.count));

	family(o, "vmlat_lock_holder_seconds_total", "counter",
	       "Their durations.");
	for_each_vm(c, v)
		if (v->lhp.count)
			sample(o, NULL, ID(c, v), NULL, SEC(v->lhp.ns));

	family(o, "vmlat_lock_holder_spins_total", "counter",
	       "The other vCPUs' PAUSE exits and long-spin-wait calls during them.");
	for_each_vm(c, v)
		if (v->lhp.count)
			sample(o, NULL, ID(c, v), NULL, U64(v->lhp.spins));
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

static void export_all(FILE *f, struct ctx *c)
{
	c->o = (struct out){ .f = f };
	export_vms(c);
	export_exits(c);
	export_hists(c);
	if (c->detail & DETAIL(D_PREEMPTOR)) {
		export_preempted(c);
		export_lock_holder(c);
	}
	if (c->detail & DETAIL(D_NESTED))
		export_nested(c);
	if (c->detail & DETAIL(D_SYNC))
		export_sync(c);
	if (c->detail & DETAIL(D_IRQ))
		export_irq(c);
	if (c->detail & DETAIL(D_HALT))
		export_halt(c);
	export_module(c);
}

/* ---- output -------------------------------------------------------------- */

/* Write to stdout: 0, or -1 with the message printed. */
static int write_stdout(struct ctx *c)
{
	errno = 0;
	export_all(stdout, c);
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
static int write_file(const char *path, struct ctx *c)
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
	export_all(f, c);
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
		"usage: vmlat [-f FILE]... export --prometheus [--detail LIST] [-o FILE] [VM]\n"
		"\n"
		"The module's statistics as Prometheus metrics (text format 0.0.4,\n"
		"as node_exporter's textfile collector reads them): by default 24 series\n"
		"per VM, its time shares, exits, preemption and wait histograms.\n"
		"\n"
		"  --prometheus       the Prometheus text format (the only one; required)\n"
		"  --detail LIST      more series, a comma-separated list of:\n"
		"                       vcpu       time shares per vCPU\n"
		"                       reason     exits, their histograms and times per exit reason\n"
		"                       exit       the VM's exit handling histogram\n"
		"                       preemptor  type-1 steal by who ran instead\n"
		"                       nested     nested (L2) times, exits and histograms\n"
		"                       sync       guest clock sync\n"
		"                       irq        interrupt delivery latencies\n"
		"                       halt       halt-polling: polls, their CPU time, wake-ups\n"
		"                       buckets    22 buckets (1 us to 10 s) in every histogram\n"
		"                       all        all of the above\n"
		"  -o, --output FILE  write FILE instead of stdout, atomically (FILE.tmp.<pid>,\n"
		"                     then rename), e.g. into node_exporter's textfile\n"
		"                     directory: /var/lib/prometheus/node-exporter/vmlat.prom\n"
		"  VM                 only this VM: its name, VMM pid or id:N\n"
		"  -h, --help         this help\n");
}

enum { OPT_PROMETHEUS = 256, OPT_DETAIL };

struct export_opts {
	struct common_params common;	/* the VM */
	bool prometheus;
	unsigned int detail;		/* --detail: DETAIL() bits */
	const char *out;		/* -o; NULL: stdout */
};

/* --detail @arg (given again, it adds) into @detail; 0 or EXIT_USAGE. */
static int parse_detail(const char *arg, unsigned int *detail)
{
	const char *p = arg, *end;
	size_t len, i;

	for (;;) {
		end = strchrnul(p, ',');
		len = (size_t)(end - p);
		if (!len)
			return common_refuse("export", "--detail '%s': an empty name",
					     arg);
		if (len == 3 && !strncmp(p, "all", 3)) {
			*detail |= ALL_DETAILS;
		} else {
			for (i = 0; i < NR_DETAILS; i++)
				if (strlen(detail_names[i]) == len &&
				    !strncmp(p, detail_names[i], len))
					break;
			if (i == NR_DETAILS)
				return common_refuse("export", "--detail: no detail '%.*s' (vcpu, reason, exit, preemptor, nested, sync, irq, halt, buckets, all)",
						     (int)len, p);
			*detail |= DETAIL(i);
		}
		if (!*end)
			return 0;
		p = end + 1;
	}
}

static int parse_opt(int opt, const char *arg, struct common_params *common)
{
	struct export_opts *o = container_of(common, struct export_opts,
					     common);

	switch (opt) {
	case OPT_PROMETHEUS:
		o->prometheus = true;
		break;
	case OPT_DETAIL:
		return parse_detail(arg, &o->detail);
	case 'o':
		o->out = arg;
		break;
	}
	return 0;
}

static const struct option longopts[] = {
	{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
	{ "detail", required_argument, NULL, OPT_DETAIL },
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
	struct ctx c = { 0 };
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

	if (vmlat_read(&s))
		return EXIT_ERR;
	c.s = &s;
	c.filter = o.common.filter;
	c.detail = o.detail;
	c.ids = calloc(s.nr_vms ?: 1, sizeof(*c.ids));
	ret = !c.ids;
	for (i = 0, any = false; !ret && i < s.nr_vms; i++) {
		if (!exported(&c, &s.vms[i]))
			continue;
		any = true;
		c.ids[i] = vm_ident(&s, &s.vms[i]);
		ret = !c.ids[i];
	}
	if (ret) {
		fprintf(stderr, "vmlat: out of memory\n");
	} else {
		/*
		 * Not an error: a VM that is not running (yet, or any
		 * more) has no series; the module's own ones are still
		 * written.
		 */
		if (c.filter && !any)
			fprintf(stderr, "vmlat: export: no live VM matches '%s': writing no VM's series\n",
				c.filter);
		ret = o.out ? write_file(o.out, &c) : write_stdout(&c);
	}
	for (i = 0; c.ids && i < s.nr_vms; i++)
		free(c.ids[i]);
	free(c.ids);
	snap_free(&s);
	return ret ? EXIT_ERR : 0;
}

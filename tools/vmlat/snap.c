// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the module's JSON document (Documentation/vmlat.rst, "json")
 * with json-c, and deltas between two reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <json-c/json.h>

#include "snap.h"

#define DEBUGFS_MAGIC	0x64626720

const char *const state_names[VMLAT_NR_STATES] = {
	VMLAT_STATES(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const hkind_names[NR_HK] = {
	VMLAT_HIST_KINDS(VMLAT_STRING_, VMLAT_COMMA_),
	VMLAT_NESTED_HISTS(VMLAT_STRING_, VMLAT_COMMA_),
	VMLAT_IRQ_SOURCES(VMLAT_IRQ_HIST_STRING_, VMLAT_COMMA_),
	VMLAT_EXPIRE_HISTS(VMLAT_STRING_, VMLAT_COMMA_)
};

const char *const irq_src_names[VMLAT_NR_IRQ_SOURCES] = {
	VMLAT_IRQ_SOURCES(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const irq_at_names[VMLAT_NR_IRQ_ATS] = {
	VMLAT_IRQ_ATS(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const hkind_what[NR_HK] = {
	[VMLAT_HIST_PREEMPT] = "preempted (off CPU, another task ran)",
	[VMLAT_HIST_WAIT] = "waiting for a CPU (runnable, not yet running)",
	[VMLAT_HIST_EXIT] = "exit handling (host kernel and VMM userspace)",
	[HK_NESTED(VMLAT_NH_L2_EXIT_L0)] = "L2 exits handled by L0 (the host)",
	[HK_NESTED(VMLAT_NH_L2_EXIT_L1)] =
		"L2 exits reflected to L1 (the guest hypervisor)",
	[HK_NESTED(VMLAT_NH_WAKEUP_L2)] = "wake-up to L2",
	[HK_NESTED(VMLAT_NH_WAKEUP_L1)] = "wake-up to L1",
	[HK_IRQ(VMLAT_IRQ_TIMER)] =
		"LAPIC timer interrupts: expiry to the VM entry delivering them",
	[HK_IRQ(VMLAT_IRQ_IPI)] =
		"IPIs: pending to the VM entry delivering them",
	[HK_IRQ(VMLAT_IRQ_DEVICE)] =
		"device interrupts: pending to the VM entry delivering them",
	[HK_IRQ(VMLAT_IRQ_OTHER)] =
		"other interrupts: pending to the VM entry delivering them",
	[HK_EXPIRE(VMLAT_EXPIRE_EARLY)] =
		"TSC-deadline timers: how early KVM entered with them (busy-waited)",
	[HK_EXPIRE(VMLAT_EXPIRE_LATE)] =
		"TSC-deadline timers: how late past the guest's deadline",
};

const char *const pkind_names[VMLAT_NR_BY_KINDS] = {
	VMLAT_BY_KINDS(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const sync_state_names[VMLAT_NR_SYNC_STATES] = {
	VMLAT_SYNC_STATES(VMLAT_NAME_, VMLAT_COMMA_)
};

/* ---- json-c accessors: a missing member reads as 0 or "" ------------- */

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static uint64_t u64(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v ? json_object_get_uint64(v) : 0;
}

static int64_t s64(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v ? json_object_get_int64(v) : 0;
}

/* @key's integer; @none if it is null or missing (schema 3 said -1). */
static int64_t s64_or(json_object *o, const char *key, int64_t none)
{
	json_object *v = get(o, key);

	return v ? json_object_get_int64(v) : none;
}

/* Whether @o has the member @key, null or not. */
static bool has(json_object *o, const char *key)
{
	return o && json_object_is_type(o, json_type_object) &&
	       json_object_object_get_ex(o, key, NULL);
}

static void str(char *dst, size_t n, json_object *o, const char *key)
{
	json_object *v = get(o, key);
	const char *s = v ? json_object_get_string(v) : "";

	snprintf(dst, n, "%s", s ? s : "");
}

/* Element @i of array @a if it is an array itself, else NULL. */
static json_object *arr_idx_arr(json_object *a, size_t i)
{
	json_object *e = json_object_array_get_idx(a, i);

	return e && json_object_is_type(e, json_type_array) ? e : NULL;
}

/* Element @i of array @e as a u64; 0 if there is none. */
static uint64_t idx_u64(json_object *e, size_t i)
{
	json_object *v;

	if (!e || i >= json_object_array_length(e))
		return 0;
	v = json_object_array_get_idx(e, i);
	return v ? json_object_get_uint64(v) : 0;
}

static size_t arr_len(json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ?
	       json_object_array_length(a) : 0;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "vmlat: out of memory\n");
		exit(1);
	}
	return p;
}

/* ---- fields: an object's members, parsed and subtracted from one list -- */

#define FIELDS(f)		f, sizeof(f) / sizeof((f)[0])

static uint64_t *field_u64(void *obj, const struct field *f)
{
	return (uint64_t *)((char *)obj + f->off);
}

/* Every field of @fs from @o into @obj (a missing member reads 0). */
static void parse_fields(void *obj, json_object *o, const struct field *fs,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		*field_u64(obj, &fs[i]) = fs[i].is_signed ?
			(uint64_t)s64(o, fs[i].key) : u64(o, fs[i].key);
}

/* @b - @a, never below 0 (a reset between the reads: take @b). */
static uint64_t sub(uint64_t b, uint64_t a)
{
	return b >= a ? b - a : b;
}

/*
 * @d (a copy of @b) made the delta from @a to @b: each counter of @fs
 * subtracted (from 0 without @a), the gauges left as @b has them.
 */
static void delta_fields(void *d, const void *a, const void *b,
			 const struct field *fs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fs[i].counter)
			*field_u64(d, &fs[i]) =
				sub(*field_u64((void *)b, &fs[i]),
				    a ? *field_u64((void *)a, &fs[i]) : 0);
}

/*
 * The fields of an object: its members, and how vmlat export writes those
 * it exports (X: the Prometheus family, then the label that tells the
 * family's fields apart, or none).
 */
#define NESTED_S	"vmlat_nested_seconds_total"
#define SYNC_REJECTED	"vmlat_clock_sync_rejected_calls_total"

/* A VM's nested totals ("nested": {"totals": {...}}). */
const struct field nested_fields[] = {
	COUNTER_X(struct nested, l1_ns, NESTED_S, "part", "l1"),
	COUNTER_X(struct nested, l2_ns, NESTED_S, "part", "l2"),
	/* Not exported: the _sum of histograms l2_exit_l0, l2_exit_l1. */
	COUNTER(struct nested, l2_exit_l0_ns),
	COUNTER(struct nested, l2_exit_l1_ns),
	COUNTER(struct nested, l2_entries),
	COUNTER_X(struct nested, l1_to_l2, "vmlat_nested_l1_to_l2_total",
		  NULL, NULL),
	COUNTER_X(struct nested, l2_exits_l0, "vmlat_nested_l2_exits_total",
		  "handled_by", "l0"),
	COUNTER_X(struct nested, l2_exits_l1, "vmlat_nested_l2_exits_total",
		  "handled_by", "l1"),
	COUNTER_X(struct nested, l2_sync_calls,
		  "vmlat_nested_l2_sync_calls_total", NULL, NULL),
	COUNTER_X(struct nested, l2_sync_ns, NESTED_S, "part", "l2_sync"),
	COUNTER(struct nested, heuristic_agree),
	COUNTER(struct nested, heuristic_judged),
};
const size_t nr_nested_fields = sizeof(nested_fields) /
				sizeof(nested_fields[0]);

/* A VM's clock sync ("sync"); exchanges_total is the parsed exchanges. */
const struct field sync_fields[] = {
	COUNTER_X(struct sync, exchanges, "vmlat_clock_sync_exchanges_total",
		  NULL, NULL),
	GAUGE_SX(struct sync, drift_ppb, "vmlat_clock_sync_drift_ratio"),
	GAUGE_SX(struct sync, offset_ns, "vmlat_clock_sync_offset_seconds"),
	GAUGE_X(struct sync, bound_ns, "vmlat_clock_sync_bound_seconds"),
	GAUGE(struct sync, last_ns),
	COUNTER_X(struct sync, calls, "vmlat_clock_sync_calls_total", NULL,
		  NULL),
	COUNTER_X(struct sync, user, SYNC_REJECTED, "reason", "user"),
	COUNTER_X(struct sync, malformed, SYNC_REJECTED, "reason",
		  "malformed"),
	COUNTER_X(struct sync, replayed, SYNC_REJECTED, "reason", "replayed"),
	COUNTER_X(struct sync, unpaired, SYNC_REJECTED, "reason", "unpaired"),
	COUNTER_X(struct sync, refused, SYNC_REJECTED, "reason", "refused"),
	COUNTER_X(struct sync, limited, SYNC_REJECTED, "reason", "limited"),
	COUNTER_X(struct sync, restarts, "vmlat_clock_sync_restarts_total",
		  NULL, NULL),
};
const size_t nr_sync_fields = sizeof(sync_fields) / sizeof(sync_fields[0]);

/* A VM's steal ("steal"): type 1 and type 2. */
static const struct field steal_fields[] = {
	COUNTER(struct steal, ready_ns),
	COUNTER(struct steal, preempted_ns),
	COUNTER(struct steal, wait_ns),
	COUNTER(struct steal, handling_ns),
	COUNTER(struct steal, kernel_ns),
	COUNTER(struct steal, user_ns),
};

/*
 * An exit reason's counters ("exits": [...]): the module's exit_cols;
 * exported with the labels isa and reason of their row.
 */
const struct field exit_fields[] = {
	COUNTER_X(struct exit_reason, count, "vmlat_exits_total", NULL, NULL),
	COUNTER_X(struct exit_reason, total_ns,
		  "vmlat_exit_handling_seconds_total", NULL, NULL),
};
const size_t nr_exit_fields = sizeof(exit_fields) / sizeof(exit_fields[0]);

/* A VM's counters of its own ("vms": [...]), besides its states. */
static const struct field vm_fields[] = {
	COUNTER(struct vm, exits_undecoded),
	COUNTER_K(struct vm, pre_other_ns, "preemptors_other_ns"),
};

/* A VM's halts ("halt"). */
static const struct field halt_fields[] = {
	COUNTER(struct halt, halts),
	COUNTER(struct halt, polled),
	COUNTER(struct halt, hits),
	COUNTER(struct halt, hit_ns),
	COUNTER(struct halt, miss_ns),
	COUNTER(struct halt, slept),
	COUNTER(struct halt, slept_ns),
	COUNTER(struct halt, woken),
	COUNTER(struct halt, wake_ns),
	COUNTER(struct halt, invalid),
	COUNTER(struct halt, grows),
	COUNTER(struct halt, shrinks),
	COUNTER(struct halt, unseen),
};

/* A VM's suspected lock-holder preemptions ("lock_holder"). */
static const struct field lhp_fields[] = {
	COUNTER(struct lock_holder, count),
	COUNTER(struct lock_holder, ns),
	GAUGE(struct lock_holder, max_ns),
	COUNTER(struct lock_holder, spins),
};

/* A VM's interrupts of one source and target state ("irq": [...]). */
static const struct field irq_fields[] = {
	COUNTER(struct irq_cell, count),
	COUNTER(struct irq_cell, sum_ns),
	GAUGE(struct irq_cell, max_ns),
	COUNTER(struct irq_cell, wait_ns),
	COUNTER(struct irq_cell, lost),
	COUNTER(struct irq_cell, coalesced),
};

/* A vCPU's counters ("vcpus": [...]), besides its states. */
static const struct field vcpu_fields[] = {
	COUNTER(struct vcpu, unexpected),
	COUNTER(struct vcpu, late_exits),
};

/* An L2 exit reason's counts ("nested": {"exits": [...]}). */
static const struct field nested_exit_fields[] = {
	COUNTER_K(struct nested_exit, l0, "handled_by_l0"),
	COUNTER_K(struct nested_exit, l1, "reflected_to_l1"),
};

/* A top preemptor's counters ("preemptors": [...]). */
static const struct field preemptor_fields[] = {
	COUNTER(struct preemptor, stolen_ns),
	COUNTER(struct preemptor, slices),
};

/* ---- parsing ---------------------------------------------------------- */

static void parse_states(struct states *s, json_object *o)
{
	char key[32];
	int i;

	s->observed_ns = u64(o, "observed_ns");
	for (i = 0; i < VMLAT_NR_STATES; i++) {
		snprintf(key, sizeof(key), "%s_ns", state_names[i]);
		s->ns[i] = u64(o, key);
	}
	s->exits = u64(o, "exits_total");
}

static void parse_hist(struct hist *h, json_object *o)
{
	json_object *b = get(o, "buckets"), *e;
	size_t i, n;

	h->count = u64(o, "count");
	h->min_ns = u64(o, "min_ns");
	h->max_ns = u64(o, "max_ns");
	h->sum_ns = u64(o, "sum_ns");
	h->nr = arr_len(b);
	h->b = xcalloc(h->nr, sizeof(*h->b));
	/* [lo_ns, hi_ns, count]; anything else is no bucket. */
	for (i = 0, n = 0; i < h->nr; i++) {
		e = arr_idx_arr(b, i);
		if (!e || json_object_array_length(e) != 3)
			continue;
		h->b[n].lo_ns = idx_u64(e, 0);
		h->b[n].hi_ns = idx_u64(e, 1);
		h->b[n++].count = idx_u64(e, 2);
	}
	h->nr = n;
}

static void parse_exit(struct exit_reason *x, json_object *o)
{
	json_object *h = get(o, "histogram");

	str(x->isa, sizeof(x->isa), o, "isa");
	x->code = u64(o, "code");
	str(x->name, sizeof(x->name), o, "name");
	parse_fields(x, o, FIELDS(exit_fields));
	x->has_hist = h != NULL;
	if (h)
		parse_hist(&x->h, h);
}

static void parse_nested(struct nested *n, json_object *o)
{
	json_object *t = get(o, "totals"), *x = get(o, "exits"), *e;
	size_t i;

	n->nr_vcpus = (int)arr_len(get(o, "vcpus"));
	parse_fields(n, t, FIELDS(nested_fields));
	n->nr_exits = arr_len(x);
	n->exits = xcalloc(n->nr_exits, sizeof(*n->exits));
	for (i = 0; i < n->nr_exits; i++) {
		e = json_object_array_get_idx(x, i);
		str(n->exits[i].name, sizeof(n->exits[i].name), e, "name");
		parse_fields(&n->exits[i], e, FIELDS(nested_exit_fields));
	}
}

/* The index of @name in @names, or -1. */
static int name_index(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

/* A VM's "irq" cells; an unknown source or state is left out. */
static void parse_irq(struct vm *v, json_object *a)
{
	char sn[16], an[16];
	json_object *e;
	size_t i;
	int src, at;

	for (i = 0; i < arr_len(a); i++) {
		e = json_object_array_get_idx(a, i);
		str(sn, sizeof(sn), e, "source");
		str(an, sizeof(an), e, "at");
		src = name_index(irq_src_names, VMLAT_NR_IRQ_SOURCES, sn);
		at = name_index(irq_at_names, VMLAT_NR_IRQ_ATS, an);
		if (src >= 0 && at >= 0)
			parse_fields(&v->irq[src][at], e, FIELDS(irq_fields));
	}
}

static void parse_sync(struct sync *s, json_object *o)
{
	if (!o || !json_object_is_type(o, json_type_object))
		return;
	s->present = true;
	str(s->state, sizeof(s->state), o, "state");
	parse_fields(s, o, FIELDS(sync_fields));
	s->exchanges_total = s->exchanges;
	s->mapped = get(o, "bound_ns") != NULL;
}

static enum vmlat_preemptor_kind pkind_of(const char *name)
{
	int i;

	for (i = 0; i < VMLAT_NR_BY_KINDS; i++)
		if (!strcmp(name, pkind_names[i]))
			return i;
	return VMLAT_BY_NONE;
}

/* Who a preemptor is: its kind, task, and VM and vCPU or CPU. */
static void parse_who(struct preemptor *p, json_object *e)
{
	char kind[16];

	str(kind, sizeof(kind), e, "kind");
	p->kind = pkind_of(kind);
	p->pid = (int)s64(e, "pid");
	str(p->comm, sizeof(p->comm), e, "comm");
	p->vm_pid = (int)s64(e, "vm");
	p->vcpu = (int)s64_or(e, "vcpu", -1);
	p->cpu = (int)s64_or(e, "cpu", -1);
}

/* The names vmlat save wrote into a VM's object and its vCPUs'. */
static void parse_saved_names(struct vm *v, json_object *o)
{
	json_object *a = get(o, "vcpus");
	size_t i;

	v->names_saved = has(o, "name");
	if (!v->names_saved)
		return;
	v->named = get(o, "name") != NULL;
	if (v->named)
		str(v->name, sizeof(v->name), o, "name");
	v->libvirt = json_object_get_boolean(get(o, "libvirt"));
	str(v->uuid, sizeof(v->uuid), o, "uuid");
	for (i = 0; i < v->nr_vcpus; i++)
		str(v->vcpus[i].thread, sizeof(v->vcpus[i].thread),
		    json_object_array_get_idx(a, i), "thread");
}

static void parse_vm(struct vm *v, json_object *o, int schema)
{
	json_object *a, *e, *h;
	size_t i;
	int k;

	v->id = (unsigned int)u64(o, "id");
	v->pid = (int)s64(o, "pid");
	str(v->comm, sizeof(v->comm), o, "comm");
	v->exited = json_object_get_boolean(get(o, "exited"));
	v->partly = json_object_get_boolean(get(o, "partly_tracked"));
	parse_states(&v->st, o);

	a = get(o, "vcpus");
	v->nr_vcpus = arr_len(a);
	v->vcpus = xcalloc(v->nr_vcpus, sizeof(*v->vcpus));
	for (i = 0; i < v->nr_vcpus; i++) {
		struct vcpu *c = &v->vcpus[i];

		e = json_object_array_get_idx(a, i);
		c->idx = (int)s64(e, "vcpu");
		c->tid = (int)s64(e, "tid");
		str(c->state, sizeof(c->state), e, "state");
		parse_states(&c->st, e);
		parse_fields(c, e, FIELDS(vcpu_fields));
	}

	a = get(o, "exits");
	v->nr_exits = arr_len(a);
	v->exits = xcalloc(v->nr_exits, sizeof(*v->exits));
	for (i = 0; i < v->nr_exits; i++)
		parse_exit(&v->exits[i], json_object_array_get_idx(a, i));

	h = get(o, "histograms");
	for (k = 0; k < NR_HK; k++) {
		e = get(h, hkind_names[k]);
		if (e)
			parse_hist(&v->h[k], e);
	}
	parse_irq(v, get(o, "irq"));
	parse_fields(&v->halt, get(o, "halt"), FIELDS(halt_fields));
	e = get(o, "lock_holder");
	parse_fields(&v->lhp, e, FIELDS(lhp_fields));
	v->lhp.max_by.kind = VMLAT_BY_NONE;
	e = get(e, "max_by");
	if (e)
		parse_who(&v->lhp.max_by, e);
	parse_nested(&v->nested, get(o, "nested"));
	parse_sync(&v->sync, get(o, "sync"));

	a = get(o, "preemptors");
	v->nr_pre = arr_len(a);
	v->pre = xcalloc(v->nr_pre, sizeof(*v->pre));
	for (i = 0; i < v->nr_pre; i++) {
		struct preemptor *p = &v->pre[i];

		e = json_object_array_get_idx(a, i);
		parse_who(p, e);
		parse_fields(p, e, FIELDS(preemptor_fields));
	}
	parse_fields(v, o, FIELDS(vm_fields));
	v->stolen_by_host = u64(get(o, "stolen_by"),
				schema < 4 ? "host" : "host_ns");
	/* A guest's document: the VMs as one total, its own vCPUs apart. */
	v->stolen_by_vms = u64(get(o, "stolen_by"), "other_ns");
	v->stolen_by_own = u64(get(o, "stolen_by"), "own_ns");
	parse_fields(&v->steal, get(o, "steal"), FIELDS(steal_fields));
	snprintf(v->name, sizeof(v->name), "%s", v->comm);
	parse_saved_names(v, o);
}

/*
 * A guest's own document (vmlat_guest.ko's steal.json, "from": "guest"):
 * 0 if the host answered (@s->guest set), or -1 with what the guest was
 * told, as what to do.
 */
static int guest_doc(struct snap *s, json_object *root, char *err,
		     size_t errlen)
{
	json_object *g = get(root, "guest");
	char from[16], state[32];

	str(from, sizeof(from), root, "from");
	if (strcmp(from, "guest"))
		return 0;
	s->guest = true;
	str(state, sizeof(state), g, "steal");
	str(s->steal_accounting, sizeof(s->steal_accounting), g,
	    "steal_accounting");
	if (!strcmp(state, "answered") || !strcmp(state, "partly"))
		return 0;
	if (!strcmp(state, "denied"))
		snprintf(err, errlen, "the host's vmlat does not allow this guest its steal: its operator can (guest_steal, Documentation/vmlat.rst)");
	else if (!strcmp(state, "no-host"))
		snprintf(err, errlen, "no vmlat on the host answers this guest's steal calls: the host needs vmlat.ko loaded, with guest_steal allowing this guest");
	else if (!strcmp(state, "limited"))
		snprintf(err, errlen, "the host limited this guest's steal calls: ask again in a second");
	else
		snprintf(err, errlen, "this guest cannot ask its host for its steal (%s): see vmlat_guest's status", state);
	return -1;
}

int snap_parse(struct snap *s, const char *text, char *err, size_t errlen)
{
	enum json_tokener_error jerr;
	json_object *root, *vms, *d;
	size_t i;

	memset(s, 0, sizeof(*s));
	root = json_tokener_parse_verbose(text, &jerr);
	if (!root || !json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "not a vmlat JSON document: %s",
			 root ? "not an object" : json_tokener_error_desc(jerr));
		json_object_put(root);
		return -1;
	}
	if (!get(root, "schema")) {
		snprintf(err, errlen, "the document has no schema: it comes from a vmlat module older than this command (schema %d); load the module built with this command",
			 VMLAT_SCHEMA);
		json_object_put(root);
		return -1;
	}
	s->schema = (int)s64(root, "schema");
	if (s->schema < VMLAT_SCHEMA_OLDEST || s->schema > VMLAT_SCHEMA) {
		snprintf(err, errlen, "the document has schema %d, this command reads schemas %d to %d: use the vmlat command of the module's version (%s)",
			 s->schema, VMLAT_SCHEMA_OLDEST, VMLAT_SCHEMA,
			 json_object_get_string(get(root, "version")) ?: "?");
		json_object_put(root);
		return -1;
	}
	str(s->version, sizeof(s->version), root, "version");
	s->now_ns = u64(root, "now_ns");
	if (guest_doc(s, root, err, errlen)) {
		json_object_put(root);
		return -1;
	}
	vms = get(root, "vms");
	if (!vms || !json_object_is_type(vms, json_type_array)) {
		snprintf(err, errlen, "not a vmlat JSON document: \"vms\" is not a list");
		json_object_put(root);
		return -1;
	}
	s->nr_vms = arr_len(vms);
	s->vms = xcalloc(s->nr_vms, sizeof(*s->vms));
	for (i = 0; i < s->nr_vms; i++)
		parse_vm(&s->vms[i], json_object_array_get_idx(vms, i),
			 s->schema);
	d = get(root, "dropped");
	s->dropped_vms = u64(d, "vms");
	s->dropped_vcpus = u64(d, "vcpus");
	s->dropped_victims = u64(d, "victims");
	if (snap_keep_doc)
		s->doc = root;
	else
		json_object_put(root);
	return 0;
}

/* ---- reading, and what to do when it fails ---------------------------- */

char *read_fd_all(int fd, size_t max, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	if (!buf)
		return NULL;
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return NULL;
		}
		if (!r)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			errno = EFBIG;
			return NULL;
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The kernel's lockdown level, "none" if it has none to say. */
static void lockdown_level(char *buf, size_t n)
{
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");
	char line[128], *l, *r;

	snprintf(buf, n, "none");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		l = strchr(line, '[');
		r = l ? strchr(l, ']') : NULL;
		if (l && r) {
			*r = '\0';
			snprintf(buf, n, "%s", l + 1);
		}
	}
	fclose(f);
}

/* Why the module's file cannot be opened, as what to do about it. */
static void explain_open(const char *path, int e, char *err, size_t errlen)
{
	struct statfs sfs;
	char lock[32];

	if (e == ENOENT) {
		if (statfs(VMLAT_DEBUGFS, &sfs) || sfs.f_type != DEBUGFS_MAGIC)
			snprintf(err, errlen, "debugfs is not mounted on %s: mount it (mount -t debugfs none %s)",
				 VMLAT_DEBUGFS, VMLAT_DEBUGFS);
		else if (access("/sys/module/vmlat", F_OK))
			snprintf(err, errlen, "the vmlat module is not loaded: load it (modprobe vmlat)");
		else
			snprintf(err, errlen, "%s is missing though vmlat is loaded: is it the vmlat module of this command (%s)?",
				 path, VMLAT_JSON);
		return;
	}
	if (e == EACCES) {
		snprintf(err, errlen, "no permission to read %s: run as root",
			 path);
		return;
	}
	if (e == EPERM) {
		lockdown_level(lock, sizeof(lock));
		if (!strcmp(lock, "confidentiality"))
			snprintf(err, errlen, "the kernel's lockdown (confidentiality) refuses debugfs: boot with lockdown=integrity or none to read %s",
				 path);
		else
			snprintf(err, errlen, "reading %s is not permitted: run as root",
				 path);
		return;
	}
	snprintf(err, errlen, "%s: %s", path, strerror(e));
}

bool snap_keep_doc;

static char *stdin_text;

int snap_read(struct snap *s, const char *path, char *err, size_t errlen)
{
	/* In a guest without a vmlat of its own: its steal, if it has it. */
	const char *p = path ? path :
			access(VMLAT_JSON, F_OK) && !access(VMLAT_GUEST_JSON, F_OK) ?
			VMLAT_GUEST_JSON : VMLAT_JSON;
	size_t len;
	char *text;
	int fd, ret;

	memset(s, 0, sizeof(*s));
	/* Standard input is read once: a second read parses it again. */
	if (path && !strcmp(path, "-") && stdin_text)
		return snap_parse(s, stdin_text, err, errlen);
	if (path && !strcmp(path, "-"))
		fd = dup(0);
	else
		fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (path)
			snprintf(err, errlen, "%s: %s", p, strerror(errno));
		else
			explain_open(p, errno, err, errlen);
		return -1;
	}
	text = read_fd_all(fd, SIZE_MAX, &len);
	if (!text) {
		if (path)
			snprintf(err, errlen, "%s: %s", p, strerror(errno));
		else
			explain_open(p, errno, err, errlen);
		close(fd);
		return -1;
	}
	close(fd);
	ret = snap_parse(s, text, err, errlen);
	if (path && !strcmp(path, "-"))
		stdin_text = text;
	else
		free(text);
	if (ret) {
		/* Say which document the parse error is about. */
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%s", err);
		snprintf(err, errlen, "%s: %s", p, tmp);
	}
	return ret;
}

static void hist_free(struct hist *h)
{
	free(h->b);
	h->b = NULL;
	h->nr = 0;
}

void vm_free(struct vm *v)
{
	size_t i;
	int k;

	free(v->vcpus);
	for (i = 0; i < v->nr_exits; i++)
		hist_free(&v->exits[i].h);
	free(v->exits);
	for (k = 0; k < NR_HK; k++)
		hist_free(&v->h[k]);
	free(v->nested.exits);
	free(v->pre);
	memset(v, 0, sizeof(*v));
}

void snap_free(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->nr_vms; i++)
		vm_free(&s->vms[i]);
	free(s->vms);
	json_object_put(s->doc);
	memset(s, 0, sizeof(*s));
}

const struct vm *snap_vm(const struct snap *s, unsigned int id, int pid)
{
	size_t i;

	for (i = 0; s && i < s->nr_vms; i++)
		if (s->vms[i].id == id && s->vms[i].pid == pid)
			return &s->vms[i];
	return NULL;
}

/* ---- deltas ------------------------------------------------------------ */

static void states_delta(struct states *d, const struct states *a,
			 const struct states *b)
{
	int i;

	d->observed_ns = sub(b->observed_ns, a ? a->observed_ns : 0);
	for (i = 0; i < VMLAT_NR_STATES; i++)
		d->ns[i] = sub(b->ns[i], a ? a->ns[i] : 0);
	d->exits = sub(b->exits, a ? a->exits : 0);
}

static void hist_copy(struct hist *d, const struct hist *b)
{
	*d = *b;
	d->b = xcalloc(b->nr, sizeof(*b->b));
	/* A document without this histogram (a guest's) has no buckets. */
	if (b->nr)
		memcpy(d->b, b->b, b->nr * sizeof(*b->b));
}

/*
 * Bucket by bucket. min and max of the interval are not known: they are
 * the bounds of its lowest and highest non-empty bucket, clamped to the
 * totals' min and max.
 */
static void hist_delta(struct hist *d, const struct hist *a,
		       const struct hist *b)
{
	size_t i, j = 0, n = 0;

	if (!a || b->count < a->count) {
		hist_copy(d, b);
		return;
	}
	memset(d, 0, sizeof(*d));
	d->b = xcalloc(b->nr, sizeof(*b->b));
	for (i = 0; i < b->nr; i++) {
		uint64_t c = b->b[i].count;

		while (j < a->nr && a->b[j].lo_ns < b->b[i].lo_ns)
			j++;
		if (j < a->nr && a->b[j].lo_ns == b->b[i].lo_ns)
			c = sub(c, a->b[j].count);
		if (!c)
			continue;
		d->b[n] = b->b[i];
		d->b[n++].count = c;
		d->count += c;
	}
	d->nr = n;
	d->sum_ns = sub(b->sum_ns, a->sum_ns);
	if (n) {
		d->min_ns = d->b[0].lo_ns > b->min_ns ? d->b[0].lo_ns : b->min_ns;
		d->max_ns = d->b[n - 1].hi_ns - 1 < b->max_ns ?
			    d->b[n - 1].hi_ns - 1 : b->max_ns;
	}
}

static const struct preemptor *find_pre(const struct vm *a,
					const struct preemptor *p)
{
	size_t i;

	for (i = 0; a && i < a->nr_pre; i++)
		if (a->pre[i].kind == p->kind && a->pre[i].pid == p->pid &&
		    a->pre[i].cpu == p->cpu)
			return &a->pre[i];
	return NULL;
}

static const struct exit_reason *find_exit(const struct vm *a,
					   const struct exit_reason *x)
{
	size_t i;

	for (i = 0; a && i < a->nr_exits; i++)
		if (a->exits[i].code == x->code &&
		    !strcmp(a->exits[i].isa, x->isa))
			return &a->exits[i];
	return NULL;
}

void vm_delta(struct vm *d, const struct vm *a, const struct vm *b)
{
	const struct preemptor *pa;
	const struct exit_reason *xa;
	size_t i, n;
	int k;

	/*
	 * A reset between the two reads: the VM's totals start again from
	 * 0 (its observed time went down). Take the later read whole rather
	 * than subtract the earlier one field by field.
	 */
	if (a && b->st.observed_ns < a->st.observed_ns)
		a = NULL;
	*d = *b;
	states_delta(&d->st, a ? &a->st : NULL, &b->st);

	d->vcpus = xcalloc(b->nr_vcpus, sizeof(*d->vcpus));
	for (i = 0; i < b->nr_vcpus; i++) {
		const struct vcpu *ca = NULL;
		size_t j;

		for (j = 0; a && j < a->nr_vcpus; j++)
			if (a->vcpus[j].tid == b->vcpus[i].tid &&
			    a->vcpus[j].idx == b->vcpus[i].idx &&
			    a->vcpus[j].st.observed_ns <=
			    b->vcpus[i].st.observed_ns)
				ca = &a->vcpus[j];
		d->vcpus[i] = b->vcpus[i];
		states_delta(&d->vcpus[i].st, ca ? &ca->st : NULL,
			     &b->vcpus[i].st);
		delta_fields(&d->vcpus[i], ca, &b->vcpus[i],
			     FIELDS(vcpu_fields));
	}

	d->exits = xcalloc(b->nr_exits, sizeof(*d->exits));
	for (i = n = 0; i < b->nr_exits; i++) {
		const struct exit_reason *xb = &b->exits[i];

		xa = find_exit(a, xb);
		d->exits[n] = *xb;
		delta_fields(&d->exits[n], xa, xb, FIELDS(exit_fields));
		if (!d->exits[n].count)
			continue;
		if (xb->has_hist)
			hist_delta(&d->exits[n].h, xa && xa->has_hist ?
				   &xa->h : NULL, &xb->h);
		n++;
	}
	d->nr_exits = n;

	for (k = 0; k < NR_HK; k++)
		hist_delta(&d->h[k], a ? &a->h[k] : NULL, &b->h[k]);
	for (i = 0; i < VMLAT_NR_IRQ_SOURCES; i++)
		for (k = 0; k < VMLAT_NR_IRQ_ATS; k++)
			delta_fields(&d->irq[i][k], a ? &a->irq[i][k] : NULL,
				     &b->irq[i][k], FIELDS(irq_fields));
	delta_fields(&d->halt, a ? &a->halt : NULL, &b->halt,
		     FIELDS(halt_fields));
	/* The longest, and its preemptor, since load: b's. */
	delta_fields(&d->lhp, a ? &a->lhp : NULL, &b->lhp,
		     FIELDS(lhp_fields));

	d->nested.exits = xcalloc(b->nested.nr_exits, sizeof(*d->nested.exits));
	memcpy(d->nested.exits, b->nested.exits,
	       b->nested.nr_exits * sizeof(*b->nested.exits));
	if (a) {
		delta_fields(&d->nested, &a->nested, &b->nested,
			     FIELDS(nested_fields));
		for (i = 0; i < d->nested.nr_exits; i++) {
			size_t j;

			for (j = 0; j < a->nested.nr_exits; j++)
				if (!strcmp(a->nested.exits[j].name,
					    d->nested.exits[i].name)) {
					delta_fields(&d->nested.exits[i],
						     &a->nested.exits[j],
						     &d->nested.exits[i],
						     FIELDS(nested_exit_fields));
				}
		}
	}

	/* Of the preemptors in @b's top list; those that left it are lost. */
	d->pre = xcalloc(b->nr_pre, sizeof(*d->pre));
	for (i = n = 0; i < b->nr_pre; i++) {
		pa = find_pre(a, &b->pre[i]);
		d->pre[n] = b->pre[i];
		delta_fields(&d->pre[n], pa, &b->pre[i],
			     FIELDS(preemptor_fields));
		if (d->pre[n].stolen_ns)
			n++;
	}
	d->nr_pre = n;
	delta_fields(d, a, b, FIELDS(vm_fields));
	d->stolen_by_host = sub(b->stolen_by_host, a ? a->stolen_by_host : 0);
	d->stolen_by_vms = sub(b->stolen_by_vms, a ? a->stolen_by_vms : 0);
	d->stolen_by_own = sub(b->stolen_by_own, a ? a->stolen_by_own : 0);
	delta_fields(&d->steal, a ? &a->steal : NULL, &b->steal,
		     FIELDS(steal_fields));
	if (a && b->sync.present && a->sync.present)
		delta_fields(&d->sync, &a->sync, &b->sync,
			     FIELDS(sync_fields));
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t want, seen = 0;
	size_t i;

	if (!h->count || !h->nr)
		return 0;
	want = (uint64_t)(q * (double)h->count + 0.999999);
	if (!want)
		want = 1;
	for (i = 0; i < h->nr; i++) {
		seen += h->b[i].count;
		if (seen >= want)
			return h->b[i].hi_ns - 1 < h->max_ns ?
			       h->b[i].hi_ns - 1 : h->max_ns;
	}
	return h->max_ns;
}

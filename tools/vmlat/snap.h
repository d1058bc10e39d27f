/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One read of /sys/kernel/debug/vmlat/json (schema VMLAT_SCHEMA), as C
 * structs, and what the commands compute from two reads: deltas of
 * counters, times and histograms between them.
 */
#ifndef VMLAT_SNAP_H
#define VMLAT_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doc_names.h"

/*
 * A member of an object of the document (@key), where it goes in the
 * struct (@off: a uint64_t, an int64_t if @is_signed), and what a delta
 * does with it: a counter is the later read minus the earlier one, a
 * gauge the later read as it is. Exported (vmlat export) as a sample of
 * the family @metric (NULL: not exported), a counter or gauge as the
 * field is, with the label @lkey="@lval" if the family has several
 * fields. A family whose name says seconds takes nanoseconds, one that
 * says ratio parts per billion.
 */
struct field {
	const char *key;
	size_t off;
	bool counter;
	bool is_signed;
	const char *metric;
	const char *lkey, *lval;
};

#define FIELD_(type, m, ...)						\
	{ .key = #m, .off = offsetof(type, m), __VA_ARGS__ }
#define COUNTER(type, m)	FIELD_(type, m, .counter = true)
#define COUNTER_K(type, m, key_)					\
	{ .key = key_, .off = offsetof(type, m), .counter = true }
#define GAUGE(type, m)		FIELD_(type, m, .counter = false)
#define GAUGE_S(type, m)	FIELD_(type, m, .is_signed = true)
#define COUNTER_X(type, m, metric_, lkey_, lval_)			\
	FIELD_(type, m, .counter = true, .metric = metric_,		\
	       .lkey = lkey_, .lval = lval_)
#define GAUGE_X(type, m, metric_)	FIELD_(type, m, .metric = metric_)
#define GAUGE_SX(type, m, metric_)					\
	FIELD_(type, m, .is_signed = true, .metric = metric_)

/* Field lists of snap.c that vmlat export writes. */
extern const struct field nested_fields[], sync_fields[], exit_fields[];
extern const size_t nr_nested_fields, nr_sync_fields, nr_exit_fields;

/* The schema the module writes, and the oldest this command still reads. */
#define VMLAT_SCHEMA		4
#define VMLAT_SCHEMA_OLDEST	3
#define VMLAT_DEBUGFS		"/sys/kernel/debug"
#define VMLAT_JSON		VMLAT_DEBUGFS "/vmlat/json"
/* In a guest: its own steal, as its host's vmlat answered (vmlat_guest.ko) */
#define VMLAT_GUEST_JSON	VMLAT_DEBUGFS "/vmlat_guest/steal.json"

/*
 * The module's states and kinds, with their names, are its own lists
 * (vmlat/core/doc_names.h): enum vmlat_state, vmlat_preemptor_kind and
 * vmlat_sync_state. A VM's histograms are the module's kinds (enum
 * vmlat_hist_kind), then the nested ones (enum vmlat_nested_hist), then
 * the interrupt deliveries' (enum vmlat_irq_src), then the TSC-deadline
 * timer's lateness (enum vmlat_expire_hist).
 */
#define HK_NESTED(nh)	(VMLAT_NR_HIST_KINDS + (nh))
#define HK_IRQ(src)	HK_NESTED(VMLAT_NR_NESTED_HISTS + (src))
#define HK_EXPIRE(e)	HK_IRQ(VMLAT_NR_IRQ_SOURCES + (e))
#define NR_HK		HK_EXPIRE(VMLAT_NR_EXPIRE_HISTS)

/* Whether histogram kind @k is a nested one (only a nested VM has it). */
static inline bool hk_is_nested(int k)
{
	return k >= HK_NESTED(0) && k < HK_IRQ(0);
}

/*
 * Whether histogram kind @k is an interrupt source's delivery latency or
 * a timer's lateness: shown only for a VM that had any.
 */
static inline bool hk_is_irq(int k)
{
	return k >= HK_IRQ(0);
}

extern const char *const state_names[VMLAT_NR_STATES];
extern const char *const hkind_names[NR_HK];
/* What each kind measures, for people. */
extern const char *const hkind_what[NR_HK];
extern const char *const pkind_names[VMLAT_NR_BY_KINDS];
extern const char *const irq_src_names[VMLAT_NR_IRQ_SOURCES];
extern const char *const irq_at_names[VMLAT_NR_IRQ_ATS];
extern const char *const sync_state_names[VMLAT_NR_SYNC_STATES];

struct bucket {
	uint64_t lo_ns, hi_ns;	/* the module's bucket: [lo, hi) */
	uint64_t count;
};

struct hist {
	uint64_t count, min_ns, max_ns, sum_ns;
	size_t nr;		/* non-empty buckets, by rising lo_ns */
	struct bucket *b;
};

/* Time per state, observed time and exits: of a vCPU or a VM. */
struct states {
	uint64_t observed_ns;
	uint64_t ns[VMLAT_NR_STATES];
	uint64_t exits;
};

struct vcpu {
	int idx, tid;
	char state[16];		/* a state name, or "exited" */
	struct states st;
	uint64_t unexpected, late_exits;
	char thread[64];	/* its thread's name ("CPU 0/KVM"), or "" */
};

struct exit_reason {
	char isa[8];		/* "svm", "vmx" */
	uint64_t code;
	char name[48];
	/* the module's exit_cols (debugfs/tables.c); snap.c's exit_fields */
	uint64_t count, total_ns;
	bool has_hist;
	struct hist h;
};

struct preemptor {
	enum vmlat_preemptor_kind kind;
	int pid;		/* host task, or the preempting vCPU's tid */
	char comm[64];
	int vm_pid, vcpu, cpu;	/* of kind vm/same_vm; of kind idle */
	uint64_t stolen_ns, slices;
};

struct nested_exit {
	char name[48];
	uint64_t l0, l1;	/* handled by L0, reflected to L1 */
};

struct nested {
	int nr_vcpus;		/* vCPUs that ran a nested guest; 0: none */
	uint64_t l1_ns, l2_ns, l2_exit_l0_ns, l2_exit_l1_ns;
	uint64_t l2_entries, l1_to_l2, l2_exits_l0, l2_exits_l1;
	uint64_t l2_sync_calls, l2_sync_ns;	/* L2's clock-sync calls */
	uint64_t heuristic_agree, heuristic_judged;
	size_t nr_exits;
	struct nested_exit *exits;
};

struct sync {
	bool present;		/* its guest called at least once */
	char state[16];		/* ok, waiting, inconsistent, out_of_range */
	uint64_t exchanges;	/* in the interval, for a delta */
	uint64_t exchanges_total;	/* since its guest first called */
	bool mapped;		/* state ok: the fit below holds */
	int64_t drift_ppb, offset_ns;
	uint64_t bound_ns, last_ns;
	uint64_t calls, user, malformed, replayed, unpaired, refused, limited,
		 restarts;
};

struct steal {
	uint64_t ready_ns, preempted_ns, wait_ns;	/* type 1 */
	uint64_t handling_ns, kernel_ns, user_ns;	/* type 2 */
};

/* A VM's halts and halt-polling ("halt"; absent: zeroes). */
struct halt {
	uint64_t halts, polled, hits, hit_ns, miss_ns, slept, slept_ns,
		 woken, wake_ns, invalid, grows, shrinks, unseen;
};

/*
 * A VM's suspected lock-holder preemptions ("lock_holder"; absent:
 * zeroes): its vCPUs' preemptions during which another of its vCPUs made
 * PAUSE exits, and who held the CPU the longest in the longest.
 */
struct lock_holder {
	uint64_t count, ns, max_ns, spins;
	struct preemptor max_by;	/* kind, pid, comm, vm_pid, vcpu */
};

/* A VM's interrupts of one source and target state ("irq": [...]). */
struct irq_cell {
	uint64_t count, sum_ns, max_ns, wait_ns, lost, coalesced;
};

struct vm {
	unsigned int id;
	int pid;
	char comm[64];
	bool exited;
	/*
	 * A vCPU thread of it was turned away at the module's caps: its
	 * figures miss that thread's time (partly_tracked).
	 */
	bool partly;
	struct states st;
	size_t nr_vcpus;
	struct vcpu *vcpus;
	size_t nr_exits;
	struct exit_reason *exits;
	uint64_t exits_undecoded;
	struct hist h[NR_HK];
	/* by enum vmlat_irq_src and enum vmlat_irq_at; absent: zeroes */
	struct irq_cell irq[VMLAT_NR_IRQ_SOURCES][VMLAT_NR_IRQ_ATS];
	struct halt halt;
	struct lock_holder lhp;
	struct nested nested;
	struct sync sync;
	size_t nr_pre;
	struct preemptor *pre;
	uint64_t pre_other_ns;
	uint64_t stolen_by_host;
	/* A guest's own document (snap.guest): the other takers, as totals */
	uint64_t stolen_by_vms, stolen_by_own;
	struct steal steal;
	char name[128];		/* names.c: libvirt's, QEMU's -name, or comm */
	bool named;		/* names.c: @name is one of the first two */
	bool libvirt;		/* names.c: @name is its libvirt domain's */
	char uuid[37];		/* names.c: its UUID, lowercase; "": none */
	/*
	 * The document says its names (vmlat save wrote them): names.c
	 * leaves @name, @named, @libvirt, @uuid and the vCPUs' threads as
	 * the document has them.
	 */
	bool names_saved;
};

struct snap {
	int schema;		/* as read; the parse is of VMLAT_SCHEMA */
	char version[32];
	uint64_t now_ns;
	size_t nr_vms;
	struct vm *vms;
	uint64_t dropped_vms, dropped_vcpus, dropped_victims;
	void *doc;		/* its json_object, if snap_keep_doc */
	/*
	 * Read in a guest (vmlat_guest.ko's steal.json): its one VM is the
	 * guest itself, as its host measured it; its kernel's steal
	 * accounting ("included", "subtracted").
	 */
	bool guest;
	char steal_accounting[16];
};

/* Whether snap_parse() keeps the parsed document in snap.doc (save). */
extern bool snap_keep_doc;

/*
 * snap_parse() - @text (a json document) into @s. Return 0, or -1 with a
 * one-line reason in @err.
 */
int snap_parse(struct snap *s, const char *text, char *err, size_t errlen);
/*
 * snap_read() - read @path (NULL: the module's debugfs file; "-": stdin)
 * and parse it. Return 0, or -1 with a one-line message in @err that says
 * what to do (module not loaded, debugfs not mounted, no permission,
 * lockdown, unknown schema).
 */
int snap_read(struct snap *s, const char *path, char *err, size_t errlen);
void snap_free(struct snap *s);

/*
 * read_fd_all() - all that @fd gives until its end, NUL-terminated, in
 * memory to free(), its length (without the NUL) in *@len; NULL with
 * errno set on a read error, out of memory, or (EFBIG) more than @max
 * bytes.
 */
char *read_fd_all(int fd, size_t max, size_t *len);

/* The VM of @s with @id and @pid (ids are reused), or NULL. */
const struct vm *snap_vm(const struct snap *s, unsigned int id, int pid);

/*
 * What happened between two reads of one VM: @d = @b - @a, where @a may
 * be NULL (the VM is new: @d = @b). Counters, times, histograms (bucket
 * by bucket), preemptors (by kind and pid; stolen_ns and slices) and
 * exit reasons (by isa and code). @d owns its memory (vm_free()).
 */
void vm_delta(struct vm *d, const struct vm *a, const struct vm *b);
void vm_free(struct vm *v);

/*
 * hist_quantile() - the value under which @q (0..1) of @h's samples fall,
 * as the upper bound of the bucket holding it (the module's buckets: at
 * most 1/16 wider than their lower bound); 0 for an empty histogram.
 */
uint64_t hist_quantile(const struct hist *h, double q);

/* The state time that is not guest: a VM's type-1 + type-2 steal. */
static inline uint64_t states_sum(const struct states *s)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < VMLAT_NR_STATES; i++)
		t += s->ns[i];
	return t;
}

#endif /* VMLAT_SNAP_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis in /sys/kernel/debug/vmlat/: one table per file, a '#'
 * header naming the columns (times in ns), fixed column order; the same
 * data as one JSON document in "json"; "reset" zeroes the statistics.
 * Where a text table and the JSON show the same numbers, one column table
 * (format.h) prints both. Formats are documented in
 * Documentation/vmlat.rst; the JSON's "schema" number changes with any
 * rename.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "compat.h"
#include "debugfs.h"
#include "doc_names.h"
#include "exit_codes.h"
#include "format.h"
#include "irq.h"
#include "vmlat.h"
#include "view.h"

/* ---- columns ---------------------------------------------------------- */

/* observed_ns, <state>_ns for each state, exits_total: of a vCPU or VM. */
static char state_col_names[VMLAT_NR_STATES][24];
static struct vmlat_col state_cols[VMLAT_NR_STATES + 2];

/* count, min_ns, <quantile>_ns for each quantile, max_ns, sum_ns. */
struct hist_row {
	u64 count;
	u64 min_ns;
	u64 q_ns[VMLAT_NR_QUANTILES];
	u64 max_ns;
	u64 sum_ns;
};

static char hist_col_names[VMLAT_NR_QUANTILES][24];
static struct vmlat_col hist_cols[VMLAT_NR_QUANTILES + 4];

/* Fill in the column tables whose names come from other tables. */
static void cols_init(void)
{
	int i, n = 0;

	state_cols[n++] = (struct vmlat_col)
		VMLAT_COL(struct vmlat_view_states, observed_ns);
	for (i = 0; i < VMLAT_NR_STATES; i++) {
		snprintf(state_col_names[i], sizeof(state_col_names[i]),
			 "%s_ns", vmlat_state_names[i]);
		state_cols[n].name = state_col_names[i];
		state_cols[n++].off = offsetof(struct vmlat_view_states,
					       time_ns[i]);
	}
	/* Not "exits": a VM's JSON object has its exits per reason so. */
	state_cols[n].name = "exits_total";
	state_cols[n++].off = offsetof(struct vmlat_view_states, exits);

	n = 0;
	hist_cols[n++] = (struct vmlat_col)VMLAT_COL(struct hist_row, count);
	hist_cols[n++] = (struct vmlat_col)VMLAT_COL(struct hist_row, min_ns);
	for (i = 0; i < VMLAT_NR_QUANTILES; i++) {
		snprintf(hist_col_names[i], sizeof(hist_col_names[i]),
			 "%s_ns", vmlat_quantile_names[i]);
		hist_cols[n].name = hist_col_names[i];
		hist_cols[n++].off = offsetof(struct hist_row, q_ns[i]);
	}
	hist_cols[n++] = (struct vmlat_col)VMLAT_COL(struct hist_row, max_ns);
	hist_cols[n++] = (struct vmlat_col)VMLAT_COL(struct hist_row, sum_ns);
}

static void hist_row(const struct vmlat_hist_snap *h, struct hist_row *r)
{
	int i;

	r->count = h->count;
	r->min_ns = h->min_ns;
	for (i = 0; i < VMLAT_NR_QUANTILES; i++)
		r->q_ns[i] = vmlat_hist_snap_quantile(h, vmlat_quantile_ppm[i]);
	r->max_ns = h->max_ns;
	r->sum_ns = h->sum_ns;
}

/* A VM's or vCPU's nested statistics, and the [P1] heuristic's score. */
struct nested_row {
	struct vmlat_nested n;
	u64 heuristic_agree;	/* its verdicts that agreed with KVM */
	u64 heuristic_judged;	/* of how many */
};

static const struct vmlat_col nested_cols[] = {
	VMLAT_COL_IN(struct nested_row, n, l1_ns),
	VMLAT_COL_IN(struct nested_row, n, l2_ns),
	VMLAT_COL_IN(struct nested_row, n, l2_exit_l0_ns),
	VMLAT_COL_IN(struct nested_row, n, l2_exit_l1_ns),
	VMLAT_COL_IN(struct nested_row, n, l2_entries),
	VMLAT_COL_IN(struct nested_row, n, l1_to_l2),
	VMLAT_COL_IN(struct nested_row, n, l2_exits_l0),
	VMLAT_COL_IN(struct nested_row, n, l2_exits_l1),
	VMLAT_COL_IN(struct nested_row, n, l2_sync_calls),
	VMLAT_COL_IN(struct nested_row, n, l2_sync_ns),
	VMLAT_COL(struct nested_row, heuristic_agree),
	VMLAT_COL(struct nested_row, heuristic_judged),
};

static void nested_row(const struct vmlat_nested *n, struct nested_row *r)
{
	r->n = *n;
	r->heuristic_agree = vmlat_nested_heur_agree(n);
	r->heuristic_judged = vmlat_nested_heur_judged(n);
}

/* Time lost: off CPU though ready, and spent by the host on exits. */
struct steal_row {
	u64 observed_ns;
	u64 ready_ns;		/* type-1 steal: preempted + wait */
	u64 preempted_ns;
	u64 wait_ns;
	u64 handling_ns;	/* type-2 steal: kernel + user */
	u64 kernel_ns;
	u64 user_ns;
};

static const struct vmlat_col steal_cols[] = {
	VMLAT_COL(struct steal_row, observed_ns),
	VMLAT_COL(struct steal_row, ready_ns),
	VMLAT_COL(struct steal_row, preempted_ns),
	VMLAT_COL(struct steal_row, wait_ns),
	VMLAT_COL(struct steal_row, handling_ns),
	VMLAT_COL(struct steal_row, kernel_ns),
	VMLAT_COL(struct steal_row, user_ns),
};

static void steal_row(const struct vmlat_view_states *s, struct steal_row *r)
{
	r->observed_ns = s->observed_ns;
	r->preempted_ns = s->time_ns[VMLAT_PREEMPTED];
	r->wait_ns = s->time_ns[VMLAT_WAIT];
	r->ready_ns = r->preempted_ns + r->wait_ns;
	r->kernel_ns = s->time_ns[VMLAT_KERNEL];
	r->user_ns = s->time_ns[VMLAT_USER];
	r->handling_ns = r->kernel_ns + r->user_ns;
}

/* In the "sync" table ("-" while there is no mapping) and the JSON. */
static const struct vmlat_col sync_fit_cols[] = {
	VMLAT_COL_IN_S(struct vmlat_view_sync, map, drift_ppb),
	VMLAT_COL_IN_S(struct vmlat_view_sync, map, drift_min_ppb),
	VMLAT_COL_IN_S(struct vmlat_view_sync, map, drift_max_ppb),
	VMLAT_COL_S(struct vmlat_view_sync, offset_ns),
	VMLAT_COL(struct vmlat_view_sync, bound_ns),
};

/* The JSON only: the mapping's point, for tools/vmlat-synctrace. */
static const struct vmlat_col sync_map_cols[] = {
	VMLAT_COL_IN(struct vmlat_view_sync, map, at_guest_ns),
	VMLAT_COL_IN(struct vmlat_view_sync, map, host_ns),
	VMLAT_COL_IN(struct vmlat_view_sync, map, host_min_ns),
	VMLAT_COL_IN(struct vmlat_view_sync, map, host_max_ns),
};

static const struct vmlat_col sync_count_cols[] = {
	VMLAT_COL_IN(struct vmlat_view_sync, d, calls),
	VMLAT_COL_IN(struct vmlat_view_sync, d, user),
	VMLAT_COL_IN(struct vmlat_view_sync, d, malformed),
	VMLAT_COL_IN(struct vmlat_view_sync, d, replayed),
	VMLAT_COL_IN(struct vmlat_view_sync, d, unpaired),
	VMLAT_COL_IN(struct vmlat_view_sync, d, refused),
	VMLAT_COL_IN(struct vmlat_view_sync, d, limited),
	VMLAT_COL_IN(struct vmlat_view_sync, d, restarts),
	VMLAT_COL(struct vmlat_view_sync, exits),
	VMLAT_COL(struct vmlat_view_sync, exit_ns),
};

/* The guest's steal calls (guest_steal.c), in the same rows: steal_*. */
#define SYNC_STEAL_COL(member)						\
	{ .name = "steal_" #member,					\
	  .off = offsetof(struct vmlat_view_sync, steal.member) }
static const struct vmlat_col sync_steal_cols[] = {
	SYNC_STEAL_COL(calls),
	SYNC_STEAL_COL(user),
	SYNC_STEAL_COL(denied),
	SYNC_STEAL_COL(malformed),
	SYNC_STEAL_COL(limited),
	SYNC_STEAL_COL(taken),
};

/* Per vCPU in the JSON: events out of order, exits seen late. */
static const struct vmlat_col order_cols[] = {
	VMLAT_COL(struct vmlat_view_order, unexpected),
	VMLAT_COL(struct vmlat_view_order, late_exits),
	VMLAT_COL(struct vmlat_view_order, late_switched),
	VMLAT_COL(struct vmlat_view_order, late_ns),
};

struct preemptor_row {
	u64 stolen_ns;
	u64 slices;
};

static const struct vmlat_col preemptor_cols[] = {
	VMLAT_COL(struct preemptor_row, stolen_ns),
	VMLAT_COL(struct preemptor_row, slices),
};

/*
 * Who preempted, as "kind pid comm vm vcpu", the last two "- -" but for
 * a vCPU (preemptors, lock_holder).
 */
static void who_text(struct seq_file *m, u8 kind, pid_t pid,
		     const char *comm, pid_t vm_pid, int vcpu)
{
	seq_printf(m, "%s %d ", vmlat_by_kind_names[kind], pid);
	vmlat_seq_comm(m, comm);
	if (kind == VMLAT_BY_VM || kind == VMLAT_BY_SAME_VM)
		seq_printf(m, " %d %d", vm_pid, vcpu);
	else
		seq_puts(m, " - -");
}

/* A guest address space's row (guest_tasks, and the JSON). */
struct guest_task_row {
	u64 guest_ns;
	u64 exit_ns;
	u64 preempted_ns;
	u64 wait_ns;
	u64 stolen_ns;
	u64 observed_ns;
	u64 slices;
};

static const struct vmlat_col guest_task_cols[] = {
	VMLAT_COL(struct guest_task_row, guest_ns),
	VMLAT_COL(struct guest_task_row, exit_ns),
	VMLAT_COL(struct guest_task_row, preempted_ns),
	VMLAT_COL(struct guest_task_row, wait_ns),
	VMLAT_COL(struct guest_task_row, stolen_ns),
	VMLAT_COL(struct guest_task_row, observed_ns),
	VMLAT_COL(struct guest_task_row, slices),
};

/*
 * Its times: what ran (guest_ns: [P3]'s compensated run time), what was
 * stolen from it (type-2: exit handling, type-1: preempted and wait), and
 * both: the time the guest saw it on a CPU (observed_ns).
 */
static void guest_task_row(const struct vmlat_as_row *a,
			   struct guest_task_row *r)
{
	r->guest_ns = a->t.ns[VMLAT_AS_GUEST];
	r->exit_ns = a->t.ns[VMLAT_AS_EXIT];
	r->preempted_ns = a->t.ns[VMLAT_AS_PREEMPTED];
	r->wait_ns = a->t.ns[VMLAT_AS_WAIT];
	r->stolen_ns = r->exit_ns + r->preempted_ns + r->wait_ns;
	r->observed_ns = r->guest_ns + r->stolen_ns;
	r->slices = a->slices;
}

/*
 * An exit reason's statistics (exit_stats.h), in the exits table and the
 * JSON's "exits"; count first (the undecoded row has only that).
 */
static const struct vmlat_col exit_cols[] = {
	VMLAT_COL(struct vmlat_exit_row, count),
	VMLAT_COL(struct vmlat_exit_row, total_ns),
};

/* The same as JSON members, its opening brace printed. */
static void exit_slot_json(struct seq_file *m, int slot)
{
	seq_printf(m, "\"isa\":\"%s\",\"code\":%llu,\"name\":\"%s\"",
		   vmlat_exit_isa_name(vmlat_exit_slot_isa(slot)),
		   vmlat_exit_slot_code(slot), vmlat_exit_slot_name(slot));
}

#define COLS(c)	c, ARRAY_SIZE(c)

/* @r's used entries, most handling time first: their indexes. */
static unsigned int guest_task_reasons_rank(const struct vmlat_as_reasons *r,
					    u8 idx[VMLAT_AS_REASONS])
{
	unsigned int i, j, n = 0;

	for (i = 0; i < VMLAT_AS_REASONS; i++) {
		if (!r->slot[i])
			continue;
		for (j = n; j > 0 && r->ns[idx[j - 1]] < r->ns[i]; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
		n++;
	}
	return n;
}

/*
 * An address space's exit handling by reason, most first, then the
 * reasons that lost their entry: in text "NAME:count:ns,...,other:count:ns"
 * (or "-"), in JSON a list of objects (the caller adds the other).
 */
static void guest_task_reasons(struct seq_file *m,
			       const struct vmlat_as_reasons *r, bool json)
{
	u8 idx[VMLAT_AS_REASONS];
	unsigned int j, n = guest_task_reasons_rank(r, idx);
	int slot;

	if (!json && !n)
		seq_puts(m, " -");
	for (j = 0; j < n; j++) {
		slot = r->slot[idx[j]] - 1;
		if (json) {
			seq_printf(m, "%s{", j ? "," : "");
			exit_slot_json(m, slot);
			seq_printf(m, ",\"count\":%llu,\"ns\":%llu}",
				   r->count[idx[j]], r->ns[idx[j]]);
		} else {
			seq_printf(m, "%c%s:%llu:%llu", j ? ',' : ' ',
				   vmlat_exit_slot_name(slot),
				   r->count[idx[j]], r->ns[idx[j]]);
		}
	}
	if (!json && r->other_count)
		seq_printf(m, ",other:%llu:%llu", r->other_count, r->other_ns);
}

/* The same as JSON members: "exit_reasons" and "exit_reasons_other". */
static void guest_task_reasons_json(struct seq_file *m,
				    const struct vmlat_as_reasons *r)
{
	seq_puts(m, ",\"exit_reasons\":[");
	guest_task_reasons(m, r, true);
	seq_printf(m, "],\"exit_reasons_other\":{\"count\":%llu,\"ns\":%llu}",
		   r->other_count, r->other_ns);
}

/* ---- the work area of one read --------------------------------------- */

/*
 * Too large for the stack: allocated per read, with the one list of VMs
 * (and their vCPUs) the whole read shows.
 */
struct tables_buf {
	struct vmlat_view_list list;
	const struct vmlat_vm **vms;	/* list.vms */
	int nr_vms;			/* list.nr_vms */
	struct vmlat_view_vcpu vcpu;
	struct vmlat_hist_snap hist;
	struct vmlat_view_sync sync;
	struct vmlat_view_preemptor pre[VMLAT_TOPK_SLOTS];
	struct vmlat_view_stolen stolen;
	struct vmlat_view_guest_tasks gt;
	struct vmlat_view_irq irq;
};

static void tables_buf_free(struct tables_buf *b)
{
	vmlat_view_list_put(&b->list);
	kvfree(b);
}

/*
 * Some 22 KB: kvmalloc(), so that a read on a host whose memory is
 * fragmented takes pages where no order-3 block is free.
 */
static struct tables_buf *tables_buf(void)
{
	struct tables_buf *b = kvmalloc(sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	if (vmlat_view_list_get(&b->list)) {
		kvfree(b);
		return NULL;
	}
	b->vms = b->list.vms;
	b->nr_vms = b->list.nr_vms;
	return b;
}

/* ---- vcpus, vms, steal ------------------------------------------------ */

static int vcpus_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	u64 now = vmlat_now_ns();
	unsigned int i;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid vcpu tid state");
	vmlat_cols_header(m, COLS(state_cols));
	seq_putc(m, '\n');
	for (i = 0; i < vmlat_view_nr_vcpus(); i++) {
		if (!vmlat_view_vcpu(i, now, &b->vcpu))
			continue;
		seq_printf(m, "%d %d %d %s", b->vcpu.vm_pid, b->vcpu.idx,
			   b->vcpu.tid, b->vcpu.live ?
			   vmlat_state_names[b->vcpu.state] : "exited");
		vmlat_cols_text(m, COLS(state_cols), &b->vcpu.st);
		seq_putc(m, '\n');
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vcpus);

/*
 * The rows of VM @i of list @l, from @mark (the length of @m when they
 * began): dropped if its record was reused in place for another VM (at a
 * cap) since the list was made, as they would mix the two VMs or show
 * the new one without the vCPUs the list has. The VM they were of is
 * gone then. (Unless @m overflowed: seq_file makes the whole read again.)
 */
static void vm_rows_end(struct seq_file *m, size_t mark,
			const struct vmlat_view_list *l, unsigned int i)
{
	if (!vmlat_view_vm_same(l, i) && !seq_has_overflowed(m))
		m->count = mark;
}

static int vms_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	struct vmlat_view_dropped d;
	struct vmlat_view_states st;
	struct vmlat_view_vm v;
	u64 now = vmlat_now_ns();
	int i, n, nr;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid comm vcpus");
	vmlat_cols_header(m, COLS(state_cols));
	seq_puts(m, " vm_id tracked\n");
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		nr = vmlat_view_vm_states(&b->list, i, now, &st);
		seq_printf(m, "%d ", v.pid);
		vmlat_seq_comm(m, v.comm);
		seq_printf(m, " %d", nr);
		vmlat_cols_text(m, COLS(state_cols), &st);
		seq_printf(m, " %u %s\n", v.id, v.partly ? "partly" : "fully");
		vm_rows_end(m, mark, &b->list, i);
	}
	vmlat_view_dropped(&d);
	seq_printf(m, "# dropped: vms %llu vcpus %llu victims %llu\n",
		   d.vms, d.vcpus, d.victims);
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vms);

static int steal_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	struct vmlat_view_states st;
	struct vmlat_view_vm v;
	u64 now = vmlat_now_ns();
	struct steal_row r;
	int i, n;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid");
	vmlat_cols_header(m, COLS(steal_cols));
	seq_putc(m, '\n');
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		vmlat_view_vm_states(&b->list, i, now, &st);
		steal_row(&st, &r);
		seq_printf(m, "%d", v.pid);
		vmlat_cols_text(m, COLS(steal_cols), &r);
		seq_putc(m, '\n');
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(steal);

/* ---- guest address spaces -------------------------------------------- */

/* How the VM keys its guest's roots (aspace.h). */
static const char *guest_roots(const struct vmlat_view_guest_tasks *g)
{
	return g->whole ? "whole" : "folded";
}

/* The names line of a VM whose guest gave any. */
static void guest_task_names(struct seq_file *m, pid_t pid,
			     const struct vmlat_view_guest_tasks *g)
{
	const struct vmlat_as_names_stats *n = &g->names;

	if (!n->calls)
		return;
	seq_printf(m, "# vm_pid %d names %u calls %llu taken %llu limited %llu malformed %llu user %llu dropped %llu ended %llu\n",
		   pid, g->names_held, n->calls, n->taken, n->limited,
		   n->malformed, n->user, n->dropped, n->ended);
}

static int guest_tasks_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	struct vmlat_view_guest_tasks *g;
	struct guest_task_row r;
	struct vmlat_view_vm v;
	u64 now = vmlat_now_ns();
	unsigned int j;
	int i;

	if (!b)
		return -ENOMEM;
	g = &b->gt;
	seq_puts(m, "# vm_pid as pid comm");
	vmlat_cols_header(m, COLS(guest_task_cols));
	seq_puts(m, " exit_reasons\n");
	for (i = 0; i < b->nr_vms; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		vmlat_view_guest_tasks(&b->list, i, now, g);
		for (j = 0; j < g->nr; j++) {
			seq_printf(m, "%d 0x%llx ", v.pid, g->as[j].key);
			/*
			 * As its guest named it; else "kernel" if only the
			 * guest kernel was seen running in it.
			 */
			vmlat_seq_guest_process(m, g->as[j].tgid,
						g->as[j].comm,
						g->as[j].row.user ?
						"- -" : "- kernel");
			guest_task_row(&g->as[j].row, &r);
			vmlat_cols_text(m, COLS(guest_task_cols), &r);
			guest_task_reasons(m, &g->as[j].row.reasons, false);
			seq_putc(m, '\n');
		}
		if (g->evicted || g->other.slices) {
			seq_printf(m, "%d other - -", v.pid);
			guest_task_row(&g->other, &r);
			vmlat_cols_text(m, COLS(guest_task_cols), &r);
			guest_task_reasons(m, &g->other.reasons, false);
			seq_printf(m, "\n# vm_pid %d evicted %llu\n", v.pid,
				   g->evicted);
		}
		if (g->nr || g->evicted)
			seq_printf(m, "# vm_pid %d roots %s\n", v.pid,
				   guest_roots(g));
		guest_task_names(m, v.pid, g);
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(guest_tasks);

/* ---- exits and histograms --------------------------------------------- */

/* "isa code name" of an exit reason slot, in a table. */
static void exit_slot_text(struct seq_file *m, int slot)
{
	seq_printf(m, " %s 0x%llx %s",
		   vmlat_exit_isa_name(vmlat_exit_slot_isa(slot)),
		   vmlat_exit_slot_code(slot), vmlat_exit_slot_name(slot));
}

static int exits_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	struct vmlat_exit_row row;
	struct vmlat_view_vm v;
	int i, n, slot;
	unsigned int c;
	u64 count;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid isa code name");
	vmlat_cols_header(m, COLS(exit_cols));
	seq_puts(m, " min_ns p50_ns p99_ns max_ns\n");
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
			vmlat_view_exit(b->vms[i], slot, &row);
			if (!row.count)
				continue;
			seq_printf(m, "%d", v.pid);
			exit_slot_text(m, slot);
			vmlat_cols_text(m, COLS(exit_cols), &row);
			if (vmlat_view_reason_hist(b->vms[i], slot, &b->hist))
				seq_printf(m, " %llu %llu %llu %llu\n",
					   b->hist.min_ns,
					   vmlat_hist_snap_quantile(&b->hist,
								    VMLAT_PPM_P50),
					   vmlat_hist_snap_quantile(&b->hist,
								    VMLAT_PPM_P99),
					   b->hist.max_ns);
			else
				seq_puts(m, " - - - -\n");
		}
		count = vmlat_view_exits_undecoded(b->vms[i]);
		if (count) {
			seq_printf(m, "%d - - undecoded %llu", v.pid, count);
			for (c = 1; c < ARRAY_SIZE(exit_cols); c++)
				seq_puts(m, " -");
			seq_puts(m, " - - - -\n");
		}
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(exits);

static void hist_text(struct seq_file *m, pid_t pid, const char *kind,
		      const char *reason, const struct vmlat_hist_snap *h)
{
	struct hist_row r;

	hist_row(h, &r);
	seq_printf(m, "%d %s%s%s", pid, kind, reason ? ":" : "",
		   reason ?: "");
	vmlat_cols_text(m, COLS(hist_cols), &r);
	seq_putc(m, '\n');
}

static int histograms_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	const struct vmlat_vm *vm;
	struct vmlat_view_vm v;
	int i, k, n, slot;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid kind");
	vmlat_cols_header(m, COLS(hist_cols));
	seq_putc(m, '\n');
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		vm = b->vms[i];
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		for (k = 0; k < VMLAT_NR_HIST_KINDS; k++) {
			vmlat_view_hist(vm, k, &b->hist);
			hist_text(m, v.pid, vmlat_hist_kind_names[k], NULL,
				  &b->hist);
		}
		for (k = 0; k < VMLAT_NR_NESTED_HISTS; k++) {
			vmlat_view_nested_hist(vm, k, &b->hist);
			hist_text(m, v.pid, vmlat_nested_hist_names[k], NULL,
				  &b->hist);
		}
		for (k = 0; k < VMLAT_NR_IRQ_SOURCES; k++) {
			vmlat_view_irq_hist(vm, k, &b->hist);
			hist_text(m, v.pid, vmlat_irq_hist_names[k], NULL,
				  &b->hist);
		}
		for (k = 0; k < VMLAT_NR_EXPIRE_HISTS; k++) {
			vmlat_view_expire_hist(vm, k, &b->hist);
			hist_text(m, v.pid, vmlat_expire_hist_names[k], NULL,
				  &b->hist);
		}
		for (k = 0; k < VMLAT_EXIT_REASON_HISTS; k++) {
			slot = vmlat_view_reason_hist_slot(vm, k);
			if (slot >= 0 &&
			    vmlat_view_reason_hist(vm, slot, &b->hist))
				hist_text(m, v.pid, "exit",
					  vmlat_exit_slot_name(slot), &b->hist);
		}
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(histograms);

/* ---- nested (L2) ------------------------------------------------------ */

/* @part per mille of @whole, as "12.3"; "-" for none of none. */
static void print_permille(struct seq_file *m, u64 part, u64 whole)
{
	u64 pm;

	if (!whole) {
		seq_puts(m, "-");
		return;
	}
	pm = div64_u64(part * 1000, whole);
	seq_printf(m, "%llu.%llu", div_u64(pm, 10), pm % 10);
}

static void nested_text(struct seq_file *m, const struct nested_row *r)
{
	vmlat_cols_text(m, COLS(nested_cols), r);
	seq_putc(m, ' ');
	print_permille(m, r->heuristic_agree, r->heuristic_judged);
	seq_putc(m, '\n');
}

static int nested_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	struct nested_row r, sum;
	struct vmlat_view_vm v;
	u64 now = vmlat_now_ns();
	unsigned int j;
	int i, n, nr;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid vcpu tid level");
	vmlat_cols_header(m, COLS(nested_cols));
	seq_puts(m, " heuristic_agree_pct\n");
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		memset(&sum, 0, sizeof(sum));
		nr = 0;
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		vmlat_view_for_each_vcpu(&b->list, i, j) {
			if (!vmlat_view_vcpu(b->list.vcpus[j], now, &b->vcpu) ||
			    b->vcpu.vm != b->vms[i] || !b->vcpu.nested.active)
				continue;
			seq_printf(m, "%d %d %d %s", b->vcpu.vm_pid,
				   b->vcpu.idx, b->vcpu.tid,
				   !b->vcpu.live ? "exited" :
				   b->vcpu.nested.level == VMLAT_LEVEL_L2 ?
				   "l2" : "l1");
			nested_row(&b->vcpu.nested, &r);
			nested_text(m, &r);
			vmlat_cols_add(COLS(nested_cols), &sum, &r);
			nr++;
		}
		if (nr) {
			seq_printf(m, "%d all - -", v.pid);
			nested_text(m, &sum);
		}
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nested);

static int nested_exits_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	struct vmlat_view_vm v;
	int i, n, slot;
	u64 l0, l1;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid isa code name handled_by_l0 reflected_to_l1\n");
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		/* The reasons, then the undecoded ones. */
		for (slot = 0; slot <= VMLAT_EXIT_NR_SLOTS; slot++) {
			int s = slot < VMLAT_EXIT_NR_SLOTS ? slot :
				VMLAT_SLOT_UNDECODED;

			l0 = vmlat_view_nested_exits(b->vms[i],
						     VMLAT_NESTED_BY_L0, s);
			l1 = vmlat_view_nested_exits(b->vms[i],
						     VMLAT_NESTED_BY_L1, s);
			if (!l0 && !l1)
				continue;
			seq_printf(m, "%d", v.pid);
			if (s < 0)
				seq_puts(m, " - - undecoded");
			else
				exit_slot_text(m, s);
			seq_printf(m, " %llu %llu\n", l0, l1);
		}
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nested_exits);

/* ---- interrupt delivery ---------------------------------------------- */

/* A VM's interrupts of one source and target state (struct vmlat_view_irq). */
static const struct vmlat_col irq_cols[] = {
	VMLAT_COL(struct vmlat_view_irq_cell, count),
	VMLAT_COL(struct vmlat_view_irq_cell, sum_ns),
	VMLAT_COL(struct vmlat_view_irq_cell, max_ns),
	VMLAT_COL(struct vmlat_view_irq_cell, wait_ns),
	VMLAT_COL(struct vmlat_view_irq_cell, lost),
	VMLAT_COL(struct vmlat_view_irq_cell, coalesced),
};

static bool irq_cell_used(const struct vmlat_view_irq_cell *c)
{
	return c->count || c->lost || c->coalesced;
}

static int irq_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	const struct vmlat_view_irq_cell *c;
	struct vmlat_view_vm v;
	int i, n, src, at;
	size_t mark;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid source at");
	vmlat_cols_header(m, COLS(irq_cols));
	seq_putc(m, '\n');
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		vmlat_view_irq(b->vms[i], &b->irq);
		for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
			for (at = 0; at < VMLAT_NR_IRQ_ATS; at++) {
				c = &b->irq.cell[src][at];
				if (!irq_cell_used(c))
					continue;
				seq_printf(m, "%d %s %s", v.pid,
					   vmlat_irq_src_names[src],
					   vmlat_irq_at_names[at]);
				vmlat_cols_text(m, COLS(irq_cols), c);
				seq_putc(m, '\n');
			}
		}
		vm_rows_end(m, mark, &b->list, i);
	}
	seq_printf(m, "# unattributed: %llu\n", vmlat_view_irq_unattributed());
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(irq);

/* ---- halt-polling ------------------------------------------------------ */

/* A vCPU's halts (struct vmlat_halt_stats). */
static const struct vmlat_col halt_cols[] = {
	VMLAT_COL(struct vmlat_halt_stats, halts),
	VMLAT_COL(struct vmlat_halt_stats, polled),
	VMLAT_COL(struct vmlat_halt_stats, hits),
	VMLAT_COL(struct vmlat_halt_stats, hit_ns),
	VMLAT_COL(struct vmlat_halt_stats, miss_ns),
	VMLAT_COL(struct vmlat_halt_stats, slept),
	VMLAT_COL(struct vmlat_halt_stats, slept_ns),
	VMLAT_COL(struct vmlat_halt_stats, woken),
	VMLAT_COL(struct vmlat_halt_stats, wake_ns),
	VMLAT_COL(struct vmlat_halt_stats, invalid),
	VMLAT_COL(struct vmlat_halt_stats, grows),
	VMLAT_COL(struct vmlat_halt_stats, shrinks),
	VMLAT_COL(struct vmlat_halt_stats, unseen),
};

/* A row per vCPU that halted. */
static int halt_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	u64 now = vmlat_now_ns();
	unsigned int i;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid vcpu tid");
	vmlat_cols_header(m, COLS(halt_cols));
	seq_putc(m, '\n');
	for (i = 0; i < vmlat_view_nr_vcpus(); i++) {
		if (!vmlat_view_vcpu(i, now, &b->vcpu) || !b->vcpu.halt.halts)
			continue;
		seq_printf(m, "%d %d %d", b->vcpu.vm_pid, b->vcpu.idx,
			   b->vcpu.tid);
		vmlat_cols_text(m, COLS(halt_cols), &b->vcpu.halt);
		seq_putc(m, '\n');
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(halt);

/* ---- lock-holder preemption ------------------------------------------- */

/* A vCPU's suspected lock-holder preemptions (struct vmlat_lhp). */
static const struct vmlat_col lhp_cols[] = {
	VMLAT_COL(struct vmlat_lhp, count),
	VMLAT_COL(struct vmlat_lhp, ns),
	VMLAT_COL(struct vmlat_lhp, max_ns),
	VMLAT_COL(struct vmlat_lhp, spins),
};

/*
 * A row per vCPU preempted while another vCPU of its VM spun (lhp.c),
 * with who held its CPU the longest in the longest such preemption.
 */
static int lock_holder_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	u64 now = vmlat_now_ns();
	const struct vmlat_by *by;
	unsigned int i;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid vcpu tid");
	vmlat_cols_header(m, COLS(lhp_cols));
	seq_puts(m, " max_by_kind max_by_pid max_by_comm max_by_vm max_by_vcpu\n");
	for (i = 0; i < vmlat_view_nr_vcpus(); i++) {
		if (!vmlat_view_vcpu(i, now, &b->vcpu) || !b->vcpu.lhp.count)
			continue;
		by = &b->vcpu.lhp.max_by;
		seq_printf(m, "%d %d %d", b->vcpu.vm_pid, b->vcpu.idx,
			   b->vcpu.tid);
		vmlat_cols_text(m, COLS(lhp_cols), &b->vcpu.lhp);
		seq_putc(m, ' ');
		who_text(m, by->kind, by->pid, by->comm, by->vm_pid, by->vcpu);
		seq_putc(m, '\n');
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lock_holder);

/* ---- clock sync ------------------------------------------------------- */

/*
 * How long ago, in ms, @s's last exchange was taken, at @mono (from
 * ktime_get_mono_fast_ns(), the clock of the exchanges' host times; never
 * vmlat's, which drifts from it by NTP's correction): 0 for one taken
 * after @mono was read.
 */
static u64 sync_age_ms(const struct vmlat_view_sync *s, u64 mono)
{
	return mono > s->d.last_ns ? div_u64(mono - s->d.last_ns,
					     NSEC_PER_MSEC) : 0;
}

static int sync_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	struct vmlat_view_sync *s;
	struct vmlat_view_vm v;
	/* The exchanges' host times are CLOCK_MONOTONIC's: their age too. */
	u64 now = ktime_get_mono_fast_ns();
	unsigned int k;
	int i, n;

	if (!b)
		return -ENOMEM;
	s = &b->sync;
	seq_puts(m, "# vm_pid state exchanges");
	vmlat_cols_header(m, COLS(sync_fit_cols));
	seq_puts(m, " age_ms");
	vmlat_cols_header(m, COLS(sync_count_cols));
	vmlat_cols_header(m, COLS(sync_steal_cols));
	seq_putc(m, '\n');
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		if (!vmlat_view_sync(b->vms[i], s))
			continue;
		seq_printf(m, "%d %s %llu", v.pid,
			   vmlat_sync_state_names[s->state], s->d.taken);
		if (s->state == VMLAT_SYNC_OK)
			vmlat_cols_text(m, COLS(sync_fit_cols), s);
		else
			for (k = 0; k < ARRAY_SIZE(sync_fit_cols); k++)
				seq_puts(m, " -");
		if (s->d.last_ns)
			seq_printf(m, " %llu", sync_age_ms(s, now));
		else
			seq_puts(m, " -");
		vmlat_cols_text(m, COLS(sync_count_cols), s);
		vmlat_cols_text(m, COLS(sync_steal_cols), s);
		seq_putc(m, '\n');
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sync);

/* ---- who preempted whom ----------------------------------------------- */

static int preemptors_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	size_t mark;
	const struct vmlat_view_preemptor *p;
	struct preemptor_row r;
	struct vmlat_view_vm v;
	unsigned int j, np;
	int i, n;
	u64 other;

	if (!b)
		return -ENOMEM;
	seq_puts(m, "# vm_pid rank kind pid comm vm vcpu");
	vmlat_cols_header(m, COLS(preemptor_cols));
	seq_puts(m, " cpu\n");
	n = b->nr_vms;
	for (i = 0; i < n; i++) {
		mark = m->count;
		vmlat_view_vm(&b->list, i, &v);
		np = vmlat_view_preemptors(b->vms[i], b->pre, &other);
		for (j = 0; j < np; j++) {
			p = &b->pre[j];
			seq_printf(m, "%d %u ", v.pid, j + 1);
			who_text(m, p->who.kind, p->who.pid, p->who.comm,
				 p->who.vm_pid, p->who.vcpu);
			r.stolen_ns = p->stolen_ns;
			r.slices = p->slices;
			vmlat_cols_text(m, COLS(preemptor_cols), &r);
			if (p->who.kind == VMLAT_BY_IDLE)
				seq_printf(m, " %d\n", p->who.cpu);
			else
				seq_puts(m, " -\n");
		}
		if (other)
			seq_printf(m, "%d - other - - - - %llu - -\n", v.pid,
				   other);
		vm_rows_end(m, mark, &b->list, i);
	}
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(preemptors);

static int matrix_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	struct vmlat_view_vm v;
	int i, j, n;

	if (!b)
		return -ENOMEM;
	/* One list of VMs for the header and every row, named by id. */
	n = b->nr_vms;
	seq_puts(m, "# preemptor");
	for (j = 0; j < n; j++) {
		vmlat_view_vm(&b->list, j, &v);
		seq_printf(m, " %u", v.id);
	}
	seq_puts(m, "\nhost");
	for (j = 0; j < n; j++)
		seq_printf(m, " %llu", vmlat_view_stolen_by(b->vms[j], NULL));
	seq_putc(m, '\n');
	for (i = 0; i < n; i++) {
		vmlat_view_vm(&b->list, i, &v);
		seq_printf(m, "vm:%u", v.id);
		for (j = 0; j < n; j++)
			seq_printf(m, " %llu",
				   vmlat_view_stolen_by(b->vms[j], b->vms[i]));
		seq_putc(m, '\n');
	}
	/* VMs past a victim's table of the ones that took the most. */
	seq_puts(m, "other");
	for (j = 0; j < n; j++)
		seq_printf(m, " %llu", vmlat_view_stolen_by_other(b->vms[j]));
	seq_putc(m, '\n');
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(matrix);

/* ---- json ------------------------------------------------------------ */

/* ,"name":null for each of @cols. */
static void json_nulls(struct seq_file *m, const struct vmlat_col *cols,
		       unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		seq_printf(m, ",\"%s\":null", cols[i].name);
}

static void json_hist(struct seq_file *m, const struct vmlat_hist_snap *h)
{
	struct hist_row r;
	bool first = true;
	int i;

	hist_row(h, &r);
	if (!r.count) {
		/* No sample: no minimum, quantile or maximum (null). */
		seq_printf(m, "{\"%s\":0", hist_cols[0].name);
		json_nulls(m, hist_cols + 1, ARRAY_SIZE(hist_cols) - 2);
		seq_printf(m, ",\"%s\":0,\"buckets\":[]}",
			   hist_cols[ARRAY_SIZE(hist_cols) - 1].name);
		return;
	}
	vmlat_cols_json_open(m, COLS(hist_cols), &r);
	seq_puts(m, ",\"buckets\":[");
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		seq_printf(m, "%s[%llu,%llu,%llu]", first ? "" : ",",
			   vmlat_hist_bucket_lo(i), vmlat_hist_bucket_hi(i),
			   h->buckets[i]);
		first = false;
	}
	seq_puts(m, "]}");
}

/* {"...":n,...} of @cols. */
static void json_obj(struct seq_file *m, const struct vmlat_col *cols,
		     unsigned int n, const void *row)
{
	vmlat_cols_json_open(m, cols, n, row);
	seq_putc(m, '}');
}

/* ,"@name":@v, or null if @none. */
static void json_int_or_null(struct seq_file *m, const char *name, s64 v,
			     bool none)
{
	if (none)
		seq_printf(m, ",\"%s\":null", name);
	else
		seq_printf(m, ",\"%s\":%lld", name, v);
}

/*
 * Who preempted, as {"kind":..,"pid":..,"comm":..,"vm":..,"vcpu":..,
 * left open: an idle CPU (or nobody) is no task, its pid and comm null
 * (preemptors, lock_holder).
 */
static void json_who_open(struct seq_file *m, u8 kind, pid_t pid,
			  const char *comm, pid_t vm_pid, int vcpu)
{
	bool task = kind != VMLAT_BY_IDLE && kind != VMLAT_BY_NONE;

	seq_printf(m, "{\"kind\":\"%s\"", vmlat_by_kind_names[kind]);
	json_int_or_null(m, "pid", pid, !task);
	seq_puts(m, ",\"comm\":");
	if (task)
		vmlat_seq_json_str(m, comm);
	else
		seq_puts(m, "null");
	json_int_or_null(m, "vm", vm_pid, !vm_pid);
	json_int_or_null(m, "vcpu", vcpu, vcpu < 0);
}

/*
 * @l as "lock_holder":{count..., "max_by":{kind, pid, comm, vm, vcpu}};
 * max_by null when nothing was suspected.
 */
static void json_lhp(struct seq_file *m, const struct vmlat_lhp *l)
{
	const struct vmlat_by *by = &l->max_by;

	seq_puts(m, ",\"lock_holder\":");
	vmlat_cols_json_open(m, COLS(lhp_cols), l);
	seq_puts(m, ",\"max_by\":");
	if (!l->count) {
		seq_puts(m, "null}");
		return;
	}
	json_who_open(m, by->kind, by->pid, by->comm, by->vm_pid, by->vcpu);
	seq_puts(m, "}}");
}

/* The nested part of VM @n of @b's list. */
static void json_nested(struct seq_file *m, unsigned int n, u64 now,
			struct tables_buf *b)
{
	const struct vmlat_vm *vm = b->vms[n];
	struct nested_row r, sum = {};
	bool first = true;
	unsigned int k;
	int slot;
	u64 l0, l1;

	seq_puts(m, ",\"nested\":{\"vcpus\":[");
	vmlat_view_for_each_vcpu(&b->list, n, k) {
		if (!vmlat_view_vcpu(b->list.vcpus[k], now, &b->vcpu) ||
		    b->vcpu.vm != vm || !b->vcpu.nested.active)
			continue;
		seq_printf(m, "%s{\"vcpu\":%d,\"tid\":%d,\"stats\":",
			   first ? "" : ",", b->vcpu.idx, b->vcpu.tid);
		nested_row(&b->vcpu.nested, &r);
		json_obj(m, COLS(nested_cols), &r);
		seq_putc(m, '}');
		vmlat_cols_add(COLS(nested_cols), &sum, &r);
		first = false;
	}
	seq_puts(m, "],\"totals\":");
	json_obj(m, COLS(nested_cols), &sum);
	seq_puts(m, ",\"exits\":[");
	for (first = true, slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		l0 = vmlat_view_nested_exits(vm, VMLAT_NESTED_BY_L0, slot);
		l1 = vmlat_view_nested_exits(vm, VMLAT_NESTED_BY_L1, slot);
		if (!l0 && !l1)
			continue;
		seq_puts(m, first ? "{" : ",{");
		exit_slot_json(m, slot);
		seq_printf(m, ",\"handled_by_l0\":%llu,\"reflected_to_l1\":%llu}",
			   l0, l1);
		first = false;
	}
	seq_printf(m, "],\"undecoded\":{\"handled_by_l0\":%llu,\"reflected_to_l1\":%llu}}",
		   vmlat_view_nested_exits(vm, VMLAT_NESTED_BY_L0,
					   VMLAT_SLOT_UNDECODED),
		   vmlat_view_nested_exits(vm, VMLAT_NESTED_BY_L1,
					   VMLAT_SLOT_UNDECODED));
}

/* The "sync" member of @vm: null if its guest never called. */
/* @vm's interrupt deliveries: its used cells, and its unmatched count. */
static void json_irq(struct seq_file *m, const struct vmlat_vm *vm,
		     struct vmlat_view_irq *q)
{
	const struct vmlat_view_irq_cell *c;
	bool first = true;
	int src, at;

	vmlat_view_irq(vm, q);
	seq_puts(m, ",\"irq\":[");
	for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
		for (at = 0; at < VMLAT_NR_IRQ_ATS; at++) {
			c = &q->cell[src][at];
			if (!irq_cell_used(c))
				continue;
			seq_printf(m, "%s{\"source\":\"%s\",\"at\":\"%s\"",
				   first ? "" : ",", vmlat_irq_src_names[src],
				   vmlat_irq_at_names[at]);
			vmlat_cols_json(m, COLS(irq_cols), c);
			seq_putc(m, '}');
			first = false;
		}
	}
	seq_printf(m, "],\"irq_unmatched\":%llu", q->unmatched);
}

static void json_sync(struct seq_file *m, const struct vmlat_vm *vm,
		      struct vmlat_view_sync *s)
{
	if (!vmlat_view_sync(vm, s)) {
		seq_puts(m, ",\"sync\":null");
		return;
	}
	seq_printf(m, ",\"sync\":{\"state\":\"%s\",\"exchanges\":%llu",
		   vmlat_sync_state_names[s->state], s->d.taken);
	if (s->state == VMLAT_SYNC_OK) {
		vmlat_cols_json(m, COLS(sync_fit_cols), s);
		vmlat_cols_json(m, COLS(sync_map_cols), s);
	} else {
		/* No mapping: its members are there, null. */
		json_nulls(m, COLS(sync_fit_cols));
		json_nulls(m, COLS(sync_map_cols));
	}
	seq_printf(m, ",\"last_ns\":%llu,\"age_ms\":%llu", s->d.last_ns,
		   sync_age_ms(s, ktime_get_mono_fast_ns()));
	vmlat_cols_json(m, COLS(sync_count_cols), s);
	vmlat_cols_json(m, COLS(sync_steal_cols), s);
	seq_putc(m, '}');
}

static void json_preemptors(struct seq_file *m, const struct vmlat_vm *vm,
			    struct tables_buf *b)
{
	const struct vmlat_view_preemptor *p;
	struct vmlat_view_stolen *st = &b->stolen;
	struct preemptor_row r;
	unsigned int i, np;
	u64 other;

	seq_puts(m, ",\"preemptors\":[");
	np = vmlat_view_preemptors(vm, b->pre, &other);
	for (i = 0; i < np; i++) {
		p = &b->pre[i];
		if (i)
			seq_putc(m, ',');
		json_who_open(m, p->who.kind, p->who.pid, p->who.comm,
			      p->who.vm_pid, p->who.vcpu);
		json_int_or_null(m, "cpu", p->who.cpu, p->who.cpu < 0);
		r.stolen_ns = p->stolen_ns;
		r.slices = p->slices;
		vmlat_cols_json(m, COLS(preemptor_cols), &r);
		seq_putc(m, '}');
	}
	/* Only the VMs that took time: not a column per VM of the host. */
	vmlat_view_stolen(vm, st);
	seq_printf(m, "],\"preemptors_other_ns\":%llu,\"stolen_by\":{\"host_ns\":%llu,\"vms\":[",
		   other, st->host_ns);
	for (i = 0; i < st->nr; i++)
		seq_printf(m, "%s{\"id\":%u,\"stolen_ns\":%llu}", i ? "," : "",
			   st->by[i].id, st->by[i].ns);
	seq_printf(m, "],\"other_ns\":%llu}", st->other_ns);
}

static void json_guest_tasks(struct seq_file *m, unsigned int n, u64 now,
			     struct tables_buf *b)
{
	struct vmlat_view_guest_tasks *g = &b->gt;
	struct guest_task_row r;
	unsigned int j;

	vmlat_view_guest_tasks(&b->list, n, now, g);
	seq_puts(m, ",\"guest_tasks\":[");
	for (j = 0; j < g->nr; j++) {
		seq_printf(m, "%s{\"as\":%llu,\"user\":%s", j ? "," : "",
			   g->as[j].key, g->as[j].row.user ? "true" : "false");
		/* null: the guest named no process for it. */
		if (g->as[j].tgid) {
			seq_printf(m, ",\"pid\":%u,\"comm\":", g->as[j].tgid);
			vmlat_seq_json_str(m, g->as[j].comm);
		} else {
			seq_puts(m, ",\"pid\":null,\"comm\":null");
		}
		guest_task_row(&g->as[j].row, &r);
		vmlat_cols_json(m, COLS(guest_task_cols), &r);
		guest_task_reasons_json(m, &g->as[j].row.reasons);
		seq_putc(m, '}');
	}
	guest_task_row(&g->other, &r);
	seq_puts(m, "],\"guest_tasks_other\":");
	vmlat_cols_json_open(m, COLS(guest_task_cols), &r);
	guest_task_reasons_json(m, &g->other.reasons);
	seq_putc(m, '}');
	seq_printf(m, ",\"guest_tasks_evicted\":%llu,\"guest_roots\":\"%s\"",
		   g->evicted, guest_roots(g));
	seq_printf(m, ",\"guest_names\":{\"held\":%u,\"calls\":%llu,\"taken\":%llu,\"limited\":%llu,\"malformed\":%llu,\"user\":%llu,\"dropped\":%llu,\"ended\":%llu}",
		   g->names_held, g->names.calls, g->names.taken,
		   g->names.limited, g->names.malformed, g->names.user,
		   g->names.dropped, g->names.ended);
}

/*
 * VM @n of @b's list, after a comma if @comma. Return: whether it was
 * written (not if its record was reused meanwhile: vm_rows_end()).
 */
static bool json_vm(struct seq_file *m, unsigned int n, u64 now,
		    struct tables_buf *b, bool comma)
{
	const struct vmlat_vm *vm = b->vms[n];
	struct vmlat_halt_stats halt = {};
	struct vmlat_lhp lhp = {};
	struct vmlat_view_states st;
	struct vmlat_exit_row exit;
	size_t mark = m->count;
	struct vmlat_view_vm v;
	struct steal_row sr;
	unsigned int i, k;
	bool first;
	int slot;

	vmlat_view_vm(&b->list, n, &v);
	vmlat_view_vm_states(&b->list, n, now, &st);
	if (comma)
		seq_putc(m, ',');
	seq_printf(m, "{\"id\":%u,\"pid\":%d,\"comm\":", v.id, v.pid);
	vmlat_seq_json_str(m, v.comm);
	seq_printf(m, ",\"exited\":%s", v.exited ? "true" : "false");
	seq_printf(m, ",\"partly_tracked\":%s", v.partly ? "true" : "false");
	vmlat_cols_json(m, COLS(state_cols), &st);

	seq_puts(m, ",\"vcpus\":[");
	first = true;
	vmlat_view_for_each_vcpu(&b->list, n, k) {
		if (!vmlat_view_vcpu(b->list.vcpus[k], now, &b->vcpu) ||
		    b->vcpu.vm != vm)
			continue;
		seq_printf(m, "%s{\"vcpu\":%d,\"tid\":%d,\"state\":\"%s\"",
			   first ? "" : ",", b->vcpu.idx, b->vcpu.tid,
			   b->vcpu.live ? vmlat_state_names[b->vcpu.state] :
			   "exited");
		vmlat_cols_json(m, COLS(state_cols), &b->vcpu.st);
		vmlat_cols_json(m, COLS(order_cols), &b->vcpu.order);
		seq_puts(m, ",\"halt\":");
		json_obj(m, COLS(halt_cols), &b->vcpu.halt);
		json_lhp(m, &b->vcpu.lhp);
		seq_putc(m, '}');
		vmlat_halt_add(&halt, &b->vcpu.halt);
		vmlat_lhp_add(&lhp, &b->vcpu.lhp);
		first = false;
	}

	seq_puts(m, "],\"exits\":[");
	for (first = true, slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		vmlat_view_exit(vm, slot, &exit);
		if (!exit.count)
			continue;
		seq_puts(m, first ? "{" : ",{");
		exit_slot_json(m, slot);
		vmlat_cols_json(m, COLS(exit_cols), &exit);
		if (vmlat_view_reason_hist(vm, slot, &b->hist)) {
			seq_puts(m, ",\"histogram\":");
			json_hist(m, &b->hist);
		}
		seq_putc(m, '}');
		first = false;
	}
	seq_printf(m, "],\"exits_undecoded\":%llu,\"histograms\":{",
		   vmlat_view_exits_undecoded(vm));
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++) {
		seq_printf(m, "%s\"%s\":", i ? "," : "",
			   vmlat_hist_kind_names[i]);
		vmlat_view_hist(vm, i, &b->hist);
		json_hist(m, &b->hist);
	}
	for (i = 0; i < VMLAT_NR_NESTED_HISTS; i++) {
		seq_printf(m, ",\"%s\":", vmlat_nested_hist_names[i]);
		vmlat_view_nested_hist(vm, i, &b->hist);
		json_hist(m, &b->hist);
	}
	for (i = 0; i < VMLAT_NR_IRQ_SOURCES; i++) {
		seq_printf(m, ",\"%s\":", vmlat_irq_hist_names[i]);
		vmlat_view_irq_hist(vm, i, &b->hist);
		json_hist(m, &b->hist);
	}
	for (i = 0; i < VMLAT_NR_EXPIRE_HISTS; i++) {
		seq_printf(m, ",\"%s\":", vmlat_expire_hist_names[i]);
		vmlat_view_expire_hist(vm, i, &b->hist);
		json_hist(m, &b->hist);
	}
	seq_putc(m, '}');
	seq_puts(m, ",\"halt\":");
	json_obj(m, COLS(halt_cols), &halt);
	json_lhp(m, &lhp);
	json_irq(m, vm, &b->irq);
	json_nested(m, n, now, b);
	json_sync(m, vm, &b->sync);
	json_preemptors(m, vm, b);
	json_guest_tasks(m, n, now, b);
	/* The steal table's columns but observed_ns, which is above. */
	steal_row(&st, &sr);
	seq_puts(m, ",\"steal\":");
	json_obj(m, steal_cols + 1, ARRAY_SIZE(steal_cols) - 1, &sr);
	seq_putc(m, '}');
	vm_rows_end(m, mark, &b->list, n);
	return m->count != mark;
}

static int json_show(struct seq_file *m, void *unused)
{
	struct tables_buf *b = tables_buf();
	struct vmlat_view_dropped d;
	u64 now = vmlat_now_ns();
	bool comma = false;
	int i;

	if (!b)
		return -ENOMEM;
	seq_printf(m, "{\"schema\":%d,\"version\":\"%s\",\"now_ns\":%llu,\"vms\":[",
		   VMLAT_JSON_SCHEMA, VMLAT_VERSION, now);
	for (i = 0; i < b->nr_vms; i++)
		comma |= json_vm(m, i, now, b, comma);
	vmlat_view_dropped(&d);
	seq_printf(m, "],\"dropped\":{\"vms\":%llu,\"vcpus\":%llu,\"victims\":%llu},\"irq_unattributed\":%llu}\n",
		   d.vms, d.vcpus, d.victims, vmlat_view_irq_unattributed());
	tables_buf_free(b);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(json);

/**
 * vmlat_debugfs_tables_create() - create the analysis files in @dir
 * @dir:	/sys/kernel/debug/vmlat
 */
void vmlat_debugfs_tables_create(struct dentry *dir)
{
	cols_init();
	debugfs_create_file("vms", 0444, dir, NULL, &vms_fops);
	debugfs_create_file("vcpus", 0444, dir, NULL, &vcpus_fops);
	debugfs_create_file("exits", 0444, dir, NULL, &exits_fops);
	debugfs_create_file("histograms", 0444, dir, NULL, &histograms_fops);
	debugfs_create_file("preemptors", 0444, dir, NULL, &preemptors_fops);
	debugfs_create_file("matrix", 0444, dir, NULL, &matrix_fops);
	debugfs_create_file("guest_tasks", 0444, dir, NULL,
			    &guest_tasks_fops);
	debugfs_create_file("steal", 0444, dir, NULL, &steal_fops);
	debugfs_create_file("nested", 0444, dir, NULL, &nested_fops);
	debugfs_create_file("nested_exits", 0444, dir, NULL,
			    &nested_exits_fops);
	debugfs_create_file("sync", 0444, dir, NULL, &sync_fops);
	debugfs_create_file("irq", 0444, dir, NULL, &irq_fops);
	debugfs_create_file("halt", 0444, dir, NULL, &halt_fops);
	debugfs_create_file("lock_holder", 0444, dir, NULL, &lock_holder_fops);
	debugfs_create_file("json", 0444, dir, NULL, &json_fops);
}

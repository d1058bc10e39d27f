// SPDX-License-Identifier: GPL-2.0
/*
 * The read API (view.h): consistent copies of the records for debugfs.
 * The only reader-side code that knows the records' layout and locks.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kvm_x86.h"
#include "records.h"
#include "threshold.h"
#include "view.h"

const char *const vmlat_hist_kind_names[VMLAT_NR_HIST_KINDS] = {
	VMLAT_HIST_KINDS(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const vmlat_report_kind_names[VMLAT_NR_REPORT_KINDS] = {
	VMLAT_HIST_KINDS(VMLAT_NAME_, VMLAT_COMMA_),
	[VMLAT_REPORT_IRQ] = VMLAT_REPORT_IRQ_NAME,
};

const char *const vmlat_by_kind_names[VMLAT_NR_BY_KINDS] = {
	VMLAT_BY_KINDS(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const vmlat_sync_state_names[VMLAT_NR_SYNC_STATES] = {
	VMLAT_SYNC_STATES(VMLAT_NAME_, VMLAT_COMMA_)
};

const u32 vmlat_quantile_ppm[VMLAT_NR_QUANTILES] = {
	VMLAT_PPM_P50, 900000, VMLAT_PPM_P99, 999000
};

const char *const vmlat_quantile_names[VMLAT_NR_QUANTILES] = {
	"p50", "p90", "p99", "p99_9"
};

/**
 * vmlat_view_list_get() - the VMs known now, and their vCPUs
 * @l:		filled in; vmlat_view_list_put() frees it
 *
 * One pass over each table: O(max_vms + max_vcpus). Until
 * vmlat_view_list_put(), no record is freed (the caller holds
 * vmlat_records_mutex): every view function may be called then.
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int vmlat_view_list_get(struct vmlat_view_list *l)
{
	unsigned int nvms = vmlat_max_vms, nvcpus = vmlat_max_vcpus;
	unsigned int i, n = 0, *pos, *at, *idx;
	const struct vmlat_vcpu *vc;
	const struct vmlat_vm *vm;
	int ret = -ENOMEM;

	memset(l, 0, sizeof(*l));
	mutex_lock(&vmlat_records_mutex);
	l->vms = kvmalloc_array(nvms, sizeof(*l->vms), GFP_KERNEL);
	l->first = kvcalloc(nvms + 1, sizeof(*l->first), GFP_KERNEL);
	l->vcpus = kvmalloc_array(nvcpus, sizeof(*l->vcpus), GFP_KERNEL);
	l->seq = kvmalloc_array(nvms, sizeof(*l->seq), GFP_KERNEL);
	pos = kvmalloc_array(nvms, sizeof(*pos), GFP_KERNEL);
	at = kvmalloc_array(nvcpus, sizeof(*at), GFP_KERNEL);
	idx = kvmalloc_array(nvcpus, sizeof(*idx), GFP_KERNEL);
	if (!l->vms || !l->first || !l->vcpus || !l->seq || !pos || !at ||
	    !idx) {
		vmlat_view_list_put(l);
		goto out;
	}
	for (i = 0; i < nvms; i++) {
		pos[i] = UINT_MAX;
		vm = vmlat_vm_at(i);
		if (vm) {
			pos[i] = l->nr_vms;
			/* Before its vCPUs are listed: a reuse after, it tells. */
			l->seq[l->nr_vms] = raw_read_seqcount_begin(&vm->ident_seq);
			l->vms[l->nr_vms++] = vm;
		}
	}
	/* Each vCPU's VM read once; counted, then placed (counting sort). */
	for (i = 0; i < nvcpus; i++) {
		vc = vmlat_vcpu_at(i);
		if (!vc)
			continue;
		vm = READ_ONCE(vc->vm);
		/* A VM gone from its slot, not freed while we hold the lock. */
		if (!vm || pos[vm->slot] == UINT_MAX ||
		    l->vms[pos[vm->slot]] != vm)
			continue;
		at[n] = pos[vm->slot];
		idx[n++] = i;
		l->first[at[n - 1] + 1]++;
	}
	for (i = 0; i < l->nr_vms; i++)
		l->first[i + 1] += l->first[i];
	/* pos[] now: where the next vCPU of each listed VM goes. */
	for (i = 0; i < l->nr_vms; i++)
		pos[i] = l->first[i];
	for (i = 0; i < n; i++)
		l->vcpus[pos[at[i]]++] = idx[i];
	l->nr_vcpus = n;
	ret = 0;
out:
	kvfree(idx);
	kvfree(at);
	kvfree(pos);
	return ret;
}

/* Free what vmlat_view_list_get() allocated; records may go again. */
void vmlat_view_list_put(struct vmlat_view_list *l)
{
	kvfree(l->seq);
	kvfree(l->vcpus);
	kvfree(l->first);
	kvfree(l->vms);
	memset(l, 0, sizeof(*l));
	mutex_unlock(&vmlat_records_mutex);
}

/* How many vCPU records there are: vmlat_view_vcpu() takes 0 .. this - 1. */
unsigned int vmlat_view_nr_vcpus(void)
{
	return vmlat_max_vcpus;
}

/*
 * Who VM @i of @l is: a copy its reuse in place (records.c) cannot tear.
 * If the record was reused since @l was made, it is the new VM's:
 * vmlat_view_vm_same() says so.
 */
void vmlat_view_vm(const struct vmlat_view_list *l, unsigned int i,
		   struct vmlat_view_vm *v)
{
	const struct vmlat_vm *vm = l->vms[i];
	unsigned int seq;

	do {
		seq = raw_read_seqcount_begin(&vm->ident_seq);
		v->id = READ_ONCE(vm->id);
		v->pid = READ_ONCE(vm->pid);
		memcpy(v->comm, vm->comm, sizeof(v->comm));
	} while (read_seqcount_retry(&vm->ident_seq, seq));
	v->exited = READ_ONCE(vm->exited);
	v->partly = READ_ONCE(vm->partly);
}

/*
 * Whether VM @i of @l is still the VM the list named: what was read of it
 * until now is that VM's, not a mix with the VM its record was reused
 * for, whose vCPUs the list does not have.
 */
bool vmlat_view_vm_same(const struct vmlat_view_list *l, unsigned int i)
{
	return !read_seqcount_retry(&l->vms[i]->ident_seq, l->seq[i]);
}

/**
 * vmlat_vcpu_read_acct() - a consistent copy of a vCPU's accounting
 * @vc:	the vCPU
 * @a:	the copy, with any reset @vc has not caught up with applied
 *
 * Context: process context, @vc->lock held (no other writer then runs
 * but @vc's own thread, whose write sections are short and never wait).
 */
static void vmlat_vcpu_read_acct(struct vmlat_vcpu *vc,
				 struct vmlat_vcpu_acct *a)
{
	unsigned int seq;
	u32 gen;

	do {
		seq = read_seqcount_begin(&vc->seq);
		*a = vc->acct;
	} while (read_seqcount_retry(&vc->seq, seq));
	/* Pairs with the release in vmlat_records_reset(). */
	gen = smp_load_acquire(&vmlat_reset_gen);
	if (a->reset_gen != gen)
		vmlat_acct_reset(a, gen, READ_ONCE(vmlat_reset_ns));
}

/**
 * vmlat_view_vcpu() - a consistent copy of the vCPU record @i
 * @i:		0 .. vmlat_view_nr_vcpus() - 1
 * @now:	the time its current state is counted up to
 * @v:		the copy
 *
 * Return: false if record @i is not in use.
 */
bool vmlat_view_vcpu(unsigned int i, u64 now, struct vmlat_view_vcpu *v)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_at(i);
	struct vmlat_vcpu_acct a;
	struct vmlat_as_times t;
	unsigned long flags;

	lockdep_assert_held(&vmlat_records_mutex);
	if (!vc)
		return false;
	raw_spin_lock_irqsave(&vc->lock, flags);
	v->vm = vc->vm;
	v->vm_pid = vc->vm ? vc->vm->pid : 0;
	v->tid = vc->tid;
	v->idx = vc->idx;
	v->live = vc->task;
	vmlat_vcpu_read_acct(vc, &a);
	v->state = a.state;
	v->st.exits = a.exits;
	v->order.unexpected = a.unexpected;
	v->order.late_exits = a.late_exits;
	v->order.late_switched = a.late_switched;
	v->order.late_ns = a.late_ns;
	v->halt = a.halt.s;
	vmlat_lhp_read(vc, &v->lhp);
	vmlat_acct_snapshot(&a, now, v->st.time_ns, &v->st.observed_ns);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
	vmlat_acct_as_times(v->st.time_ns, &t);
	vmlat_as_cursor_stretch(&a.as, &t, &v->as);
	v->nested = a.nested;
	if (!a.ended)
		vmlat_nested_snapshot(&v->nested, now);
	return v->vm;
}

/**
 * vmlat_view_vcpu_states() - a vCPU's own state times, by its record
 * @vc:		the record
 * @now:	the time its current state is counted up to
 * @st:		the copy
 *
 * Context: any, @vc->lock not held: the kvm_hypercall probe of @vc's
 * own thread asks it for its guest (guest_steal.c).
 */
void vmlat_view_vcpu_states(struct vmlat_vcpu *vc, u64 now,
			    struct vmlat_view_states *st)
{
	struct vmlat_vcpu_acct a;
	unsigned long flags;

	raw_spin_lock_irqsave(&vc->lock, flags);
	vmlat_vcpu_read_acct(vc, &a);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
	vmlat_acct_snapshot(&a, now, st->time_ns, &st->observed_ns);
	st->exits = a.exits;
}

/**
 * vmlat_view_vm_states() - the sum of a VM's vCPUs' state times
 * @l:		a list of VMs
 * @i:		the VM: @l->vms[@i]
 * @now:	the time current states are counted up to
 * @sum:	the sum
 *
 * Return: how many vCPUs it has.
 */
int vmlat_view_vm_states(const struct vmlat_view_list *l, unsigned int i,
			 u64 now, struct vmlat_view_states *sum)
{
	struct vmlat_view_vcpu v;
	unsigned int j, k;
	int nr = 0;

	memset(sum, 0, sizeof(*sum));
	vmlat_view_for_each_vcpu(l, i, k) {
		if (!vmlat_view_vcpu(l->vcpus[k], now, &v) || v.vm != l->vms[i])
			continue;
		for (j = 0; j < VMLAT_NR_STATES; j++)
			sum->time_ns[j] += v.st.time_ns[j];
		sum->observed_ns += v.st.observed_ns;
		sum->exits += v.st.exits;
		nr++;
	}
	return nr;
}

/* The statistics of exit reason @slot (exit_stats.h). */
void vmlat_view_exit(const struct vmlat_vm *vm, int slot,
		     struct vmlat_exit_row *row)
{
	vmlat_exit_stats_read(&vm->exits, slot, row);
}

u64 vmlat_view_exits_undecoded(const struct vmlat_vm *vm)
{
	return vmlat_exit_stats_undecoded(&vm->exits);
}

void vmlat_view_hist(const struct vmlat_vm *vm, enum vmlat_hist_kind kind,
		     struct vmlat_hist_snap *h)
{
	/* Pairs with the cmpxchg of vmlat_ahist_first(): made on use. */
	vmlat_ahist_read(smp_load_acquire(&vm->hist[kind]), h);
	if (kind != VMLAT_HIST_EXIT)
		return;
	/* The exits with a reason histogram are only there (records.h). */
	vmlat_exit_stats_hists_add(&vm->exits, h);
}

void vmlat_view_nested_hist(const struct vmlat_vm *vm,
			    enum vmlat_nested_hist kind,
			    struct vmlat_hist_snap *h)
{
	/* Pairs with the cmpxchg of vmlat_ahist_first(): made on use. */
	vmlat_ahist_read(smp_load_acquire(&vm->nested_hist[kind]), h);
}

/* The exit reason slot the VM's reason histogram @i serves, or -1. */
int vmlat_view_reason_hist_slot(const struct vmlat_vm *vm, unsigned int i)
{
	return vmlat_exit_stats_hist_slot(&vm->exits, i);
}

/* The histogram of exit reason @slot, if the VM keeps one. */
bool vmlat_view_reason_hist(const struct vmlat_vm *vm, int slot,
			    struct vmlat_hist_snap *h)
{
	return vmlat_exit_stats_hist(&vm->exits, slot, h);
}

u64 vmlat_hist_snap_quantile(const struct vmlat_hist_snap *h, u32 ppm)
{
	return vmlat_hist_quantile(h->buckets, h->count, h->max_ns, ppm);
}

/* L2 exits of reason @slot (VMLAT_SLOT_UNDECODED: unknown) dealt by @by. */
u64 vmlat_view_nested_exits(const struct vmlat_vm *vm, enum vmlat_nested_by by,
			    int slot)
{
	const struct vmlat_vm_nested_exits *n;

	/* Pairs with the cmpxchg of vmlat_vm_nested_exits(). */
	n = smp_load_acquire(&vm->nested_exits);
	if (!n)
		return 0;
	if (slot < 0)
		return atomic64_read(&n->undecoded[by]);
	return atomic64_read(&n->exits[by][slot]);
}

/**
 * vmlat_view_sync() - a VM's clock sync state and mapping
 * @vm:	the VM
 * @v:	the copy
 *
 * Return: false if its guest never called.
 */
bool vmlat_view_sync(const struct vmlat_vm *vm, struct vmlat_view_sync *v)
{
	int err;

	/* Its lock is taken inside: a const VM is only read. */
	vmlat_vm_sync_copy((struct vmlat_vm_sync *)&vm->sync, &v->d);
	vmlat_vm_steal_gate_copy((struct vmlat_vm_sync *)&vm->sync,
				 &v->steal);
	v->exits = atomic64_read(&vm->sync.exits);
	v->exit_ns = atomic64_read(&vm->sync.exit_ns);
	if (!v->d.calls && !v->exits && !v->steal.calls)
		return false;
	err = vmlat_clock_fit_solve(&v->d.fit, &v->map);
	v->state = !err ? VMLAT_SYNC_OK : err == -EAGAIN ? VMLAT_SYNC_WAITING :
		   err == -EDOM ? VMLAT_SYNC_INCONSISTENT :
		   VMLAT_SYNC_OUT_OF_RANGE;
	if (!err) {
		v->offset_ns = (s64)(v->map.host_ns - v->map.at_guest_ns);
		v->bound_ns = max(v->map.host_max_ns - v->map.host_ns,
				  v->map.host_ns - v->map.host_min_ns);
	}
	return true;
}

/* @a's name, if its guest gave one. Context: its VM's as_lock held. */
static void vmlat_view_as_named(const struct vmlat_as_names *names,
				struct vmlat_view_as *a)
{
	const struct vmlat_as_name *name = vmlat_as_name_find(names, a->key);

	if (name) {
		a->tgid = name->tgid;
		memcpy(a->comm, name->comm, sizeof(name->comm));
	}
}

/**
 * vmlat_view_guest_tasks() - a VM's guest address spaces, most time first
 * @l:		a list of VMs
 * @i:		the VM: @l->vms[@i]
 * @now:	the time stretches in progress are counted up to
 * @g:		filled in
 *
 * The VM's table, copied under its as_lock, plus each of its vCPUs' stretch
 * in progress: to its address space's row, or as a row of its own; and the
 * name its guest gave each one.
 */
void vmlat_view_guest_tasks(const struct vmlat_view_list *l, unsigned int i,
			    u64 now, struct vmlat_view_guest_tasks *g)
{
	struct vmlat_vm *vm = (struct vmlat_vm *)l->vms[i];	/* its as_lock */
	struct vmlat_as_name_gate gate;
	struct vmlat_view_vcpu v;
	struct vmlat_view_as tmp;
	u8 idx[VMLAT_AS_SLOTS];
	unsigned int j, k, n;
	unsigned long flags;
	u64 total;

	memset(g, 0, sizeof(*g));
	raw_spin_lock_irqsave(&vm->as_lock, flags);
	n = vmlat_as_table_rank(&vm->as, idx);
	for (j = 0; j < n; j++) {
		g->as[j].key = vm->as.slot[idx[j]].key;
		g->as[j].row = vm->as.row[idx[j]];
		vmlat_view_as_named(&vm->names, &g->as[j]);
	}
	g->other = vm->as.other;
	g->evicted = vm->as.evicted;
	raw_spin_unlock_irqrestore(&vm->as_lock, flags);
	g->nr = n;

	vmlat_view_for_each_vcpu(l, i, k) {
		if (!vmlat_view_vcpu(l->vcpus[k], now, &v) || v.vm != vm ||
		    v.as.key == VMLAT_AS_NONE)
			continue;
		for (j = 0; j < g->nr && g->as[j].key != v.as.key; j++)
			;
		if (j == VMLAT_VIEW_AS_MAX) {
			vmlat_as_row_merge(&g->other, &v.as);
			continue;
		}
		if (j == g->nr) {
			memset(&g->as[j], 0, sizeof(g->as[j]));
			g->as[j].key = v.as.key;
			g->nr++;
		}
		vmlat_as_row_merge(&g->as[j].row, &v.as);
	}
	/*
	 * The names of the rows that only stretches in progress made, and
	 * the counters. (A root ended since the table was copied: its
	 * stretch in progress is the new process's.)
	 */
	vmlat_vm_name_gate_copy(&vm->sync, &gate);
	raw_spin_lock_irqsave(&vm->as_lock, flags);
	for (j = n; j < g->nr; j++)
		vmlat_view_as_named(&vm->names, &g->as[j]);
	vmlat_as_names_stats(&gate, &vm->names, &g->names);
	g->names_held = vmlat_as_names_count(&vm->names);
	g->whole = vmlat_as_names_whole(&vm->names);
	raw_spin_unlock_irqrestore(&vm->as_lock, flags);
	/* Insertion sort by total time: the stretches changed the order. */
	for (j = 1; j < g->nr; j++) {
		tmp = g->as[j];
		total = vmlat_as_total(&tmp.row.t);
		for (k = j; k > 0 &&
		     vmlat_as_total(&g->as[k - 1].row.t) < total; k--)
			g->as[k] = g->as[k - 1];
		g->as[k] = tmp;
	}
}

/**
 * vmlat_view_as_name() - what a VM's guest named an address space
 * @vm_pid:	the VM's VMM process (its newest VM, if more than one)
 * @a:		the address space: @a->key (0: none) in, @a->tgid and
 *		@a->comm set if its guest named it (@a->tgid stays 0 if not)
 *
 * The name the guest gives the root now: an event or report from before
 * the root went to a new process is named after that one.
 *
 * Context: process context (one pass over the VM table).
 */
void vmlat_view_as_name(pid_t vm_pid, struct vmlat_view_as *a)
{
	struct vmlat_vm *vm = NULL;
	unsigned long flags;
	struct vmlat_vm *v;
	unsigned int i;

	if (!a->key)
		return;
	mutex_lock(&vmlat_records_mutex);
	for (i = 0; i < vmlat_max_vms; i++) {
		v = vmlat_vm_at(i);
		if (!v || READ_ONCE(v->pid) != vm_pid)
			continue;
		if (!vm || (s32)(READ_ONCE(v->id) - vm->id) > 0)
			vm = v;
	}
	if (vm) {
		raw_spin_lock_irqsave(&vm->as_lock, flags);
		vmlat_view_as_named(&vm->names, a);
		raw_spin_unlock_irqrestore(&vm->as_lock, flags);
	}
	mutex_unlock(&vmlat_records_mutex);
}

/**
 * vmlat_view_preemptors() - a VM's top preemptors, most stolen time first
 * @vm:		the VM
 * @out:	VMLAT_TOPK_SLOTS entries
 * @other_ns:	set to the stolen time of preemptors that lost their entry
 *
 * Return: how many entries of @out are filled.
 */
unsigned int vmlat_view_preemptors(const struct vmlat_vm *vm,
				   struct vmlat_view_preemptor *out,
				   u64 *other_ns)
{
	struct vmlat_vm *w = (struct vmlat_vm *)vm;	/* for its lock */
	u8 idx[VMLAT_TOPK_SLOTS];
	unsigned long flags;
	unsigned int i, n;

	raw_spin_lock_irqsave(&w->lock, flags);
	n = vmlat_topk_rank(&vm->top, idx);
	for (i = 0; i < n; i++) {
		out[i].who = vm->preemptors[idx[i]];
		out[i].stolen_ns = vm->top.slot[idx[i]].value;
		out[i].slices = vm->top.slot[idx[i]].hits;
	}
	*other_ns = vm->top.other;
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return n;
}

/*
 * Time @by (a VM, or NULL: host tasks) ran while @victim's vCPUs waited;
 * 0 for a VM not in @victim's table of the VMs that took the most.
 */
u64 vmlat_view_stolen_by(const struct vmlat_vm *victim,
			 const struct vmlat_vm *by)
{
	struct vmlat_vm *w = (struct vmlat_vm *)victim;	/* for its lock */
	unsigned long flags;
	u64 ns = 0;
	int i;

	raw_spin_lock_irqsave(&w->lock, flags);
	if (!by) {
		ns = victim->stolen_by_host;
	} else {
		i = vmlat_topk_find_in(victim->by_vm.slot, VMLAT_TOPK_SLOTS,
				       READ_ONCE(by->id));
		if (i >= 0)
			ns = victim->by_vm.slot[i].value;
	}
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return ns;
}

/* Time VMs ran while @victim's vCPUs waited that its table has no room for. */
u64 vmlat_view_stolen_by_other(const struct vmlat_vm *victim)
{
	struct vmlat_vm *w = (struct vmlat_vm *)victim;	/* for its lock */
	unsigned long flags;
	u64 ns;

	raw_spin_lock_irqsave(&w->lock, flags);
	ns = victim->by_vm.other;
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return ns;
}

/**
 * vmlat_view_stolen() - what host tasks and VMs took from @victim's vCPUs
 * @victim:	the VM
 * @s:		filled in
 *
 * Only the VMs that took time are listed: the size of @s does not grow
 * with the number of VMs on the host.
 */
void vmlat_view_stolen(const struct vmlat_vm *victim,
		       struct vmlat_view_stolen *s)
{
	struct vmlat_vm *w = (struct vmlat_vm *)victim;	/* for its lock */
	const struct vmlat_topk_slot *slot;
	u8 idx[VMLAT_TOPK_SLOTS];
	unsigned long flags;
	unsigned int i, n;

	s->nr = 0;
	raw_spin_lock_irqsave(&w->lock, flags);
	s->host_ns = victim->stolen_by_host;
	s->other_ns = victim->by_vm.other;
	n = vmlat_topk_rank(&victim->by_vm, idx);
	for (i = 0; i < n; i++) {
		slot = &victim->by_vm.slot[idx[i]];
		if (!slot->value)
			continue;
		s->by[s->nr].id = (u32)slot->key;
		s->by[s->nr++].ns = slot->value;
	}
	raw_spin_unlock_irqrestore(&w->lock, flags);
}

void vmlat_view_dropped(struct vmlat_view_dropped *d)
{
	d->vms = atomic64_read(&vmlat_stats.dropped_vms);
	d->vcpus = atomic64_read(&vmlat_stats.dropped_vcpus);
	d->victims = atomic64_read(&vmlat_stats.dropped_victims);
}

/* @vm's interrupt deliveries: zeroes before its first. */
void vmlat_view_irq(const struct vmlat_vm *vm, struct vmlat_view_irq *v)
{
	/* Pairs with the cmpxchg of vmlat_vm_irq(). */
	const struct vmlat_vm_irq *q = smp_load_acquire(&vm->irq);
	const struct vmlat_irq_cell *c;
	int src, at;

	memset(v, 0, sizeof(*v));
	if (!q)
		return;
	for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
		for (at = 0; at < VMLAT_NR_IRQ_ATS; at++) {
			c = &q->cell[src][at];
			v->cell[src][at].count = atomic64_read(&c->count);
			v->cell[src][at].sum_ns = atomic64_read(&c->sum_ns);
			v->cell[src][at].max_ns = atomic64_read(&c->max_ns);
			v->cell[src][at].wait_ns = atomic64_read(&c->wait_ns);
			v->cell[src][at].lost = atomic64_read(&c->lost);
			v->cell[src][at].coalesced =
				atomic64_read(&c->coalesced);
		}
	}
	v->unmatched = atomic64_read(&q->unmatched);
}

void vmlat_view_irq_hist(const struct vmlat_vm *vm, enum vmlat_irq_src src,
			 struct vmlat_hist_snap *h)
{
	/* Pairs with the cmpxchg of vmlat_ahist_first(). */
	vmlat_ahist_read(smp_load_acquire(&vm->irq_hist[src]), h);
}

void vmlat_view_expire_hist(const struct vmlat_vm *vm,
			    enum vmlat_expire_hist k, struct vmlat_hist_snap *h)
{
	/* Pairs with the cmpxchg of vmlat_ahist_first(). */
	vmlat_ahist_read(smp_load_acquire(&vm->expire_hist[k]), h);
}

/* Interrupts whose VM or vCPU vmlat could not tell, since load. */
u64 vmlat_view_irq_unattributed(void)
{
	return atomic64_read(&vmlat_stats.irq_unattributed);
}

/* How full the bounded tables are: a racy snapshot. */
void vmlat_view_tables(struct vmlat_view_tables *t)
{
	struct vmlat_records_memory mem;
	struct vmlat_records_stats r;
	struct vmlat_tasks_stats ts;

	vmlat_records_read_stats(&r);
	vmlat_tasks_read_stats(&ts);
	t->vms_live = r.vms_live;
	t->vms_exited = r.vms_exited;
	t->vms_max = vmlat_max_vms;
	t->vcpus_live = r.vcpus_live;
	t->vcpus_exited = r.vcpus_exited;
	t->vcpus_max = vmlat_max_vcpus;
	t->tasks = ts.keys;
	t->tasks_untracked = ts.untracked;
	t->tasks_max = ts.max_keys;
	t->probe_max = ts.probe_max;
	t->task_slots = ts.slots;
	vmlat_records_read_memory(&mem);
	t->bytes = mem.bytes;
	t->tables_bytes = mem.tables;
	t->vm_bytes = mem.vms.size;
	t->vcpu_bytes = mem.vcpus.size;
	t->block_bytes = mem.blocks.size;
	t->vms = mem.vms.used;
	t->vcpus = mem.vcpus.used;
	t->blocks = mem.blocks.used;
	t->pooled_bytes = mem.vms.free * mem.vms.size +
			  mem.vcpus.free * mem.vcpus.size +
			  mem.blocks.free * mem.blocks.size;
	t->missed = mem.vms.missed + mem.vcpus.missed + mem.blocks.missed +
		    vmlat_tasks_missed();
}

/**
 * vmlat_reset() - zero every statistic and forget the reports; VMs and
 * vCPUs stay known
 */
void vmlat_reset(void)
{
	vmlat_records_reset();
	vmlat_report_reset();
}

/**
 * vmlat_view_order_sum() - events out of order and late exits, all vCPUs
 * @sum:	the sums
 */
void vmlat_view_order_sum(struct vmlat_view_order *sum)
{
	struct vmlat_view_vcpu v;
	u64 now = vmlat_now_ns();
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	mutex_lock(&vmlat_records_mutex);
	for (i = 0; i < vmlat_max_vcpus; i++) {
		if (!vmlat_view_vcpu(i, now, &v))
			continue;
		sum->unexpected += v.order.unexpected;
		sum->late_exits += v.order.late_exits;
		sum->late_switched += v.order.late_switched;
		sum->late_ns += v.order.late_ns;
	}
	mutex_unlock(&vmlat_records_mutex);
}

/* The width of SVM's exit code vmlat was built for (status: "# kernel:"). */
unsigned int vmlat_view_svm_exit_code_bits(void)
{
	return VMLAT_KVM_SVM_EXIT_CODE_BITS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The analyzer's tables in /sys/kernel/debug/vmlat/: one table per file,
 * a '#' header naming the columns (times in ns), fixed column order; the
 * same data as one JSON document in "json"; "reset" zeroes the statistics.
 * Formats are documented in Documentation/vmlat.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "analyzer.h"
#include "compat.h"
#include "report.h"
#include "vmlat.h"

/**
 * vmlat_seq_comm() - a task name in a whitespace-separated table
 * @m:		the file
 * @comm:	the name; an empty one is printed as "-"
 *
 * Blanks and backslashes are escaped in octal, as /proc/mounts does
 * ("CPU 0/KVM" -> "CPU\0400/KVM").
 */
void vmlat_seq_comm(struct seq_file *m, const char *comm)
{
	if (!*comm) {
		seq_putc(m, '-');
		return;
	}
	seq_escape(m, comm, " \t\n\\");
}

/* A consistent copy of one vCPU, taken under its lock. */
struct vcpu_snap {
	pid_t vm_pid;
	pid_t tid;
	int idx;
	bool live;
	u8 state;
	u64 observed_ns;
	u64 time_ns[VMLAT_NR_STATES];
	u64 exits;
	struct vmlat_nested nested;
	struct vmlat_vm *vm;
};

static bool vcpu_snapshot(struct vmlat_vcpu *vc, u64 now, struct vcpu_snap *s)
{
	struct vmlat_vcpu_acct a;
	unsigned long flags;

	if (!vmlat_vcpu_in_use(vc))
		return false;
	raw_spin_lock_irqsave(&vc->lock, flags);
	s->vm = vc->vm;
	s->vm_pid = vc->vm ? vc->vm->pid : 0;
	s->tid = vc->tid;
	s->idx = vc->idx;
	s->live = vc->task;
	vmlat_vcpu_read_acct(vc, &a);
	s->state = a.state;
	s->exits = a.exits;
	vmlat_acct_snapshot(&a, now, s->time_ns, &s->observed_ns);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
	s->nested = a.nested;
	if (!a.ended)
		vmlat_nested_snapshot(&s->nested, now);
	return s->vm;
}

#define for_each_vm(vm, i)						\
	for (i = 0, vm = vmlat_vms; i < VMLAT_MAX_VMS; i++, vm++)	\
		if (vmlat_vm_in_use(vm))

/* Sum of a VM's vCPUs' state times. */
static void vm_totals(struct vmlat_vm *vm, u64 now, u64 time_ns[VMLAT_NR_STATES],
		      u64 *observed_ns, u64 *exits, int *nr_vcpus)
{
	struct vcpu_snap s;
	int i, j;

	memset(time_ns, 0, VMLAT_NR_STATES * sizeof(u64));
	*observed_ns = 0;
	*exits = 0;
	*nr_vcpus = 0;
	for (i = 0; i < VMLAT_MAX_VCPUS; i++) {
		if (!vcpu_snapshot(&vmlat_vcpus[i], now, &s) || s.vm != vm)
			continue;
		for (j = 0; j < VMLAT_NR_STATES; j++)
			time_ns[j] += s.time_ns[j];
		*observed_ns += s.observed_ns;
		*exits += s.exits;
		(*nr_vcpus)++;
	}
}

static void print_state_header(struct seq_file *m)
{
	int i;

	seq_puts(m, " observed_ns");
	for (i = 0; i < VMLAT_NR_STATES; i++)
		seq_printf(m, " %s_ns", vmlat_state_names[i]);
	seq_puts(m, " exits\n");
}

static void print_state_times(struct seq_file *m, u64 observed,
			      const u64 *time_ns, u64 exits)
{
	int i;

	seq_printf(m, " %llu", observed);
	for (i = 0; i < VMLAT_NR_STATES; i++)
		seq_printf(m, " %llu", time_ns[i]);
	seq_printf(m, " %llu\n", exits);
}

static int vcpus_show(struct seq_file *m, void *unused)
{
	u64 now = vmlat_now_ns();
	struct vcpu_snap s;
	int i;

	seq_puts(m, "# vm_pid vcpu tid state");
	print_state_header(m);
	for (i = 0; i < VMLAT_MAX_VCPUS; i++) {
		if (!vcpu_snapshot(&vmlat_vcpus[i], now, &s))
			continue;
		seq_printf(m, "%d %d %d %s", s.vm_pid, s.idx, s.tid,
			   s.live ? vmlat_state_names[s.state] : "exited");
		print_state_times(m, s.observed_ns, s.time_ns, s.exits);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vcpus);

static int vms_show(struct seq_file *m, void *unused)
{
	u64 now = vmlat_now_ns(), time_ns[VMLAT_NR_STATES], observed, exits;
	struct vmlat_vm *vm;
	int i, nr;

	seq_puts(m, "# vm_pid comm vcpus");
	print_state_header(m);
	for_each_vm(vm, i) {
		vm_totals(vm, now, time_ns, &observed, &exits, &nr);
		seq_printf(m, "%d ", vm->pid);
		vmlat_seq_comm(m, vm->comm);
		seq_printf(m, " %d", nr);
		print_state_times(m, observed, time_ns, exits);
	}
	seq_printf(m, "# dropped: vms %lld vcpus %lld victims %lld\n",
		   atomic64_read(&vmlat_stats.dropped_vms),
		   atomic64_read(&vmlat_stats.dropped_vcpus),
		   atomic64_read(&vmlat_stats.dropped_victims));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vms);

/* The reason histogram of @slot in @vm, if it has one. */
static const struct vmlat_ahist *reason_hist(struct vmlat_vm *vm, int slot)
{
	int i;

	for (i = 0; i < VMLAT_REASON_HISTS; i++) {
		if (atomic_read(&vm->reason_slot[i]) == slot)
			return &vm->reason_hist[i];
	}
	return NULL;
}

static int exits_show(struct seq_file *m, void *unused)
{
	struct vmlat_hist_snap *h;
	const struct vmlat_ahist *rh;
	struct vmlat_vm *vm;
	u64 count, total;
	int i, slot;

	h = kmalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	seq_puts(m, "# vm_pid isa code name count total_ns min_ns p50_ns p99_ns max_ns\n");
	for_each_vm(vm, i) {
		for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
			count = atomic64_read(&vm->exit_count[slot]);
			if (!count)
				continue;
			total = atomic64_read(&vm->exit_ns[slot]);
			seq_printf(m, "%d %s 0x%llx %s %llu %llu", vm->pid,
				   vmlat_exit_isa_name(vmlat_exit_slot_isa(slot)),
				   vmlat_exit_slot_code(slot),
				   vmlat_exit_slot_name(slot), count, total);
			rh = reason_hist(vm, slot);
			if (rh) {
				vmlat_ahist_read(rh, h);
				seq_printf(m, " %llu %llu %llu %llu\n", h->min_ns,
					   vmlat_hist_quantile(h->buckets, h->count,
							       h->max_ns, 500000),
					   vmlat_hist_quantile(h->buckets, h->count,
							       h->max_ns, 990000),
					   h->max_ns);
			} else {
				seq_puts(m, " - - - -\n");
			}
		}
		count = atomic64_read(&vm->exit_undecoded);
		if (count)
			seq_printf(m, "%d - - undecoded %llu - - - - -\n",
				   vm->pid, count);
	}
	kfree(h);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(exits);

static const u32 hist_ppm[] = { 500000, 900000, 990000, 999000 };
static const char *const hist_ppm_names[] = { "p50", "p90", "p99", "p99.9" };
static_assert(ARRAY_SIZE(hist_ppm) == ARRAY_SIZE(hist_ppm_names));

static void print_hist(struct seq_file *m, pid_t pid, const char *kind,
		       const char *reason, const struct vmlat_ahist *ah,
		       struct vmlat_hist_snap *h)
{
	int i;

	vmlat_ahist_read(ah, h);
	seq_printf(m, "%d %s%s%s %llu %llu", pid, kind, reason ? ":" : "",
		   reason ?: "", h->count, h->min_ns);
	for (i = 0; i < ARRAY_SIZE(hist_ppm); i++)
		seq_printf(m, " %llu", vmlat_hist_quantile(h->buckets, h->count,
							   h->max_ns,
							   hist_ppm[i]));
	seq_printf(m, " %llu %llu\n", h->max_ns, h->sum_ns);
}

static int histograms_show(struct seq_file *m, void *unused)
{
	struct vmlat_hist_snap *h;
	struct vmlat_vm *vm;
	int i, k, slot;

	h = kmalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	seq_puts(m, "# vm_pid kind count min_ns p50_ns p90_ns p99_ns p99.9_ns max_ns sum_ns\n");
	for_each_vm(vm, i) {
		for (k = 0; k < VMLAT_NR_HIST_KINDS; k++)
			print_hist(m, vm->pid, vmlat_hist_kind_names[k], NULL,
				   &vm->hist[k], h);
		for (k = 0; k < VMLAT_NR_NESTED_HISTS; k++)
			print_hist(m, vm->pid, vmlat_nested_hist_names[k],
				   NULL, &vm->nested_hist[k], h);
		for (k = 0; k < VMLAT_REASON_HISTS; k++) {
			slot = atomic_read(&vm->reason_slot[k]);
			if (slot >= 0)
				print_hist(m, vm->pid, "exit",
					   vmlat_exit_slot_name(slot),
					   &vm->reason_hist[k], h);
		}
	}
	kfree(h);
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

/* Add @n's statistics to @sum (a VM's total). */
static void nested_add(struct vmlat_nested *sum, const struct vmlat_nested *n)
{
	int i, j;

	sum->l1_ns += n->l1_ns;
	sum->l2_ns += n->l2_ns;
	sum->l2_exit_l0_ns += n->l2_exit_l0_ns;
	sum->l2_exit_l1_ns += n->l2_exit_l1_ns;
	sum->l2_entries += n->l2_entries;
	sum->l1_to_l2 += n->l1_to_l2;
	sum->l2_exits_l0 += n->l2_exits_l0;
	sum->l2_exits_l1 += n->l2_exits_l1;
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			sum->p1[i][j] += n->p1[i][j];
}

/* The columns of "nested" from l1_ns on. */
static void print_nested(struct seq_file *m, const struct vmlat_nested *n)
{
	seq_printf(m, " %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu ",
		   n->l1_ns, n->l2_ns, n->l2_exit_l0_ns, n->l2_exit_l1_ns,
		   n->l2_entries, n->l1_to_l2, n->l2_exits_l0, n->l2_exits_l1,
		   vmlat_nested_p1_agree(n), vmlat_nested_p1_judged(n));
	print_permille(m, vmlat_nested_p1_agree(n), vmlat_nested_p1_judged(n));
	seq_putc(m, '\n');
}

static int nested_show(struct seq_file *m, void *unused)
{
	u64 now = vmlat_now_ns();
	struct vmlat_nested *sum;
	struct vcpu_snap *s;
	struct vmlat_vm *vm;
	int i, j, nr;

	s = kmalloc(sizeof(*s), GFP_KERNEL);
	sum = kmalloc(sizeof(*sum), GFP_KERNEL);
	if (!s || !sum) {
		kfree(s);
		kfree(sum);
		return -ENOMEM;
	}
	seq_puts(m, "# vm_pid vcpu tid level l1_ns l2_ns l2_exit_l0_ns l2_exit_l1_ns l2_entries l1_to_l2 l2_exits_l0 l2_exits_l1 p1_agree p1_judged p1_agree_pct\n");
	for_each_vm(vm, i) {
		memset(sum, 0, sizeof(*sum));
		nr = 0;
		for (j = 0; j < VMLAT_MAX_VCPUS; j++) {
			if (!vcpu_snapshot(&vmlat_vcpus[j], now, s) ||
			    s->vm != vm || !s->nested.active)
				continue;
			seq_printf(m, "%d %d %d %s", s->vm_pid, s->idx, s->tid,
				   !s->live ? "exited" :
				   s->nested.level == VMLAT_LEVEL_L2 ? "l2" : "l1");
			print_nested(m, &s->nested);
			nested_add(sum, &s->nested);
			nr++;
		}
		if (nr) {
			seq_printf(m, "%d all - -", vm->pid);
			print_nested(m, sum);
		}
	}
	kfree(s);
	kfree(sum);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nested);

static int nested_exits_show(struct seq_file *m, void *unused)
{
	struct vmlat_vm *vm;
	u64 l0, l1;
	int i, slot;

	seq_puts(m, "# vm_pid isa code name handled_by_l0 reflected_to_l1\n");
	for_each_vm(vm, i) {
		for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
			l0 = atomic64_read(&vm->nested_exits[0][slot]);
			l1 = atomic64_read(&vm->nested_exits[1][slot]);
			if (!l0 && !l1)
				continue;
			seq_printf(m, "%d %s 0x%llx %s %llu %llu\n", vm->pid,
				   vmlat_exit_isa_name(vmlat_exit_slot_isa(slot)),
				   vmlat_exit_slot_code(slot),
				   vmlat_exit_slot_name(slot), l0, l1);
		}
		l0 = atomic64_read(&vm->nested_undecoded[0]);
		l1 = atomic64_read(&vm->nested_undecoded[1]);
		if (l0 || l1)
			seq_printf(m, "%d - - undecoded %llu %llu\n", vm->pid,
				   l0, l1);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nested_exits);

/* ---- clock sync ------------------------------------------------------- */

struct sync_view {
	struct vmlat_vm_sync_data d;
	struct vmlat_clock_map f;
	const char *state;
	s64 offset_ns;
	u64 bound_ns;
};

/* @vm's sync state and fit; false if its guest never called. */
static bool sync_view(struct vmlat_vm *vm, struct sync_view *v)
{
	int err;

	vmlat_vm_sync_copy(&vm->sync, &v->d);
	if (!v->d.calls && !atomic64_read(&vm->sync.exits))
		return false;
	err = vmlat_clock_fit_solve(&v->d.fit, &v->f);
	v->state = !err ? "ok" : err == -EAGAIN ? "waiting" :
		   err == -EDOM ? "inconsistent" : "out_of_range";
	if (!err) {
		v->offset_ns = (s64)(v->f.host_ns - v->f.at_guest_ns);
		v->bound_ns = max(v->f.host_max_ns - v->f.host_ns,
				  v->f.host_ns - v->f.host_min_ns);
	}
	return true;
}

static int sync_show(struct seq_file *m, void *unused)
{
	u64 now = vmlat_now_ns();
	struct sync_view *v;
	struct vmlat_vm *vm;
	int i;

	v = kmalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	seq_puts(m, "# vm_pid state exchanges drift_ppb drift_min_ppb drift_max_ppb offset_ns bound_ns age_ms calls malformed replayed unpaired refused limited restarts exits exit_ns\n");
	for_each_vm(vm, i) {
		if (!sync_view(vm, v))
			continue;
		seq_printf(m, "%d %s %llu ", vm->pid, v->state, v->d.taken);
		if (!strcmp(v->state, "ok"))
			seq_printf(m, "%lld %lld %lld %lld %llu ", v->f.drift_ppb,
				   v->f.drift_min_ppb, v->f.drift_max_ppb,
				   v->offset_ns, v->bound_ns);
		else
			seq_puts(m, "- - - - - ");
		if (v->d.last_ns)
			seq_printf(m, "%llu", div_u64(now - v->d.last_ns,
						      NSEC_PER_MSEC));
		else
			seq_putc(m, '-');
		seq_printf(m, " %llu %llu %llu %llu %llu %llu %llu %lld %lld\n",
			   v->d.calls, v->d.malformed, v->d.replayed,
			   v->d.unpaired, v->d.refused, v->d.limited,
			   v->d.restarts, atomic64_read(&vm->sync.exits),
			   atomic64_read(&vm->sync.exit_ns));
	}
	kfree(v);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sync);

static const char *const preemptor_kinds[] = {
	[VMLAT_BY_HOST] = "host",
	[VMLAT_BY_VM] = "vm",
	[VMLAT_BY_SAME_VM] = "same_vm",
};

/* The VM's preemptors, most stolen time first. */
static int preemptors_sorted(struct vmlat_vm *vm, struct vmlat_preemptor *out,
			     u64 *other_ns)
{
	unsigned long flags;
	int i, j, n = 0;

	raw_spin_lock_irqsave(&vm->lock, flags);
	for (i = 0; i < VMLAT_TOP_PREEMPTORS; i++) {
		if (vm->preemptors[i].slices)
			out[n++] = vm->preemptors[i];
	}
	*other_ns = vm->other_ns;
	raw_spin_unlock_irqrestore(&vm->lock, flags);
	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && out[j].stolen_ns > out[j - 1].stolen_ns; j--)
			swap(out[j], out[j - 1]);
	}
	return n;
}

static int preemptors_show(struct seq_file *m, void *unused)
{
	struct vmlat_preemptor p[VMLAT_TOP_PREEMPTORS];
	struct vmlat_vm *vm;
	u64 other;
	int i, j, n;

	seq_puts(m, "# vm_pid rank kind pid comm vm vcpu stolen_ns slices\n");
	for_each_vm(vm, i) {
		n = preemptors_sorted(vm, p, &other);
		for (j = 0; j < n; j++) {
			seq_printf(m, "%d %d %s %d ", vm->pid, j + 1,
				   preemptor_kinds[p[j].kind], p[j].pid);
			vmlat_seq_comm(m, p[j].comm);
			seq_putc(m, ' ');
			if (p[j].kind == VMLAT_BY_HOST)
				seq_puts(m, "- -");
			else
				seq_printf(m, "%d %d", p[j].vm_pid, p[j].vcpu);
			seq_printf(m, " %llu %llu\n", p[j].stolen_ns,
				   p[j].slices);
		}
		if (other)
			seq_printf(m, "%d - other - - - - %llu -\n", vm->pid,
				   other);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(preemptors);

static u64 stolen_by(struct vmlat_vm *victim, int row)
{
	unsigned long flags;
	u64 ns;

	raw_spin_lock_irqsave(&victim->lock, flags);
	ns = victim->stolen_by[row];
	raw_spin_unlock_irqrestore(&victim->lock, flags);
	return ns;
}

static int matrix_show(struct seq_file *m, void *unused)
{
	struct vmlat_vm *vm, *victim;
	int i, j;

	seq_puts(m, "# preemptor");
	for_each_vm(victim, j)
		seq_printf(m, " %d", victim->pid);
	seq_puts(m, "\n");

	seq_puts(m, "host");
	for_each_vm(victim, j)
		seq_printf(m, " %llu", stolen_by(victim, 0));
	seq_puts(m, "\n");
	for_each_vm(vm, i) {
		seq_printf(m, "vm:%d", vm->pid);
		for_each_vm(victim, j)
			seq_printf(m, " %llu", stolen_by(victim, 1 + i));
		seq_puts(m, "\n");
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(matrix);

static int steal_show(struct seq_file *m, void *unused)
{
	u64 now = vmlat_now_ns(), t[VMLAT_NR_STATES], observed, exits;
	struct vmlat_vm *vm;
	int i, nr;

	seq_puts(m, "# vm_pid observed_ns type1_ns preempted_ns wait_ns type2_ns kernel_ns user_ns\n");
	for_each_vm(vm, i) {
		vm_totals(vm, now, t, &observed, &exits, &nr);
		seq_printf(m, "%d %llu %llu %llu %llu %llu %llu %llu\n", vm->pid,
			   observed, t[VMLAT_PREEMPTED] + t[VMLAT_WAIT],
			   t[VMLAT_PREEMPTED], t[VMLAT_WAIT],
			   t[VMLAT_KERNEL] + t[VMLAT_USER], t[VMLAT_KERNEL],
			   t[VMLAT_USER]);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(steal);

/* ---- json ------------------------------------------------------------ */

/* A task name as a JSON string: comm is any bytes a task chose. */
static void json_str(struct seq_file *m, const char *s)
{
	seq_putc(m, '"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f)
			seq_printf(m, "\\u%04x", c);
		else
			seq_putc(m, c);
	}
	seq_putc(m, '"');
}

static void json_states(struct seq_file *m, u64 observed, const u64 *t,
			u64 exits)
{
	int i;

	seq_printf(m, "\"observed_ns\":%llu", observed);
	for (i = 0; i < VMLAT_NR_STATES; i++)
		seq_printf(m, ",\"%s_ns\":%llu", vmlat_state_names[i], t[i]);
	seq_printf(m, ",\"exits\":%llu", exits);
}

static void json_hist(struct seq_file *m, const struct vmlat_ahist *ah,
		      struct vmlat_hist_snap *h)
{
	int i;
	bool first = true;

	vmlat_ahist_read(ah, h);
	seq_printf(m, "{\"count\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,\"sum_ns\":%llu",
		   h->count, h->min_ns, h->max_ns, h->sum_ns);
	for (i = 0; i < ARRAY_SIZE(hist_ppm); i++)
		seq_printf(m, ",\"%s_ns\":%llu", hist_ppm_names[i],
			   vmlat_hist_quantile(h->buckets, h->count, h->max_ns,
					       hist_ppm[i]));
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

/* The "nested" object's members of @vm, its opening brace printed. */
static void json_nested_stats(struct seq_file *m,
			      const struct vmlat_nested *n)
{
	seq_printf(m, "{\"l1_ns\":%llu,\"l2_ns\":%llu,\"l2_exit_l0_ns\":%llu,\"l2_exit_l1_ns\":%llu,\"l2_entries\":%llu,\"l1_to_l2\":%llu,\"l2_exits_l0\":%llu,\"l2_exits_l1\":%llu,\"p1_agree\":%llu,\"p1_judged\":%llu}",
		   n->l1_ns, n->l2_ns, n->l2_exit_l0_ns, n->l2_exit_l1_ns,
		   n->l2_entries, n->l1_to_l2, n->l2_exits_l0, n->l2_exits_l1,
		   vmlat_nested_p1_agree(n), vmlat_nested_p1_judged(n));
}

static void json_nested(struct seq_file *m, struct vmlat_vm *vm, u64 now)
{
	struct vmlat_nested sum = {};
	struct vcpu_snap s;
	bool first = true;
	u64 l0, l1;
	int i;

	for (i = 0; i < VMLAT_MAX_VCPUS; i++) {
		if (!vcpu_snapshot(&vmlat_vcpus[i], now, &s) || s.vm != vm ||
		    !s.nested.active)
			continue;
		seq_printf(m, "%s{\"vcpu\":%d,\"tid\":%d,\"stats\":",
			   first ? "" : ",", s.idx, s.tid);
		json_nested_stats(m, &s.nested);
		seq_putc(m, '}');
		nested_add(&sum, &s.nested);
		first = false;
	}
	seq_puts(m, "],\"totals\":");
	json_nested_stats(m, &sum);
	seq_puts(m, ",\"exits\":[");
	for (first = true, i = 0; i < VMLAT_EXIT_NR_SLOTS; i++) {
		l0 = atomic64_read(&vm->nested_exits[0][i]);
		l1 = atomic64_read(&vm->nested_exits[1][i]);
		if (!l0 && !l1)
			continue;
		seq_printf(m, "%s{\"isa\":\"%s\",\"code\":%llu,\"name\":\"%s\",\"handled_by_l0\":%llu,\"reflected_to_l1\":%llu}",
			   first ? "" : ",",
			   vmlat_exit_isa_name(vmlat_exit_slot_isa(i)),
			   vmlat_exit_slot_code(i), vmlat_exit_slot_name(i),
			   l0, l1);
		first = false;
	}
	seq_printf(m, "],\"undecoded\":{\"handled_by_l0\":%lld,\"reflected_to_l1\":%lld}",
		   atomic64_read(&vm->nested_undecoded[0]),
		   atomic64_read(&vm->nested_undecoded[1]));
}

/* The "sync" member of @vm: null if its guest never called. */
static void json_sync(struct seq_file *m, struct vmlat_vm *vm,
		      struct sync_view *v)
{
	if (!sync_view(vm, v)) {
		seq_puts(m, ",\"sync\":null");
		return;
	}
	seq_printf(m, ",\"sync\":{\"state\":\"%s\",\"exchanges\":%llu",
		   v->state, v->d.taken);
	if (!strcmp(v->state, "ok"))
		seq_printf(m, ",\"drift_ppb\":%lld,\"drift_min_ppb\":%lld,\"drift_max_ppb\":%lld,\"at_guest_ns\":%llu,\"host_ns\":%llu,\"host_min_ns\":%llu,\"host_max_ns\":%llu,\"offset_ns\":%lld,\"bound_ns\":%llu",
			   v->f.drift_ppb, v->f.drift_min_ppb, v->f.drift_max_ppb,
			   v->f.at_guest_ns, v->f.host_ns, v->f.host_min_ns,
			   v->f.host_max_ns, v->offset_ns, v->bound_ns);
	seq_printf(m, ",\"last_ns\":%llu,\"calls\":%llu,\"malformed\":%llu,\"replayed\":%llu,\"unpaired\":%llu,\"refused\":%llu,\"limited\":%llu,\"restarts\":%llu,\"exits\":%lld,\"exit_ns\":%lld}",
		   v->d.last_ns, v->d.calls, v->d.malformed, v->d.replayed,
		   v->d.unpaired, v->d.refused, v->d.limited, v->d.restarts,
		   atomic64_read(&vm->sync.exits),
		   atomic64_read(&vm->sync.exit_ns));
}

static void json_vm(struct seq_file *m, struct vmlat_vm *vm, u64 now,
		    struct vmlat_hist_snap *h, struct sync_view *sv)
{
	struct vmlat_preemptor p[VMLAT_TOP_PREEMPTORS];
	u64 t[VMLAT_NR_STATES], observed, exits, other, count;
	const struct vmlat_ahist *rh;
	struct vcpu_snap s;
	struct vmlat_vm *v;
	int i, n, nr;
	bool first;

	vm_totals(vm, now, t, &observed, &exits, &nr);
	seq_printf(m, "{\"pid\":%d,\"comm\":", vm->pid);
	json_str(m, vm->comm);
	seq_printf(m, ",\"exited\":%s,",
		   READ_ONCE(vm->exited) ? "true" : "false");
	json_states(m, observed, t, exits);

	seq_puts(m, ",\"vcpus\":[");
	for (first = true, i = 0; i < VMLAT_MAX_VCPUS; i++) {
		if (!vcpu_snapshot(&vmlat_vcpus[i], now, &s) || s.vm != vm)
			continue;
		seq_printf(m, "%s{\"vcpu\":%d,\"tid\":%d,\"state\":\"%s\",",
			   first ? "" : ",", s.idx, s.tid,
			   s.live ? vmlat_state_names[s.state] : "exited");
		json_states(m, s.observed_ns, s.time_ns, s.exits);
		seq_puts(m, "}");
		first = false;
	}

	seq_puts(m, "],\"exits\":[");
	for (first = true, i = 0; i < VMLAT_EXIT_NR_SLOTS; i++) {
		count = atomic64_read(&vm->exit_count[i]);
		if (!count)
			continue;
		seq_printf(m, "%s{\"isa\":\"%s\",\"code\":%llu,\"name\":\"%s\",\"count\":%llu,\"total_ns\":%llu",
			   first ? "" : ",", vmlat_exit_isa_name(vmlat_exit_slot_isa(i)),
			   vmlat_exit_slot_code(i), vmlat_exit_slot_name(i),
			   count, (u64)atomic64_read(&vm->exit_ns[i]));
		rh = reason_hist(vm, i);
		if (rh) {
			seq_puts(m, ",\"histogram\":");
			json_hist(m, rh, h);
		}
		seq_puts(m, "}");
		first = false;
	}
	seq_printf(m, "],\"exits_undecoded\":%lld,\"histograms\":{",
		   atomic64_read(&vm->exit_undecoded));
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++) {
		seq_printf(m, "%s\"%s\":", i ? "," : "", vmlat_hist_kind_names[i]);
		json_hist(m, &vm->hist[i], h);
	}
	for (i = 0; i < VMLAT_NR_NESTED_HISTS; i++) {
		seq_printf(m, ",\"%s\":", vmlat_nested_hist_names[i]);
		json_hist(m, &vm->nested_hist[i], h);
	}
	seq_puts(m, "},\"nested\":{\"vcpus\":[");
	json_nested(m, vm, now);
	seq_puts(m, "}");
	json_sync(m, vm, sv);

	seq_puts(m, ",\"preemptors\":[");
	n = preemptors_sorted(vm, p, &other);
	for (i = 0; i < n; i++) {
		seq_printf(m, "%s{\"kind\":\"%s\",\"pid\":%d,\"comm\":",
			   i ? "," : "", preemptor_kinds[p[i].kind], p[i].pid);
		json_str(m, p[i].comm);
		seq_printf(m, ",\"vm\":%d,\"vcpu\":%d,\"stolen_ns\":%llu,\"slices\":%llu}",
			   p[i].vm_pid, p[i].vcpu, p[i].stolen_ns, p[i].slices);
	}
	seq_printf(m, "],\"preemptors_other_ns\":%llu,\"stolen_by\":{\"host\":%llu",
		   other, stolen_by(vm, 0));
	for_each_vm(v, i)
		seq_printf(m, ",\"%d\":%llu", v->pid, stolen_by(vm, 1 + i));
	seq_printf(m, "},\"steal\":{\"type1_ns\":%llu,\"type2_ns\":%llu}}",
		   t[VMLAT_PREEMPTED] + t[VMLAT_WAIT],
		   t[VMLAT_KERNEL] + t[VMLAT_USER]);
}

static int json_show(struct seq_file *m, void *unused)
{
	struct vmlat_hist_snap *h;
	u64 now = vmlat_now_ns();
	struct sync_view *sv;
	struct vmlat_vm *vm;
	bool first = true;
	int i;

	h = kmalloc(sizeof(*h), GFP_KERNEL);
	sv = kmalloc(sizeof(*sv), GFP_KERNEL);
	if (!h || !sv) {
		kfree(h);
		kfree(sv);
		return -ENOMEM;
	}
	seq_printf(m, "{\"version\":\"%s\",\"now_ns\":%llu,\"vms\":[",
		   VMLAT_VERSION, now);
	for_each_vm(vm, i) {
		if (!first)
			seq_puts(m, ",");
		json_vm(m, vm, now, h, sv);
		first = false;
	}
	seq_printf(m, "],\"dropped\":{\"vms\":%lld,\"vcpus\":%lld,\"victims\":%lld}}\n",
		   atomic64_read(&vmlat_stats.dropped_vms),
		   atomic64_read(&vmlat_stats.dropped_vcpus),
		   atomic64_read(&vmlat_stats.dropped_victims));
	kfree(h);
	kfree(sv);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(json);

/* ---- reset ------------------------------------------------------------ */

static ssize_t reset_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	unsigned int val;
	int err;

	err = kstrtouint_from_user(ubuf, count, 0, &val);
	if (err || val != 1) {
		pr_warn_ratelimited("reset: write 1 to zero the statistics\n");
		return -EINVAL;
	}
	vmlat_analyzer_reset();
	vmlat_report_reset();
	return count;
}

/* Reading says how to use it: "cat" of every file reads cleanly. */
static int reset_show(struct seq_file *m, void *unused)
{
	seq_puts(m, "# write 1 to reset: zero every statistic and forget the reports (VMs and vCPUs stay known)\n");
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(reset);

/**
 * vmlat_debugfs_tables_create() - create the analyzer's files in @dir
 * @dir:	/sys/kernel/debug/vmlat
 */
void vmlat_debugfs_tables_create(struct dentry *dir)
{
	debugfs_create_file("vms", 0444, dir, NULL, &vms_fops);
	debugfs_create_file("vcpus", 0444, dir, NULL, &vcpus_fops);
	debugfs_create_file("exits", 0444, dir, NULL, &exits_fops);
	debugfs_create_file("histograms", 0444, dir, NULL, &histograms_fops);
	debugfs_create_file("preemptors", 0444, dir, NULL, &preemptors_fops);
	debugfs_create_file("matrix", 0444, dir, NULL, &matrix_fops);
	debugfs_create_file("steal", 0444, dir, NULL, &steal_fops);
	debugfs_create_file("nested", 0444, dir, NULL, &nested_fops);
	debugfs_create_file("nested_exits", 0444, dir, NULL,
			    &nested_exits_fops);
	debugfs_create_file("sync", 0444, dir, NULL, &sync_fops);
	debugfs_create_file("json", 0444, dir, NULL, &json_fops);
	debugfs_create_file("reset", 0600, dir, NULL, &reset_fops);
	vmlat_report_debugfs_create(dir);
}

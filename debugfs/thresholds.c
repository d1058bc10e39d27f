// SPDX-License-Identifier: GPL-2.0
/*
 * The knobs and the "reports" file (threshold.h does the work):
 *   threshold_preempt_us, threshold_wait_us, threshold_exit_us,
 *   threshold_irq_us (0: off, up to 10 s), snapshot (swap|freeze|event), snapshot_interval_ms
 *   (1 ms .. 1 h), reset (write 1): 0600, one file per entry of the knob
 *   table (knobs.h), the same knobs as the module parameters of those
 *   names.
 *   reports: the latest reports, oldest first.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "debugfs.h"
#include "exit_codes.h"
#include "irq.h"
#include "knobs.h"
#include "threshold.h"
#include "view.h"

static const char *const vmlat_snap_names[] = {
	[VMLAT_SNAP_QUEUED]	= "queued",
	[VMLAT_SNAP_TAKEN]	= "taken",
	[VMLAT_SNAP_LIMITED]	= "limited",
	[VMLAT_SNAP_FAILED]	= "failed",
};

/* "pid comm" of a guest address space, as its guest names it; "- -". */
static void report_as_name(struct seq_file *m, pid_t vm_pid, u64 as)
{
	struct vmlat_view_as a = { .key = as };

	vmlat_view_as_name(vm_pid, &a);
	vmlat_seq_guest_process(m, a.tgid, a.comm, "- -");
}

static void report_show_one(struct seq_file *m, const struct vmlat_report *r)
{
	const char *reason = "-";
	char irq[24];
	int slot;

	if (r->kind == VMLAT_HIST_EXIT) {
		slot = r->isa ? vmlat_exit_slot(r->isa, r->exit_reason) :
			 VMLAT_SLOT_UNDECODED;
		reason = slot >= 0 ? vmlat_exit_slot_name(slot) : "undecoded";
	}
	/* An interrupt's: where it came from and where its vCPU was */
	if (r->kind == VMLAT_REPORT_IRQ) {
		snprintf(irq, sizeof(irq), "%s/%s",
			 r->isa < VMLAT_NR_IRQ_SOURCES ?
			 vmlat_irq_src_names[r->isa] : "-",
			 r->exit_reason < VMLAT_NR_IRQ_ATS ?
			 vmlat_irq_at_names[r->exit_reason] : "-");
		reason = irq;
	}
	seq_printf(m, "%-6llu %-7s %-7d ", r->seq,
		   vmlat_report_kind_names[r->kind], r->vm_pid);
	vmlat_seq_comm(m, r->vm_comm);
	seq_printf(m, " %-4d %-3d %-12llu %-16llu %-16llu %-20s %-7s %-7d ",
		   r->vcpu, r->cpu, r->duration_ns, r->start_ns, r->end_ns,
		   reason, vmlat_by_kind_names[r->by.kind], r->by.pid);
	vmlat_seq_comm(m, r->by.comm);
	seq_printf(m, " %-7d %-5d %-8s 0x%-12llx 0x%-12llx ", r->by.vm_pid,
		   r->by.vcpu, vmlat_snap_names[r->snap], r->as, r->by.as);
	report_as_name(m, r->vm_pid, r->as);
	seq_putc(m, ' ');
	report_as_name(m, r->by.vm_pid, r->by.as);
	seq_putc(m, '\n');
}

static int reports_show(struct seq_file *m, void *unused)
{
	struct vmlat_report *ring;
	u64 seq, taken, limited, failed, first;
	u64 i;

	ring = kmalloc_array(VMLAT_REPORTS, sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return -ENOMEM;
	vmlat_report_copy(ring, &seq, &taken, &limited, &failed);

	first = seq > VMLAT_REPORTS ? seq - VMLAT_REPORTS + 1 : 1;
	seq_printf(m, "# reports %llu (the last %d kept), snapshots taken %llu, rate-limited %llu, failed %llu\n",
		   seq, VMLAT_REPORTS, taken, limited, failed);
	seq_puts(m, "# seq kind vm_pid vm_comm vcpu cpu duration_ns start_ns end_ns exit_reason by by_pid by_comm by_vm_pid by_vcpu snapshot as by_as as_pid as_comm by_as_pid by_as_comm\n");
	for (i = first; i <= seq; i++)
		report_show_one(m, &ring[(i - 1) % VMLAT_REPORTS]);
	kfree(ring);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(reports);

/* One file per knob (knobs.h): what it reads, and a write sets it. */
static ssize_t knob_write(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	const struct vmlat_knob *k = file_inode(file)->i_private;
	char buf[VMLAT_KNOB_VALUE_MAX];
	const char *val = vmlat_knob_from_user(ubuf, count, buf, sizeof(buf));
	int err = PTR_ERR_OR_ZERO(val) ?: k->set(k, val);

	return err ?: count;
}

static int knob_show(struct seq_file *m, void *unused)
{
	const struct vmlat_knob *k = m->private;
	char buf[VMLAT_KNOB_VALUE_MAX];

	if (!k->show) {
		/* "cat" of every file reads cleanly: it says how to use it. */
		seq_puts(m, k->help);
		return 0;
	}
	k->show(k, buf, sizeof(buf));
	seq_puts(m, buf);
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(knob);

/**
 * vmlat_debugfs_reports_create() - the knobs and the "reports" file
 * @dir:	/sys/kernel/debug/vmlat
 */
void vmlat_debugfs_reports_create(struct dentry *dir)
{
	unsigned int i;

	/* debugfs keeps the pointer only; the table is never written. */
	for (i = 0; i < vmlat_nr_knobs; i++)
		debugfs_create_file(vmlat_knobs[i].name, 0600, dir,
				    (void *)&vmlat_knobs[i], &knob_fops);
	debugfs_create_file("reports", 0444, dir, NULL, &reports_fops);
}

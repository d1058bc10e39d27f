// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/vmlat/: what vmlat shows to users.
 *
 * status: one row per hook: whether it is attached, how often its probe
 * ran, and its confirmed prototype or why it is detached; then '#' lines
 * of name-value pairs: how full the bounded tables are, how the kernel
 * traces kvm_exit and what did not come in order, and the kernel variant
 * vmlat found (preemption model, width of SVM's exit code), and whether
 * BTF confirmed the layouts of KVM's private structs (layout.h). The format is
 * documented in Documentation/vmlat.rst; tests parse it, so columns and
 * names only ever get added at the end.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/utsname.h>

#include "clock.h"
#include "compat.h"
#include "debugfs.h"
#include "exit_late.h"
#include "layout.h"
#include "view.h"
#include "vmlat.h"

static struct dentry *vmlat_debugfs_dir;

static int status_show(struct seq_file *m, void *unused)
{
	struct vmlat_view_tables t;
	struct vmlat_hook_state st;
	struct vmlat_view_order o;
	char hook[48];
	int id;

	seq_printf(m, "# vmlat %s on %s\n", VMLAT_VERSION, init_utsname()->release);
	seq_printf(m, "# %-30s %-9s %-20s %s\n", "hook", "state", "hits", "detail");
	for (id = 0; id < VMLAT_NR_HOOKS; id++) {
		vmlat_hooks_get_state(id, &st);
		snprintf(hook, sizeof(hook), "%s:%s", vmlat_hook_descs[id].system,
			 vmlat_hook_descs[id].name);
		seq_printf(m, "%-32s %-9s %-20llu %s\n", hook,
			   st.attached ? "attached" : "detached", st.hits,
			   st.detail);
	}
	vmlat_view_tables(&t);
	seq_printf(m, "# tables: vms_live %u vms_exited %u vms_max %u vcpus_live %u vcpus_exited %u vcpus_max %u tasks %u tasks_untracked %u tasks_max %u probe_max %u task_slots %u\n",
		   t.vms_live, t.vms_exited, t.vms_max, t.vcpus_live,
		   t.vcpus_exited, t.vcpus_max, t.tasks, t.tasks_untracked,
		   t.tasks_max, t.probe_max, t.task_slots);
	seq_printf(m, "# memory: bytes %zu tables %zu vms %lu vm_bytes %zu vcpus %lu vcpu_bytes %zu blocks %lu block_bytes %zu pooled %zu missed %llu\n",
		   t.bytes, t.tables_bytes, t.vms, t.vm_bytes, t.vcpus,
		   t.vcpu_bytes, t.blocks, t.block_bytes, t.pooled_bytes,
		   t.missed);
	vmlat_view_order_sum(&o);
	seq_printf(m, "# exit_trace %s unexpected %llu late_exits %llu late_switched %llu late_ns %llu exit_time_unread %llu\n",
		   vmlat_exit_trace_names[vmlat_exit_trace_mode()],
		   o.unexpected, o.late_exits, o.late_switched, o.late_ns,
		   vmlat_exit_time_unread());
	seq_printf(m, "# kernel: preempt %s svm_exit_code_bits %u clock %s\n",
		   vmlat_preempt_model(), vmlat_view_svm_exit_code_bits(),
		   vmlat_clock_name());
	vmlat_layout_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(status);

/**
 * vmlat_debugfs_init() - create /sys/kernel/debug/vmlat/
 *
 * Context: process context, may sleep.
 * Return: 0, or -ENODEV if debugfs is not available.
 */
int vmlat_debugfs_init(void)
{
	struct dentry *dir;

	dir = debugfs_create_dir("vmlat", NULL);
	if (IS_ERR(dir)) {
		pr_err("debugfs is not available (error %ld): build with CONFIG_DEBUG_FS=y and boot without debugfs=off\n",
		       PTR_ERR(dir));
		return -ENODEV;
	}
	vmlat_debugfs_dir = dir;
	debugfs_create_file("status", 0444, dir, NULL, &status_fops);
	vmlat_debugfs_tables_create(dir);
	vmlat_debugfs_reports_create(dir);
	return 0;
}

/**
 * vmlat_debugfs_exit() - remove /sys/kernel/debug/vmlat/
 *
 * Waits for readers to leave the files.
 *
 * Context: process context, may sleep.
 */
void vmlat_debugfs_exit(void)
{
	debugfs_remove(vmlat_debugfs_dir);
	vmlat_debugfs_dir = NULL;
}

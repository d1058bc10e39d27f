/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /sys/kernel/debug/vmlat/: the files, by who creates them, and what their
 * printers share (format.c). Everything here reads vmlat through view.h
 * and threshold.h only.
 */
#ifndef _VMLAT_DEBUGFS_H
#define _VMLAT_DEBUGFS_H

#include <linux/types.h>

struct dentry;
struct seq_file;

int vmlat_debugfs_init(void);
void vmlat_debugfs_exit(void);
void vmlat_debugfs_tables_create(struct dentry *dir);
void vmlat_debugfs_reports_create(struct dentry *dir);

void vmlat_seq_comm(struct seq_file *m, const char *comm);
void vmlat_seq_guest_process(struct seq_file *m, u32 tgid, const char *comm,
			     const char *unnamed);
void vmlat_seq_json_str(struct seq_file *m, const char *comm);
const char *vmlat_knob_from_user(const char __user *ubuf, size_t count,
				 char *buf, size_t size);

#endif /* _VMLAT_DEBUGFS_H */

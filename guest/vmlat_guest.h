/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of vmlat_guest.ko share: the clock-sync and name calls
 * (vmlat_guest.c), and the guest's own steal (steal.c).
 */
#ifndef _VMLAT_GUEST_H
#define _VMLAT_GUEST_H

#include <linux/types.h>

struct dentry;
struct seq_file;

const char *vmlat_guest_steal_accounting(void);
/* Why this guest makes no hypercalls at all, or NULL. */
const char *vmlat_guest_no_calls(void);

void vmlat_guest_steal_create(struct dentry *dir);
void vmlat_guest_steal_show_status(struct seq_file *m);
void vmlat_guest_steal_stop(void);

#endif /* _VMLAT_GUEST_H */

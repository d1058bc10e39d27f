/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The knobs (thresholds, snapshot mode and interval, reset): one table
 * of each one's parse, check, message and effect, served alike through
 * its two ways in: the module parameter (knobs.c) and the debugfs file
 * (debugfs/thresholds.c) of the same name. Debugfs refuses files writable
 * by anyone under lockdown; module parameters stay writable there, and
 * can be given at load time.
 */
#ifndef _VMLAT_KNOBS_H
#define _VMLAT_KNOBS_H

#include <linux/types.h>

#include "types.h"

/**
 * struct vmlat_knob - one knob, the same as a module parameter and as a
 * debugfs file of its name
 * @name:	the parameter's and the file's name
 * @set:	parse, check and apply a value: 0; -EINVAL (with a message
 *		saying what is allowed), -EOPNOTSUPP or -ENODEV, nothing
 *		changed. Context: process context.
 * @show:	print the value and a newline into @buf (@size bytes);
 *		NULL for a knob that is only written
 * @help:	what its debugfs file reads when it has no @show
 * @kind:	what a threshold is of (enum vmlat_hist_kind, or
 *		VMLAT_REPORT_IRQ)
 */
struct vmlat_knob {
	const char *name;
	int (*set)(const struct vmlat_knob *k, const char *val);
	int (*show)(const struct vmlat_knob *k, char *buf, size_t size);
	const char *help;
	unsigned int kind;
};

/*
 * The longest value a knob takes or shows, its newline and NUL included:
 * guest_steal's 16 pids.
 */
#define VMLAT_KNOB_VALUE_MAX	192

/* Every knob, in the order their debugfs files are made. */
extern const struct vmlat_knob vmlat_knobs[];
extern const unsigned int vmlat_nr_knobs;

int vmlat_knobs_init(void);
void vmlat_knobs_exit(void);

#endif /* _VMLAT_KNOBS_H */

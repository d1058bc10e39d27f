/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The knobs (thresholds, snapshot mode and interval, reset): each one's
 * parse, check, message and effect, shared by its two ways in: the debugfs
 * file and the module parameter of the same name (knobs.c). Debugfs
 * refuses files writable by anyone under lockdown; module parameters stay
 * writable there, and can be given at load time.
 */
#ifndef _VMLAT_KNOBS_H
#define _VMLAT_KNOBS_H

#include "types.h"

int vmlat_knob_threshold(enum vmlat_hist_kind kind, const char *val);
int vmlat_knob_snapshot(const char *val);
int vmlat_knob_interval(const char *val);
int vmlat_knob_reset(const char *val);

int vmlat_knobs_init(void);
void vmlat_knobs_exit(void);

#endif /* _VMLAT_KNOBS_H */

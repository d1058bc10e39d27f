/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An ftrace oracle in a private tracefs instance, so the events vmlat
 * counts can be counted independently in the same run.
 *
 * All functions that can fail return 0 or a negative errno.
 */
#ifndef VMLAT_KSFT_FTRACE_H
#define VMLAT_KSFT_FTRACE_H

#include <stdint.h>

#define VMLAT_FTRACE_MAX_EVENTS	8

/**
 * struct vmlat_ftrace - a private tracefs instance
 * @dir:       instance directory (empty when not created)
 * @nr_events: number of entries used in @events
 * @events:    enabled events as "system:name"
 */
struct vmlat_ftrace {
	char dir[256];
	int nr_events;
	char events[VMLAT_FTRACE_MAX_EVENTS][64];
};

const char *vmlat_tracefs_root(void);
int vmlat_tracefs_event_exists(const char *event);
int vmlat_tracefs_event_has_field(const char *event, const char *field);
int vmlat_ftrace_open(struct vmlat_ftrace *ft, unsigned int buffer_size_kb);
int vmlat_ftrace_enable(struct vmlat_ftrace *ft, const char *event);
int vmlat_ftrace_start(struct vmlat_ftrace *ft);
int vmlat_ftrace_stop(struct vmlat_ftrace *ft);
int vmlat_ftrace_lost(struct vmlat_ftrace *ft, uint64_t *lost,
		      uint64_t *entries);
int vmlat_ftrace_count(struct vmlat_ftrace *ft, uint64_t *counts,
		       uint64_t *total);
void vmlat_ftrace_close(struct vmlat_ftrace *ft);

#endif /* VMLAT_KSFT_FTRACE_H */

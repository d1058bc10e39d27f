/* SPDX-License-Identifier: GPL-2.0 */
/* Placeholder of the space-saving top-k (replaced by the core-tests branch). */
#ifndef _VMLAT_TOPK_H
#define _VMLAT_TOPK_H

#include "pure.h"

#define VMLAT_TOPK_SLOTS 8

struct vmlat_topk_slot {
	u64 key;
	u64 value;
	u64 weight;
	u64 hits;
};

struct vmlat_topk {
	u64 other;
	struct vmlat_topk_slot slot[VMLAT_TOPK_SLOTS];
};

void vmlat_topk_init(struct vmlat_topk *t);
unsigned int vmlat_topk_add(struct vmlat_topk *t, u64 key, u64 value,
			    bool *fresh);
unsigned int vmlat_topk_rank(const struct vmlat_topk *t,
			     u8 idx[VMLAT_TOPK_SLOTS]);

#endif /* _VMLAT_TOPK_H */

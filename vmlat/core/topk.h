/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bounded top-k by the "space-saving" scheme (pure logic).
 *
 * vmlat keeps, per VM, who stole the most time from its vCPUs in a table
 * of VMLAT_TOPK_SLOTS slots: a key (the preemptor) and the value charged
 * to it. A key without a slot takes a free one, or else the slot of least
 * weight: that slot's value goes to @other, and the newcomer inherits its
 * weight. A slot's weight is its value plus what it inherited, and
 * weights only grow, so keys that take turns cannot keep evicting each
 * other while older small slots stay.
 *
 * What that guarantees (Metwally et al., "Efficient computation of
 * frequent and top-k elements in data streams", 2005), with T the total
 * charged so far:
 *
 *	- the weights add up to T, so the least weight is at most
 *	  T / VMLAT_TOPK_SLOTS;
 *	- a key without a slot was charged at most the least weight in all;
 *	- hence any key charged more than T / VMLAT_TOPK_SLOTS has a slot;
 *	- a slot's value is exact since the key took it, and value <= what
 *	  the key was charged in all <= weight;
 *	- @other plus the values of the slots is T.
 *
 * With fewer keys than slots, nothing is ever evicted: every value is
 * exact.
 */
#ifndef _VMLAT_TOPK_H
#define _VMLAT_TOPK_H

#include "pure.h"

#define VMLAT_TOPK_SLOTS	8

/**
 * struct vmlat_topk_slot - one key's slot
 * @key:	the key (any value, 0 included)
 * @value:	charged to @key since it took this slot
 * @weight:	@value plus the weight this slot had when @key took it over:
 *		what decides which slot the next newcomer takes
 * @hits:	how many times @key was charged here; 0: the slot is free
 */
struct vmlat_topk_slot {
	u64 key;
	u64 value;
	u64 weight;
	u64 hits;
};

/**
 * struct vmlat_topk - a bounded top-k table
 * @other:	the values of the slots taken over
 * @slot:	the slots; a slot once used is never free again
 */
struct vmlat_topk {
	u64 other;
	struct vmlat_topk_slot slot[VMLAT_TOPK_SLOTS];
};

void vmlat_topk_init(struct vmlat_topk *t);
unsigned int vmlat_topk_add(struct vmlat_topk *t, u64 key, u64 value,
			    bool *fresh);
unsigned int vmlat_topk_rank(const struct vmlat_topk *t,
			     u8 idx[VMLAT_TOPK_SLOTS]);

/* The same on tables of other sizes (aspace.h): an array of slots. */
unsigned int vmlat_topk_add_in(struct vmlat_topk_slot *slots, unsigned int n,
			       u64 *other, u64 key, u64 value, bool *fresh);
int vmlat_topk_find_in(const struct vmlat_topk_slot *slots, unsigned int n,
		       u64 key);
unsigned int vmlat_topk_rank_in(const struct vmlat_topk_slot *slots,
				unsigned int n, u8 *idx);

#endif /* _VMLAT_TOPK_H */

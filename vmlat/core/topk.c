// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded top-k by the "space-saving" scheme (pure logic, see topk.h).
 */
#include "topk.h"

/**
 * vmlat_topk_init() - empty a table
 * @t:	the table
 *
 * Context: any context; the caller serialises access to @t.
 */
void vmlat_topk_init(struct vmlat_topk *t)
{
	memset(t, 0, sizeof(*t));
}

/**
 * vmlat_topk_add() - charge a value to a key
 * @t:		the table
 * @key:	the key
 * @value:	what to charge (0 too: it still counts as a hit)
 * @fresh:	set true when @key did not have the slot before (it was
 *		free or taken over), false when it had
 *
 * The slot is @key's own if it has one; else the first free slot; else
 * the first slot of strictly least weight, whose value goes to @t->other
 * and whose weight @key inherits. Then @value is added to the slot's
 * value and weight, and its hits count one more.
 *
 * When *@fresh is true, the caller fills its own data for the slot (a
 * task name, say) at the returned index.
 *
 * Context: any context; the caller serialises access to @t.
 * Return: the index of @key's slot, < VMLAT_TOPK_SLOTS.
 */
unsigned int vmlat_topk_add(struct vmlat_topk *t, u64 key, u64 value,
			    bool *fresh)
{
	struct vmlat_topk_slot *p, *empty = NULL, *least = NULL;
	u64 inherit;
	unsigned int i;

	for (i = 0; i < VMLAT_TOPK_SLOTS; i++) {
		p = &t->slot[i];
		if (!p->hits) {
			empty = empty ?: p;
			continue;
		}
		if (p->key == key) {
			*fresh = false;
			goto found;
		}
		if (!least || p->weight < least->weight)
			least = p;
	}
	inherit = 0;
	if (!empty) {
		/*
		 * Table full: the newcomer replaces the slot of least weight,
		 * whose value goes to "other", and inherits its weight.
		 * Weights only grow, so keys that take turns cannot keep
		 * evicting each other while older small slots stay: any key
		 * with more than 1/VMLAT_TOPK_SLOTS of the total keeps a
		 * slot. The values shown stay exact: what the slot was
		 * charged.
		 */
		t->other += least->value;
		inherit = least->weight;
		empty = least;
	}
	p = empty;
	p->key = key;
	p->value = 0;
	p->weight = inherit;
	p->hits = 0;
	*fresh = true;
found:
	p->value += value;
	p->weight += value;
	p->hits++;
	return p - t->slot;
}

/**
 * vmlat_topk_rank() - the used slots, most value first
 * @t:		the table
 * @idx:	set to the indexes of the used slots, in order of value,
 *		largest first; equal values in order of index
 *
 * Context: any context; the caller serialises access to @t.
 * Return: the number of used slots, the first ones of @idx.
 */
unsigned int vmlat_topk_rank(const struct vmlat_topk *t,
			     u8 idx[VMLAT_TOPK_SLOTS])
{
	unsigned int i, j, n = 0;

	/* Insertion sort: stable, and the table is small. */
	for (i = 0; i < VMLAT_TOPK_SLOTS; i++) {
		u64 v = t->slot[i].value;

		if (!t->slot[i].hits)
			continue;
		for (j = n; j > 0 && t->slot[idx[j - 1]].value < v; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
		n++;
	}
	return n;
}

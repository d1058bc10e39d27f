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
	return vmlat_topk_add_in(t->slot, VMLAT_TOPK_SLOTS, &t->other, key,
				 value, fresh);
}

/**
 * vmlat_topk_add_in() - vmlat_topk_add() on a table of any size
 * @slots:	the table's slots
 * @n:		how many, at most 256
 * @other:	its "other"
 * @key:	as vmlat_topk_add()
 * @value:	as vmlat_topk_add()
 * @fresh:	as vmlat_topk_add()
 *
 * Context: any context; the caller serialises access to the table.
 * Return: the index of @key's slot, < @n.
 */
unsigned int vmlat_topk_add_in(struct vmlat_topk_slot *slots, unsigned int n,
			       u64 *other, u64 key, u64 value, bool *fresh)
{
	struct vmlat_topk_slot *p, *empty = NULL, *least = NULL;
	u64 inherit;
	unsigned int i;

	for (i = 0; i < n; i++) {
		p = &slots[i];
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
		*other += least->value;
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
	return p - slots;
}

/**
 * vmlat_topk_find_in() - the slot of a key in a table of any size
 * @slots:	the table's slots
 * @n:		how many
 * @key:	the key
 *
 * Context: any context; the caller serialises access to the table.
 * Return: the index of @key's slot, or -1 if it has none.
 */
int vmlat_topk_find_in(const struct vmlat_topk_slot *slots, unsigned int n,
		       u64 key)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (slots[i].hits && slots[i].key == key)
			return i;
	return -1;
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
	return vmlat_topk_rank_in(t->slot, VMLAT_TOPK_SLOTS, idx);
}

/**
 * vmlat_topk_rank_in() - vmlat_topk_rank() on a table of any size
 * @slots:	the table's slots
 * @n:		how many, at most 256
 * @idx:	@n entries, set as by vmlat_topk_rank()
 *
 * Context: any context; the caller serialises access to the table.
 * Return: the number of used slots, the first ones of @idx.
 */
unsigned int vmlat_topk_rank_in(const struct vmlat_topk_slot *slots,
				unsigned int n, u8 *idx)
{
	unsigned int i, j, used = 0;

	/* Insertion sort: stable, and the tables are small. */
	for (i = 0; i < n; i++) {
		u64 v = slots[i].value;

		if (!slots[i].hits)
			continue;
		for (j = used; j > 0 && slots[idx[j - 1]].value < v; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
		used++;
	}
	return used;
}

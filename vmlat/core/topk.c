// SPDX-License-Identifier: GPL-2.0
/* Placeholder of the space-saving top-k (replaced by the core-tests branch). */
#include "topk.h"

void vmlat_topk_init(struct vmlat_topk *t)
{
	memset(t, 0, sizeof(*t));
}

unsigned int vmlat_topk_add(struct vmlat_topk *t, u64 key, u64 value,
			    bool *fresh)
{
	struct vmlat_topk_slot *s, *free = NULL, *least = NULL;
	u64 inherit = 0;
	unsigned int i;

	for (i = 0; i < VMLAT_TOPK_SLOTS; i++) {
		s = &t->slot[i];
		if (!s->hits) {
			free = free ?: s;
			continue;
		}
		if (s->key == key) {
			*fresh = false;
			goto found;
		}
		if (!least || s->weight < least->weight)
			least = s;
	}
	if (!free) {
		t->other += least->value;
		inherit = least->weight;
		free = least;
	}
	s = free;
	s->key = key;
	s->value = 0;
	s->hits = 0;
	s->weight = inherit;
	*fresh = true;
found:
	s->value += value;
	s->weight += value;
	s->hits++;
	return s - t->slot;
}

unsigned int vmlat_topk_rank(const struct vmlat_topk *t,
			     u8 idx[VMLAT_TOPK_SLOTS])
{
	unsigned int i, j, n = 0;
	u8 x;

	for (i = 0; i < VMLAT_TOPK_SLOTS; i++)
		if (t->slot[i].hits)
			idx[n++] = i;
	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && t->slot[idx[j]].value >
				     t->slot[idx[j - 1]].value; j--) {
			x = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = x;
		}
	}
	return n;
}

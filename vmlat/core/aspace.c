// SPDX-License-Identifier: GPL-2.0
/*
 * Guest address spaces (pure logic, see aspace.h).
 */
#include "aspace.h"

/* The sum of @t's times: an address space's weight in its table. */
u64 vmlat_as_total(const struct vmlat_as_times *t)
{
	u64 sum = 0;
	int i;

	for (i = 0; i < VMLAT_NR_AS_TIMES; i++)
		sum += t->ns[i];
	return sum;
}

/**
 * vmlat_as_cursor_init() - a cursor with no address space yet
 * @c:	the cursor
 *
 * Also what a reset does: the vCPU's times start again from 0.
 */
void vmlat_as_cursor_init(struct vmlat_as_cursor *c)
{
	memset(c, 0, sizeof(*c));
	c->key = VMLAT_AS_NONE;
}

/* @now - @base, each time; 0 where @now is behind (after a reset). */
static void vmlat_as_diff(const struct vmlat_as_times *now,
			  const struct vmlat_as_times *base,
			  struct vmlat_as_times *d)
{
	int i;

	for (i = 0; i < VMLAT_NR_AS_TIMES; i++)
		d->ns[i] = now->ns[i] > base->ns[i] ?
			   now->ns[i] - base->ns[i] : 0;
}

/**
 * vmlat_as_cursor_stretch() - the stretch in progress
 * @c:		a vCPU's cursor
 * @now:	the vCPU's times now
 * @s:		set to what @c's address space got since it began
 *		(@s->key is VMLAT_AS_NONE if @c has none)
 */
void vmlat_as_cursor_stretch(const struct vmlat_as_cursor *c,
			     const struct vmlat_as_times *now,
			     struct vmlat_as_stretch *s)
{
	s->key = c->key;
	s->user = c->user;
	vmlat_as_diff(now, &c->base, &s->t);
}

/**
 * vmlat_as_cursor_move() - a vCPU was found running address space @key
 * @c:		its cursor
 * @key:	the address space read at an exit
 * @now:	the vCPU's times up to the guest interval this exit ends
 *		(which goes to @key)
 * @s:		set to the stretch that ended, if it returns true
 *
 * Return: true if @key is another address space than @c's and @c had one:
 * @s is the old one's stretch, for its VM's table. @c then counts from
 * @now for @key, not yet seen at CPL 3.
 */
bool vmlat_as_cursor_move(struct vmlat_as_cursor *c, u64 key,
			  const struct vmlat_as_times *now,
			  struct vmlat_as_stretch *s)
{
	bool had = c->key != VMLAT_AS_NONE;

	if (key == c->key)
		return false;
	if (had)
		vmlat_as_cursor_stretch(c, now, s);
	c->key = key;
	c->base = *now;
	c->user = false;
	return had;
}

/**
 * vmlat_as_table_init() - an empty table
 * @t:	the table
 */
void vmlat_as_table_init(struct vmlat_as_table *t)
{
	memset(t, 0, sizeof(*t));
}

static void vmlat_as_row_add(struct vmlat_as_row *r,
			     const struct vmlat_as_times *t, u64 slices,
			     bool user)
{
	int i;

	for (i = 0; i < VMLAT_NR_AS_TIMES; i++)
		r->t.ns[i] += t->ns[i];
	r->slices += slices;
	r->user |= user;
}

/**
 * vmlat_as_row_merge() - add a stretch to a row
 * @r:		the row
 * @s:		the stretch
 *
 * For readers: a stretch in progress counts as one more slice.
 */
void vmlat_as_row_merge(struct vmlat_as_row *r,
			const struct vmlat_as_stretch *s)
{
	vmlat_as_row_add(r, &s->t, 1, s->user);
}

/**
 * vmlat_as_table_add() - add a stretch that ended to its row
 * @t:		the VM's table
 * @s:		the stretch
 *
 * An address space without a row takes a free one, or else the row of
 * least weight, whose times go to @t->other (topk.h's rule).
 *
 * Context: the caller serialises access to @t.
 * Return: the row's index.
 */
unsigned int vmlat_as_table_add(struct vmlat_as_table *t,
				const struct vmlat_as_stretch *s)
{
	struct vmlat_as_row *r;
	unsigned int i;
	bool fresh;

	i = vmlat_topk_add_in(t->slot, VMLAT_AS_SLOTS, &t->other_weight,
			      s->key, vmlat_as_total(&s->t), &fresh);
	r = &t->row[i];
	if (fresh) {
		/*
		 * Taken over, not free (every stretch added counts a slice):
		 * its times go to "other".
		 */
		if (r->slices) {
			vmlat_as_row_add(&t->other, &r->t, r->slices, r->user);
			t->evicted++;
		}
		memset(r, 0, sizeof(*r));
	}
	vmlat_as_row_add(r, &s->t, 1, s->user);
	return i;
}

/**
 * vmlat_as_table_rank() - the used rows, most time first
 * @t:		the table
 * @idx:	set to their indexes
 *
 * Return: how many rows are used: the first ones of @idx.
 */
unsigned int vmlat_as_table_rank(const struct vmlat_as_table *t,
				 u8 idx[VMLAT_AS_SLOTS])
{
	return vmlat_topk_rank_in(t->slot, VMLAT_AS_SLOTS, idx);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Guest address spaces (pure logic, see aspace.h).
 */
#include "aspace.h"
#include "exit_codes.h"
#include "vmlat_hypercall.h"

static_assert(VMLAT_EXIT_NR_SLOTS < 0xffff, "an exit slot + 1 fits a u16");

/**
 * vmlat_as_reasons_add() - add exits of one reason to a list
 * @r:		the list
 * @slot1:	the reason's exit slot + 1
 * @ns:		their handling time
 * @count:	how many
 *
 * To its entry, or a free one, or else the entry of least weight (its
 * time and count to "other"), whose weight it inherits (aspace.h).
 */
void vmlat_as_reasons_add(struct vmlat_as_reasons *r, u16 slot1, u64 ns,
			  u64 count)
{
	int i, least = 0;

	for (i = 0; i < VMLAT_AS_REASONS; i++) {
		if (r->slot[i] == slot1 || !r->slot[i])
			break;
		if (r->weight[i] < r->weight[least])
			least = i;
	}
	if (i == VMLAT_AS_REASONS) {
		i = least;
		r->other_ns += r->ns[i];
		r->other_count += r->count[i];
		r->ns[i] = 0;
		r->count[i] = 0;
	} else if (!r->slot[i]) {
		r->weight[i] = 0;
	}
	r->slot[i] = slot1;
	r->ns[i] += ns;
	r->count[i] += count;
	r->weight[i] += ns;
}

/**
 * vmlat_as_reasons_merge() - add a list to another
 * @to:		the list added to
 * @from:	the list added
 */
void vmlat_as_reasons_merge(struct vmlat_as_reasons *to,
			    const struct vmlat_as_reasons *from)
{
	int i;

	for (i = 0; i < VMLAT_AS_REASONS; i++)
		if (from->slot[i])
			vmlat_as_reasons_add(to, from->slot[i], from->ns[i],
					     from->count[i]);
	to->other_ns += from->other_ns;
	to->other_count += from->other_count;
}

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
	s->reasons = c->reasons;
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
	memset(&c->reasons, 0, sizeof(c->reasons));
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
			     const struct vmlat_as_times *t,
			     const struct vmlat_as_reasons *reasons,
			     u64 slices, bool user)
{
	int i;

	for (i = 0; i < VMLAT_NR_AS_TIMES; i++)
		r->t.ns[i] += t->ns[i];
	vmlat_as_reasons_merge(&r->reasons, reasons);
	r->slices += slices;
	r->user |= user;
}

/**
 * vmlat_as_table_find() - the row of an address space
 * @t:		a table
 * @key:	the address space
 *
 * Return: its row's index, or -1 if it has none.
 */
int vmlat_as_table_find(const struct vmlat_as_table *t, u64 key)
{
	return vmlat_topk_find_in(t->slot, VMLAT_AS_SLOTS, key);
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
	vmlat_as_row_add(r, &s->t, &s->reasons, 1, s->user);
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
			vmlat_as_row_add(&t->other, &r->t, &r->reasons,
					 r->slices, r->user);
			t->evicted++;
		}
		memset(r, 0, sizeof(*r));
	}
	vmlat_as_row_add(r, &s->t, &s->reasons, 1, s->user);
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

/* ---- names ---------------------------------------------------------- */

#define NAME_COST_NS	VMLAT_BUCKET_COST_NS(VMLAT_HC_NAME_RATE)
#define NAME_BURST_NS	(VMLAT_HC_NAME_BURST * NAME_COST_NS)
/* RCX: the root's address bits, and the flag. */
#define NAME_ROOT_BITS	(VMLAT_AS_ADDR_MASK | VMLAT_HC_NAME_NEW)

/**
 * vmlat_as_name_gate_init() - a full rate budget, no calls
 * @g:	a VM's gate
 */
void vmlat_as_name_gate_init(struct vmlat_as_name_gate *g)
{
	memset(g, 0, sizeof(*g));
	vmlat_bucket_init(&g->rate, NAME_BURST_NS);
}

/**
 * vmlat_as_name_gate_clear_stats() - zero the counters, keep the budget
 * @g:	a VM's gate
 */
void vmlat_as_name_gate_clear_stats(struct vmlat_as_name_gate *g)
{
	g->calls = 0;
	g->user = 0;
	g->taken = 0;
	g->limited = 0;
	g->malformed = 0;
}

/**
 * vmlat_as_names_init() - no names
 * @n:	a VM's names
 */
void vmlat_as_names_init(struct vmlat_as_names *n)
{
	memset(n, 0, sizeof(*n));
}

/**
 * vmlat_as_names_clear_stats() - zero the counters, keep the names
 * @n:	a VM's names
 */
void vmlat_as_names_clear_stats(struct vmlat_as_names *n)
{
	n->dropped = 0;
	n->ended = 0;
}

/**
 * vmlat_as_names_stats() - a VM's name counters, from its gate and names
 * @g:	the gate (a copy)
 * @n:	the names
 * @st:	set to the counters
 */
void vmlat_as_names_stats(const struct vmlat_as_name_gate *g,
			  const struct vmlat_as_names *n,
			  struct vmlat_as_names_stats *st)
{
	st->calls = g->calls;
	st->user = g->user;
	st->limited = g->limited;
	st->malformed = g->malformed;
	st->taken = g->taken;
	st->dropped = n->dropped;
	st->ended = n->ended;
}

static unsigned int name_set(u64 key)
{
	/* Keys are 8 KiB apart under KPTI; ended ones differ in 52..63. */
	return ((key >> 13) ^ (key >> 21) ^ (key >> VMLAT_AS_GEN_SHIFT)) %
	       VMLAT_AS_NAME_SETS;
}

static struct vmlat_as_name *name_slot(struct vmlat_as_names *n, u64 key)
{
	struct vmlat_as_name *w = n->set[name_set(key)];
	int i;

	for (i = 0; i < VMLAT_AS_NAME_WAYS; i++)
		if (w[i].key == key)
			return &w[i];
	return NULL;
}

/**
 * vmlat_as_name_find() - the name of an address space
 * @n:		a VM's names
 * @key:	its key
 *
 * Return: its name, or NULL if the guest gave none (or it was dropped).
 */
const struct vmlat_as_name *vmlat_as_name_find(const struct vmlat_as_names *n,
					       u64 key)
{
	return key ? name_slot((struct vmlat_as_names *)n, key) : NULL;
}

/**
 * vmlat_as_names_count() - how many names the cache holds
 * @n:	a VM's names
 */
unsigned int vmlat_as_names_count(const struct vmlat_as_names *n)
{
	unsigned int i, j, c = 0;

	for (i = 0; i < VMLAT_AS_NAME_SETS; i++)
		for (j = 0; j < VMLAT_AS_NAME_WAYS; j++)
			c += !!n->set[i][j].key;
	return c;
}

/*
 * The place for a new name of @key: its own, a free one, or the oldest of
 * its set that names no row of @t (the oldest of all if each one does).
 */
static struct vmlat_as_name *name_place(struct vmlat_as_names *n,
					const struct vmlat_as_table *t,
					u64 key)
{
	struct vmlat_as_name *w = n->set[name_set(key)];
	struct vmlat_as_name *old = NULL, *oldest = &w[0];
	int i;

	for (i = 0; i < VMLAT_AS_NAME_WAYS; i++)
		if (w[i].key == key)
			return &w[i];
	for (i = 0; i < VMLAT_AS_NAME_WAYS; i++)
		if (!w[i].key)
			return &w[i];
	for (i = 0; i < VMLAT_AS_NAME_WAYS; i++) {
		if (w[i].stamp < oldest->stamp)
			oldest = &w[i];
		if (vmlat_as_table_find(t, w[i].key) < 0 &&
		    (!old || w[i].stamp < old->stamp))
			old = &w[i];
	}
	n->dropped++;
	return old ?: oldest;
}

/*
 * The process that had @key exited: its row and its name move to a key
 * of their own, with a generation no row has.
 */
static void name_end(struct vmlat_as_names *n, struct vmlat_as_table *t,
		     u64 key, struct vmlat_as_name *name)
{
	struct vmlat_as_name keep, *to, *stale;
	int row = vmlat_as_table_find(t, key);
	u64 ended;
	int i;

	/* 16 rows: one of 17 generations is free. */
	for (i = 0; i <= VMLAT_AS_SLOTS; i++) {
		n->gen = n->gen % ((1U << (64 - VMLAT_AS_GEN_SHIFT)) - 1) + 1;
		ended = key | ((u64)n->gen << VMLAT_AS_GEN_SHIFT);
		if (vmlat_as_table_find(t, ended) < 0)
			break;
	}
	n->ended++;
	/* A name left at that key (its row long gone, the generations wrapped) */
	stale = name_slot(n, ended);
	if (stale)
		stale->key = 0;
	if (row >= 0)
		t->slot[row].key = ended;
	if (!name)
		return;
	keep = *name;
	name->key = 0;
	if (row < 0)
		return;		/* no time of its own: no need of a name */
	to = name_place(n, t, ended);
	*to = keep;
	to->key = ended;
}

/**
 * vmlat_as_name_gate() - a name hypercall of the VM's guest, checked
 * @g:		the VM's gate
 * @a:		the call
 * @now:	the host time of the call
 *
 * Context: the caller serialises access to @g.
 * Return: the reply for the guest's RBX, VMLAT_HC_REPLY(call, 0): TAKEN
 * if the call is to be set (vmlat_as_name_set()), LIMITED or MALFORMED if
 * not; 0 for none (a call from another ring than 0).
 */
u64 vmlat_as_name_gate(struct vmlat_as_name_gate *g,
		       const struct vmlat_as_name_args *a, u64 now)
{
	g->calls++;
	if (a->cpl != 0) {
		g->user++;
		return 0;
	}
	/* The root's key is never 0: that is a free place in the cache. */
	if ((a->root & ~NAME_ROOT_BITS) || !vmlat_as_key(a->root, true) ||
	    !a->tgid || a->tgid > 0xffffffffULL) {
		g->malformed++;
		return VMLAT_HC_REPLY(VMLAT_HC_CALL_MALFORMED, 0);
	}
	if (!vmlat_bucket_take(&g->rate, now, NAME_COST_NS, NAME_BURST_NS)) {
		g->limited++;
		return VMLAT_HC_REPLY(VMLAT_HC_CALL_LIMITED, 0);
	}
	g->taken++;
	return VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0);
}

/**
 * vmlat_as_name_set() - set the name of a call the gate let through
 * @n:		the VM's names
 * @t:		its address-space table (ended rows change key)
 * @a:		the call
 *
 * A new root whose name is the same process's (a list of all processes
 * sent after its fork) ends nothing. A root with bit 12 set is a 4 KiB PGD
 * (under KPTI a name's root is the kernel half, bit 12 clear): from then
 * on, the VM's roots are keyed whole.
 *
 * Context: the caller serialises access to @n and @t.
 */
void vmlat_as_name_set(struct vmlat_as_names *n, struct vmlat_as_table *t,
		       const struct vmlat_as_name_args *a)
{
	struct vmlat_as_name *name;
	u64 key;

	if (a->root & VMLAT_AS_PTI_BIT)
		vmlat_as_names_set_whole(n);
	key = vmlat_as_key(a->root, !vmlat_as_names_whole(n));
	name = name_slot(n, key);

	if ((a->root & VMLAT_HC_NAME_NEW) &&
	    (name ? name->tgid != a->tgid : vmlat_as_table_find(t, key) >= 0))
		name_end(n, t, key, name);
	name = name_place(n, t, key);
	name->key = key;
	name->stamp = ++n->clock;
	name->tgid = a->tgid;
	memcpy(name->comm, a->comm, sizeof(name->comm));
	name->comm[VMLAT_AS_COMM_LEN - 1] = '\0';
}

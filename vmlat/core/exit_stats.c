// SPDX-License-Identifier: GPL-2.0
/*
 * A VM's exit statistics (exit_stats.h): reset, taking a count back, and
 * what readers copy.
 */
#include "exit_stats.h"

/* The cell and the row are the same members, 64 bits each, in order. */
static_assert(sizeof(struct vmlat_exit_cell) ==
	      sizeof(struct vmlat_exit_row));
static_assert(sizeof(struct vmlat_exit_row) % sizeof(u64) == 0);
#define VMLAT_EXIT_NR_FIELDS (sizeof(struct vmlat_exit_row) / sizeof(u64))

static vmlat_atomic64_t *cell_field(struct vmlat_exit_cell *c, unsigned int i)
{
	return (vmlat_atomic64_t *)c + i;
}

/**
 * vmlat_exit_stats_init() - statistics of a new VM: zero, no histogram
 * @s:	the statistics, whatever their memory held
 *
 * Context: any context; no probe uses @s yet.
 */
void vmlat_exit_stats_init(struct vmlat_exit_stats *s)
{
	unsigned int i;

	for (i = 0; i < VMLAT_EXIT_REASON_HISTS; i++)
		s->hist[i] = NULL;
	vmlat_exit_stats_reset(s);
}

/**
 * vmlat_exit_stats_reset() - every statistic back to zero
 * @s:	the VM's statistics
 *
 * The histograms made stay, emptied, free for the next reasons seen.
 * Probes may update @s meanwhile: what they add during the reset may be
 * kept or not, counter by counter, as with every other reset of vmlat's
 * (a reason's handling time, which its histogram holds, may then go to
 * the reason that takes the histogram next).
 *
 * Context: any context.
 */
void vmlat_exit_stats_reset(struct vmlat_exit_stats *s)
{
	struct vmlat_ahist *h;
	unsigned int i, f;

	for (i = 0; i < VMLAT_EXIT_NR_SLOTS; i++) {
		for (f = 0; f < VMLAT_EXIT_NR_FIELDS; f++)
			vmlat_atomic64_set(cell_field(&s->cell[i], f), 0);
		WRITE_ONCE(s->hist_of[i], 0);
	}
	vmlat_atomic64_set(&s->undecoded, 0);
	for (i = 0; i < VMLAT_EXIT_REASON_HISTS; i++) {
		vmlat_atomic64_set(&s->hist_slot[i], VMLAT_SLOT_UNDECODED);
		h = vmlat_ptr_load_acquire(&s->hist[i]);
		if (h)
			vmlat_ahist_init(h);
	}
}

/**
 * vmlat_exit_stats_release() - give back the histograms made
 * @s:		the VM's statistics, which no probe updates any more
 * @src:	where they came from
 *
 * Context: any context.
 */
void vmlat_exit_stats_release(struct vmlat_exit_stats *s,
			      const struct vmlat_ahist_src *src)
{
	unsigned int i;

	for (i = 0; i < VMLAT_EXIT_REASON_HISTS; i++) {
		if (s->hist[i])
			src->put(s->hist[i]);
		s->hist[i] = NULL;
	}
}

/**
 * vmlat_exit_stats_hist_find() - vmlat_exit_stats_done() for a reason
 * whose histogram it does not know yet (or that could not be had)
 * @s:		the VM's statistics
 * @slot:	the exit's reason slot, >= 0
 * @ns:		its handling time
 * @src:	as for vmlat_exit_stats_done()
 *
 * The first VMLAT_EXIT_REASON_HISTS reasons seen take a histogram each,
 * lock-free; the one found is remembered in @s->hist_of.
 *
 * Context: any context.
 * Return: as vmlat_exit_stats_done().
 */
bool vmlat_exit_stats_hist_find(struct vmlat_exit_stats *s, int slot, u64 ns,
				const struct vmlat_ahist_src *src)
{
	unsigned int i;
	s64 cur;

	for (i = 0; i < VMLAT_EXIT_REASON_HISTS; i++) {
		cur = vmlat_atomic64_read(&s->hist_slot[i]);
		if (cur == VMLAT_SLOT_UNDECODED &&
		    vmlat_atomic64_try_cmpxchg(&s->hist_slot[i], &cur, slot))
			cur = slot;
		if (cur == slot) {
			WRITE_ONCE(s->hist_of[slot], i + 1);
			if (!vmlat_ahist_add_lazy(&s->hist[i], src, ns))
				vmlat_atomic64_add(ns, &s->cell[slot].total_ns);
			return true;
		}
	}
	vmlat_atomic64_add(ns, &s->cell[slot].total_ns);
	return false;
}

/**
 * vmlat_exit_stats_uncount() - an exit counted is not the guest's
 * @s:		the VM's statistics
 * @slot:	the slot vmlat_exit_stats_count() counted it in
 *
 * Its count, taken back; never below 0: a reset since the count took it
 * already.
 *
 * Context: any context.
 */
void vmlat_exit_stats_uncount(struct vmlat_exit_stats *s, int slot)
{
	if (slot >= 0)
		vmlat_atomic64_dec_if_positive(&s->cell[slot].count);
	else if (slot == VMLAT_SLOT_UNDECODED)
		vmlat_atomic64_dec_if_positive(&s->undecoded);
}

/**
 * vmlat_exit_stats_read() - one reason's statistics
 * @s:		the VM's statistics
 * @slot:	the reason slot, in [0, VMLAT_EXIT_NR_SLOTS)
 * @row:	what they are now
 *
 * Context: any context.
 */
void vmlat_exit_stats_read(const struct vmlat_exit_stats *s, int slot,
			   struct vmlat_exit_row *row)
{
	const vmlat_atomic64_t *c = (const vmlat_atomic64_t *)&s->cell[slot];
	const struct vmlat_ahist *h;
	u64 *r = (u64 *)row;
	unsigned int f, i;

	for (f = 0; f < VMLAT_EXIT_NR_FIELDS; f++)
		r[f] = (u64)vmlat_atomic64_read(&c[f]);
	/* The handling time its histogram took (vmlat_exit_stats_done()) */
	i = vmlat_exit_stats_hinted(s, slot);
	if (!i)
		return;
	h = vmlat_ptr_load_acquire(&s->hist[i - 1]);
	if (h)
		row->total_ns += (u64)vmlat_atomic64_read(&h->sum_ns);
}

/* The exits whose reason could not be read or is unknown. */
u64 vmlat_exit_stats_undecoded(const struct vmlat_exit_stats *s)
{
	return (u64)vmlat_atomic64_read(&s->undecoded);
}

/* The reason slot histogram @i serves, or VMLAT_SLOT_UNDECODED. */
int vmlat_exit_stats_hist_slot(const struct vmlat_exit_stats *s,
			       unsigned int i)
{
	return (int)vmlat_atomic64_read(&s->hist_slot[i]);
}

/**
 * vmlat_exit_stats_hist() - the handling times of one reason
 * @s:		the VM's statistics
 * @slot:	the reason slot (a negative one has none)
 * @h:		a copy of its histogram
 *
 * Return: false if the reason has none (@h untouched).
 */
bool vmlat_exit_stats_hist(const struct vmlat_exit_stats *s, int slot,
			   struct vmlat_hist_snap *h)
{
	unsigned int i;

	if (slot < 0)
		return false;
	for (i = 0; i < VMLAT_EXIT_REASON_HISTS; i++) {
		if (vmlat_exit_stats_hist_slot(s, i) == slot) {
			vmlat_ahist_read(vmlat_ptr_load_acquire(&s->hist[i]),
					 h);
			return true;
		}
	}
	return false;
}

/* Every reason histogram's samples, added to @h. */
void vmlat_exit_stats_hists_add(const struct vmlat_exit_stats *s,
				struct vmlat_hist_snap *h)
{
	unsigned int i;

	for (i = 0; i < VMLAT_EXIT_REASON_HISTS; i++)
		vmlat_ahist_read_add(vmlat_ptr_load_acquire(&s->hist[i]), h);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VM's exit statistics (pure logic), their one owner.
 *
 * Per exit reason slot (exit_codes.h): a cell of counters that probes on
 * several CPUs update without a lock, and a histogram of handling times
 * for each of the first VMLAT_EXIT_REASON_HISTS reasons seen; beside
 * them, the exits whose reason was not decoded. A reader copies one
 * reason's cell into a struct vmlat_exit_row, whose members the debugfs
 * tables print by a column list (debugfs/tables.c, exit_cols), and the
 * vmlat command reads back by a field list (tools/vmlat/snap.c).
 *
 * A new per-reason statistic: a member of VMLAT_EXIT_FIELDS (both the
 * cell and the row get it; reset and read take every member), the line
 * of the probe that updates it (vmlat_exit_stats_*() below), a column of
 * exit_cols and a field of the command's list.
 */
#ifndef _VMLAT_EXIT_STATS_H
#define _VMLAT_EXIT_STATS_H

#include "ahist.h"
#include "exit_codes.h"
#include "pure.h"

/* A histogram of handling times for each of the first reasons seen. */
#define VMLAT_EXIT_REASON_HISTS	8

/*
 * The per-reason statistics, all 64-bit, X(name) each:
 *   count:	exits of the reason
 *   total_ns:	their handling time (kvm_exit to the next kvm_entry); a
 *		reason with a histogram keeps it there, as its sum
 *		(vmlat_exit_stats_read() adds the two)
 */
#define VMLAT_EXIT_FIELDS(X)	\
	X(count)		\
	X(total_ns)

/* One reason's counters, updated by probes. */
struct vmlat_exit_cell {
#define VMLAT_EXIT_CELL_MEMBER(name) vmlat_atomic64_t name;
	VMLAT_EXIT_FIELDS(VMLAT_EXIT_CELL_MEMBER)
#undef VMLAT_EXIT_CELL_MEMBER
};

/* A copy of one reason's counters, for readers. */
struct vmlat_exit_row {
#define VMLAT_EXIT_ROW_MEMBER(name) u64 name;
	VMLAT_EXIT_FIELDS(VMLAT_EXIT_ROW_MEMBER)
#undef VMLAT_EXIT_ROW_MEMBER
};

/**
 * struct vmlat_exit_stats - a VM's exit statistics
 * @cell:	per reason slot
 * @undecoded:	exits whose reason could not be read or is unknown
 * @hist_slot:	the reason slot each of @hist serves, or
 *		VMLAT_SLOT_UNDECODED while it serves none
 * @hist:	handling times of the first reasons seen, each made on its
 *		first sample (ahist.h); those of the other reasons are the
 *		caller's (vmlat_exit_stats_done())
 * @hist_of:	per reason slot, 1 + the index in @hist_slot it was last
 *		found at, or 0: a hint, checked against @hist_slot (a reset
 *		frees the histograms for the next reasons seen)
 */
struct vmlat_exit_stats {
	struct vmlat_exit_cell cell[VMLAT_EXIT_NR_SLOTS];
	vmlat_atomic64_t undecoded;
	vmlat_atomic64_t hist_slot[VMLAT_EXIT_REASON_HISTS];
	struct vmlat_ahist *hist[VMLAT_EXIT_REASON_HISTS];
	u8 hist_of[VMLAT_EXIT_NR_SLOTS];
};

void vmlat_exit_stats_init(struct vmlat_exit_stats *s);
void vmlat_exit_stats_reset(struct vmlat_exit_stats *s);
void vmlat_exit_stats_release(struct vmlat_exit_stats *s,
			      const struct vmlat_ahist_src *src);
void vmlat_exit_stats_uncount(struct vmlat_exit_stats *s, int slot);
bool vmlat_exit_stats_hist_find(struct vmlat_exit_stats *s, int slot, u64 ns,
				const struct vmlat_ahist_src *src);
void vmlat_exit_stats_read(const struct vmlat_exit_stats *s, int slot,
			   struct vmlat_exit_row *row);
u64 vmlat_exit_stats_undecoded(const struct vmlat_exit_stats *s);
int vmlat_exit_stats_hist_slot(const struct vmlat_exit_stats *s,
			       unsigned int i);
bool vmlat_exit_stats_hist(const struct vmlat_exit_stats *s, int slot,
			   struct vmlat_hist_snap *h);
void vmlat_exit_stats_hists_add(const struct vmlat_exit_stats *s,
				struct vmlat_hist_snap *h);

/**
 * vmlat_exit_stats_count() - an exit began: count it
 * @s:		the VM's statistics
 * @slot:	its reason slot, VMLAT_SLOT_UNDECODED, or another negative
 *		VMLAT_SLOT_* (not counted)
 *
 * Inline: kvm_exit's probe calls it at every exit.
 *
 * Context: any context.
 */
static inline void vmlat_exit_stats_count(struct vmlat_exit_stats *s,
					  int slot)
{
	if (slot >= 0)
		vmlat_atomic64_inc(&s->cell[slot].count);
	else if (slot == VMLAT_SLOT_UNDECODED)
		vmlat_atomic64_inc(&s->undecoded);
}

/*
 * 1 + the index of the histogram reason @slot (>= 0) holds, as its hint
 * says and its histogram confirms, or 0: the hint is set before the
 * histogram's first sample.
 */
static __always_inline unsigned int
vmlat_exit_stats_hinted(const struct vmlat_exit_stats *s, int slot)
{
	unsigned int i = READ_ONCE(s->hist_of[slot]);

	return i && vmlat_atomic64_read(&s->hist_slot[i - 1]) == slot ? i : 0;
}

/**
 * vmlat_exit_stats_done() - an exit was handled: its time
 * @s:		the VM's statistics
 * @slot:	its reason slot, or a negative VMLAT_SLOT_*
 * @ns:		its handling time
 * @src:	where a reason's histogram comes from, at its first sample
 *
 * The time is added to the reason's histogram, if it has one (the first
 * VMLAT_EXIT_REASON_HISTS reasons seen take one each, lock-free), whose
 * sum is the reason's total; else, or if no histogram could be had for
 * it (the sample is lost to the histograms), to the reason's total.
 *
 * Always inline: kvm_entry's probe calls it at every exit handled, as
 * vmlat_ahist_add(); gcc 12 (Debian 6.1's) kept it out of line.
 *
 * Context: any context.
 * Return: true if a histogram of @s took @ns; false if the caller keeps
 * it (an undecoded exit, or a reason past the first ones).
 */
static __always_inline bool
vmlat_exit_stats_done(struct vmlat_exit_stats *s, int slot, u64 ns,
		      const struct vmlat_ahist_src *src)
{
	unsigned int i;

	if (slot < 0)
		return false;
	i = vmlat_exit_stats_hinted(s, slot);
	if (likely(i)) {
		if (unlikely(!vmlat_ahist_add_lazy(&s->hist[i - 1], src, ns)))
			vmlat_atomic64_add(ns, &s->cell[slot].total_ns);
		return true;
	}
	return vmlat_exit_stats_hist_find(s, slot, ns, src);
}

#endif /* _VMLAT_EXIT_STATS_H */

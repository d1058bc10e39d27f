/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pseudo-random numbers of vmlat's KUnit suites: Knuth's MMIX LCG,
 * deterministic, so that a failure reproduces exactly.
 */
#ifndef _VMLAT_KUNIT_LCG_H
#define _VMLAT_KUNIT_LCG_H

#include "pure.h"

static inline u64 lcg_next(u64 *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state;
}

/* Roughly uniform in [0, @bound), @bound < 2^48 (the low bits are poor). */
static inline u64 lcg_below(u64 *state, u64 bound)
{
	return (lcg_next(state) >> 16) % bound;
}

#endif /* _VMLAT_KUNIT_LCG_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A counting filter (pure logic) in front of a table of keys: whether a
 * key may be in the table, in one byte read, before the table's lookup.
 *
 * vmlat asks at every context switch and wake-up of every host task
 * whether the task is a vCPU thread (tasks.h); almost always it is not.
 * The filter has a counter per bucket of the key's hash: the number of
 * keys in the table hashing there. 0 answers "not in the table" without
 * the table's seqcount and probe; anything else sends the lookup on.
 *
 * A counter that reaches VMLAT_KEYFILTER_STUCK stays there (a bucket of
 * 255 keys: answered "maybe" from then on, never a wrong "no"). The
 * callers serialise vmlat_keyfilter_add() and vmlat_keyfilter_del()
 * (the table's writers' lock); vmlat_keyfilter_maybe() runs anywhere:
 * with the table's own changes ordered around it (add before the key is
 * in the table, del after it left), a "no" is what a lookup at some
 * instant of the call would have said.
 */
#ifndef _VMLAT_KEYFILTER_H
#define _VMLAT_KEYFILTER_H

#include "pure.h"

#define VMLAT_KEYFILTER_BITS	13
#define VMLAT_KEYFILTER_SIZE	(1U << VMLAT_KEYFILTER_BITS)	/* 8 KiB */
#define VMLAT_KEYFILTER_STUCK	0xff

struct vmlat_keyfilter {
	u8 count[VMLAT_KEYFILTER_SIZE];
};

/* The bucket of a 64-bit hash: its top bits (a multiplicative hash's best). */
static inline u32 vmlat_keyfilter_bucket(u64 hash)
{
	return (u32)(hash >> (64 - VMLAT_KEYFILTER_BITS));
}

/* Whether a key of @hash may be in the table: false means it is not. */
static inline bool vmlat_keyfilter_maybe(const struct vmlat_keyfilter *f,
					 u64 hash)
{
	return READ_ONCE(f->count[vmlat_keyfilter_bucket(hash)]) != 0;
}

void vmlat_keyfilter_init(struct vmlat_keyfilter *f);
void vmlat_keyfilter_add(struct vmlat_keyfilter *f, u64 hash);
void vmlat_keyfilter_del(struct vmlat_keyfilter *f, u64 hash);

#endif /* _VMLAT_KEYFILTER_H */

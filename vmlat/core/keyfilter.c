// SPDX-License-Identifier: GPL-2.0
/*
 * A counting filter in front of a table of keys (pure logic, see
 * keyfilter.h).
 */
#include "keyfilter.h"

/**
 * vmlat_keyfilter_init() - no key
 * @f:	the filter
 */
void vmlat_keyfilter_init(struct vmlat_keyfilter *f)
{
	memset(f, 0, sizeof(*f));
}

/**
 * vmlat_keyfilter_add() - a key of @hash goes into the table
 * @f:		the filter
 * @hash:	the key's hash
 *
 * Context: before the key is in the table; writers serialised.
 */
void vmlat_keyfilter_add(struct vmlat_keyfilter *f, u64 hash)
{
	u8 *c = &f->count[vmlat_keyfilter_bucket(hash)];

	if (*c != VMLAT_KEYFILTER_STUCK)
		WRITE_ONCE(*c, *c + 1);
}

/**
 * vmlat_keyfilter_del() - a key of @hash left the table
 * @f:		the filter
 * @hash:	the key's hash, as given to vmlat_keyfilter_add()
 *
 * Context: after the key left the table; writers serialised.
 */
void vmlat_keyfilter_del(struct vmlat_keyfilter *f, u64 hash)
{
	u8 *c = &f->count[vmlat_keyfilter_bucket(hash)];

	if (*c != VMLAT_KEYFILTER_STUCK && *c)
		WRITE_ONCE(*c, *c - 1);
}

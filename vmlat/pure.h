/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one header vmlat's pure logic includes.
 *
 * Pure logic (BTF reading, state machines, histograms, clock fits) never
 * allocates, locks, reads a clock or prints: storage and timestamps are the
 * caller's. That lets the same .c files build into vmlat.ko, into the KUnit
 * module vmlat_kunit.ko and into a userspace test binary run under
 * ASan/UBSan (selftests/unit). This header is the only place that knows
 * which of those it is being built for.
 */
#ifndef _VMLAT_PURE_H
#define _VMLAT_PURE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/compiler.h>
#include <uapi/linux/btf.h>

/* fls64(): 1-based index of the most significant set bit, 0 for 0. */
static inline unsigned int vmlat_fls64(u64 x)
{
	return fls64(x);
}
#else
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <linux/btf.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __maybe_unused
#define __maybe_unused __attribute__((__unused__))
#endif
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif

static inline unsigned int vmlat_fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}
#endif /* __KERNEL__ */

#endif /* _VMLAT_PURE_H */

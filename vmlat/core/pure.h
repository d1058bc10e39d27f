/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one header vmlat's pure logic includes.
 *
 * Pure logic (BTF reading, state machines, histograms, clock fits) never
 * allocates, locks, reads a clock or prints: storage and timestamps are the
 * caller's. (Atomic counters, vmlat_atomic64_t, are not locks: allowed.)
 * That lets the same .c files build into vmlat.ko, into the KUnit module
 * vmlat_kunit.ko and into a userspace test binary run under ASan/UBSan
 * (selftests/unit). This header is the only place that knows
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
#include <linux/math64.h>
#include <uapi/linux/btf.h>
#include <linux/atomic.h>

/* fls64(): 1-based index of the most significant set bit, 0 for 0. */
static inline unsigned int vmlat_fls64(u64 x)
{
	return fls64(x);
}

/*
 * 64-bit atomics: the kernel's own, called directly. The userspace build
 * defines the same names with the same semantics.
 */
typedef atomic64_t vmlat_atomic64_t;
#define vmlat_atomic64_read(v)		atomic64_read(v)
#define vmlat_atomic64_set(v, i)	atomic64_set(v, i)
#define vmlat_atomic64_add(i, v)	atomic64_add(i, v)
#define vmlat_atomic64_inc(v)		atomic64_inc(v)
#define vmlat_atomic64_try_cmpxchg(v, old, new) \
	atomic64_try_cmpxchg(v, old, new)
#define vmlat_atomic64_dec_if_positive(v) atomic64_dec_if_positive(v)

/* A pointer published once: read with acquire, set by a full cmpxchg. */
#define vmlat_ptr_load_acquire(p)	smp_load_acquire(p)
#define vmlat_ptr_cmpxchg(p, old, new)	cmpxchg(p, old, new)
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
#ifndef S64_MAX
#define S64_MAX INT64_MAX
#endif
#ifndef BIT_ULL
#define BIT_ULL(n) (1ULL << (n))
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, val) (*(volatile __typeof__(x) *)&(x) = (val))
#endif
#ifndef READ_ONCE
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif

static inline unsigned int vmlat_fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/*
 * The kernel's atomic64_t and the atomic64_*() calls vmlat uses, on the
 * compiler's __atomic builtins, with the kernel's ordering: read, set, add
 * and inc are relaxed, a successful try_cmpxchg is fully ordered. The
 * builtins wrap around on overflow, as the kernel's atomics do.
 */
typedef struct {
	s64 counter;
} vmlat_atomic64_t;

static inline s64 vmlat_atomic64_read(const vmlat_atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void vmlat_atomic64_set(vmlat_atomic64_t *v, s64 i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void vmlat_atomic64_add(s64 i, vmlat_atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void vmlat_atomic64_inc(vmlat_atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, 1, __ATOMIC_RELAXED);
}

/*
 * If *@v is *@old, set it to @new and return true; else copy *@v to *@old
 * and return false.
 */
static inline bool vmlat_atomic64_try_cmpxchg(vmlat_atomic64_t *v, s64 *old,
					      s64 new)
{
	return __atomic_compare_exchange_n(&v->counter, old, new, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* *@v - 1, stored only if it is not negative (fully ordered then). */
static inline s64 vmlat_atomic64_dec_if_positive(vmlat_atomic64_t *v)
{
	s64 old = vmlat_atomic64_read(v);

	while (old > 0 && !vmlat_atomic64_try_cmpxchg(v, &old, old - 1))
		;
	return old - 1;
}

#define vmlat_ptr_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
/* The value *@p had: @old if it was, and then it is @new now. */
#define vmlat_ptr_cmpxchg(p, old, new) ({				\
	__typeof__(*(p)) __vmlat_old = (old);				\
	__atomic_compare_exchange_n(p, &__vmlat_old, new, false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED); \
	__vmlat_old;							\
})
#endif /* __KERNEL__ */

/* *@v = max(*@v, @x), both taken as unsigned; lock-free, any context. */
static inline void vmlat_atomic64_max(vmlat_atomic64_t *v, u64 x)
{
	s64 old = vmlat_atomic64_read(v);

	while ((u64)old < x && !vmlat_atomic64_try_cmpxchg(v, &old, x))
		;
}

/* *@v = min(*@v, @x), both taken as unsigned; lock-free, any context. */
static inline void vmlat_atomic64_min(vmlat_atomic64_t *v, u64 x)
{
	s64 old = vmlat_atomic64_read(v);

	while ((u64)old > x && !vmlat_atomic64_try_cmpxchg(v, &old, x))
		;
}

/*
 * @to - @from, or 0 if @to is not after @from: events of one vCPU come
 * from several CPUs, and a span never goes negative.
 */
static inline u64 vmlat_span(u64 from, u64 to)
{
	return to > from ? to - from : 0;
}

/* Both gcc and clang have it on 64-bit targets; the kernel needs it. */
typedef __int128 vmlat_s128;
typedef unsigned __int128 vmlat_u128;

/*
 * a * b / c, rounded down, in 128-bit precision; U64_MAX if c is 0 or the
 * quotient does not fit. (x86-64's divq would fault then: never reached.)
 */
static inline u64 vmlat_mul_div(u64 a, u64 b, u64 c)
{
	vmlat_u128 p = (vmlat_u128)a * b;

	if (!c || (u64)(p >> 64) >= c)
		return U64_MAX;
#ifdef __KERNEL__
	return mul_u64_u64_div_u64(a, b, c);
#else
	return (u64)(p / c);
#endif
}

#endif /* _VMLAT_PURE_H */

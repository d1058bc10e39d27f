// SPDX-License-Identifier: GPL-2.0
/*
 * Pools of memory for probes (pool.h).
 *
 * Probes run with IRQs off, some under a runqueue lock, where no
 * allocator may be called on PREEMPT_RT and waking a worker could
 * deadlock: a take or a give-back that leaves a pool below its low mark
 * or over its size queues an irq_work, whose handler queues the work that
 * allocates and frees (the pattern of threshold.c's snapshots).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "kick.h"
#include "records.h"
#include "pool.h"

#define VMLAT_POOL(var, nm, lo, hi, type, al, zeroed)			\
	struct vmlat_pool var = {					\
		.lock = __RAW_SPIN_LOCK_UNLOCKED(var.lock),		\
		.low = lo,						\
		.high = hi,						\
		.size = sizeof(type),					\
		.align = al,						\
		.zero = zeroed,						\
		.name = nm,						\
	}

/*
 * VM records: a few, for VMs starting together; the work refills the
 * pool within a scheduling delay, and a thread without a record tries
 * again at its next event.
 */
VMLAT_POOL(vmlat_vm_pool, "vmlat_vm", 2, 4, struct vmlat_vm, 0, true);
/* vCPU records, each on cache lines of its own. */
VMLAT_POOL(vmlat_vcpu_pool, "vmlat_vcpu", 8, 16, struct vmlat_vcpu,
	   SMP_CACHE_BYTES, true);
/*
 * The blocks a VM takes on first use: any of its histograms, or its L2
 * exit counters (struct vmlat_vm_nested_exits), whichever is larger.
 */
VMLAT_POOL(vmlat_blocks, "vmlat_block", 12, 32, union vmlat_block, 0, false);

static struct vmlat_pool *const vmlat_pools[] = {
	&vmlat_vm_pool, &vmlat_vcpu_pool, &vmlat_blocks
};

static void vmlat_pool_workfn(struct work_struct *work);
static VMLAT_KICK(vmlat_pool_kicker, vmlat_pool_workfn);

/* Set while the pools may be refilled: cleared before they are freed. */
static bool vmlat_pool_live;

static void vmlat_pool_kick(void)
{
	if (READ_ONCE(vmlat_pool_live))
		vmlat_kick(&vmlat_pool_kicker);
}

/**
 * vmlat_pool_take() - a free object of @p, its memory as it was left
 * @p:	the pool
 *
 * Context: any context, a probe's included.
 * Return: the object, or NULL (counted) if the pool is empty.
 */
void *vmlat_pool_take(struct vmlat_pool *p)
{
	unsigned long flags;
	bool low;
	void *obj;

	raw_spin_lock_irqsave(&p->lock, flags);
	obj = p->nr ? p->obj[--p->nr] : NULL;
	low = p->nr < p->low;
	raw_spin_unlock_irqrestore(&p->lock, flags);
	if (obj)
		atomic_long_inc(&p->used);
	else
		atomic64_inc(&p->missed);
	if (low)
		vmlat_pool_kick();
	return obj;
}

/**
 * vmlat_pool_take_or_alloc() - vmlat_pool_take(), or else a new object
 * @p:	the pool
 *
 * An empty pool is not the end where the allocator may be called with
 * IRQs off (not on PREEMPT_RT, where its locks sleep): a caller that
 * holds no lock of vmlat's tries GFP_NOWAIT before it goes without.
 *
 * Context: any context but NMI, no lock of vmlat's held.
 * Return: the object, or NULL (counted).
 */
void *vmlat_pool_take_or_alloc(struct vmlat_pool *p)
{
	void *obj = vmlat_pool_take(p);
	gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN | (p->zero ? __GFP_ZERO : 0);

	if (obj || IS_ENABLED(CONFIG_PREEMPT_RT))
		return obj;
	obj = kmem_cache_alloc(p->cache, gfp);
	if (obj) {
		/* Not missed after all. */
		atomic64_dec(&p->missed);
		atomic_long_inc(&p->used);
	}
	return obj;
}

/**
 * vmlat_pool_free() - free an object taken, in process context
 * @p:		its pool
 * @obj:	the object, which nobody can reach any more
 *
 * Context: process context.
 */
void vmlat_pool_free(struct vmlat_pool *p, void *obj)
{
	atomic_long_dec(&p->used);
	kmem_cache_free(p->cache, obj);
}

/* Keep @obj in @p if it holds fewer than @n: false if it has no room. */
static bool vmlat_pool_keep(struct vmlat_pool *p, void *obj, unsigned int n)
{
	unsigned long flags;
	bool room;

	raw_spin_lock_irqsave(&p->lock, flags);
	room = p->nr < n;
	if (room)
		p->obj[p->nr++] = obj;
	raw_spin_unlock_irqrestore(&p->lock, flags);
	return room;
}

/**
 * vmlat_pool_put() - give back an object vmlat_pool_take() gave
 * @p:		the pool
 * @obj:	the object, which nobody uses any more; a pool of zeroed
 *		objects takes back only ones that are still zero
 *
 * Context: any context, a probe's included.
 */
void vmlat_pool_put(struct vmlat_pool *p, void *obj)
{
	atomic_long_dec(&p->used);
	if (vmlat_pool_keep(p, obj, p->high))
		return;
	/* Free memory is all it is now: its first bytes link it. */
	llist_add(obj, &p->extra);
	vmlat_pool_kick();
}

/**
 * vmlat_pool_give_back() - give back an object, in process context
 * @p:		the pool
 * @obj:	the object, which nobody can reach any more
 *
 * As vmlat_pool_put(), but what the pool has no room for is freed now.
 *
 * Context: process context.
 */
void vmlat_pool_give_back(struct vmlat_pool *p, void *obj)
{
	atomic_long_dec(&p->used);
	if (!vmlat_pool_keep(p, obj, p->high))
		kmem_cache_free(p->cache, obj);
}

/* Free what was given back to @p full. */
static void vmlat_pool_free_extra(struct vmlat_pool *p)
{
	struct llist_node *n, *next;

	llist_for_each_safe(n, next, llist_del_all(&p->extra))
		kmem_cache_free(p->cache, n);
}

/* Free what was given back to @p full, and fill it up to @n objects. */
static void vmlat_pool_fill(struct vmlat_pool *p, unsigned int n, gfp_t gfp)
{
	unsigned long flags;
	bool full;
	void *obj;

	vmlat_pool_free_extra(p);
	for (;;) {
		raw_spin_lock_irqsave(&p->lock, flags);
		full = p->nr >= n;
		raw_spin_unlock_irqrestore(&p->lock, flags);
		if (full)
			return;
		obj = kmem_cache_alloc(p->cache, gfp |
				       (p->zero ? __GFP_ZERO : 0));
		if (!obj)
			return;
		if (!vmlat_pool_keep(p, obj, n)) {
			kmem_cache_free(p->cache, obj);
			return;
		}
	}
}

static void vmlat_pool_workfn(struct work_struct *work)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vmlat_pools); i++)
		vmlat_pool_fill(vmlat_pools[i], vmlat_pools[i]->high,
				GFP_KERNEL | __GFP_NOWARN);
}

/**
 * vmlat_pool_read_stats() - how @p is doing, for status
 * @p:	the pool
 * @st:	filled in
 *
 * Context: any; a racy snapshot.
 */
void vmlat_pool_read_stats(struct vmlat_pool *p, struct vmlat_pool_stats *st)
{
	st->free = READ_ONCE(p->nr);
	st->used = max(atomic_long_read(&p->used), 0L);
	st->missed = atomic64_read(&p->missed);
	st->size = p->cache ? kmem_cache_size(p->cache) : p->size;
}

/**
 * vmlat_pool_renew() - free @p's objects, its cache's empty slabs, refill
 * @p:	the pool, none of whose objects is in use
 *
 * The objects given back to a pool lie in the slabs where they were, one
 * here, one there: while the pool holds them, those slabs stay. Once no VM
 * is left, the pool is freed and made anew (in slabs of their own, @low
 * objects as at load), and the allocator's empty slabs of it freed:
 * vmlat's memory goes back to what it took at load.
 *
 * Context: process context.
 */
void vmlat_pool_renew(struct vmlat_pool *p)
{
	void *obj[VMLAT_POOL_MAX];
	unsigned long flags;
	unsigned int i, n;

	raw_spin_lock_irqsave(&p->lock, flags);
	n = p->nr;
	memcpy(obj, p->obj, n * sizeof(*obj));
	p->nr = 0;
	raw_spin_unlock_irqrestore(&p->lock, flags);
	for (i = 0; i < n; i++)
		kmem_cache_free(p->cache, obj[i]);
	vmlat_pool_free_extra(p);
	kmem_cache_shrink(p->cache);
	vmlat_pool_fill(p, p->low, GFP_KERNEL | __GFP_NOWARN);
}

/* Forget @p's misses (a reset). Context: any. */
void vmlat_pool_reset(struct vmlat_pool *p)
{
	atomic64_set(&p->missed, 0);
}

/**
 * vmlat_pool_init() - make the caches and fill the pools
 *
 * Context: process context, before any probe is attached.
 * Return: 0 or -ENOMEM.
 */
int vmlat_pool_init(void)
{
	struct vmlat_pool *p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vmlat_pools); i++) {
		p = vmlat_pools[i];
		p->cache = kmem_cache_create(p->name, p->size, p->align, 0,
					     NULL);
		if (!p->cache)
			goto fail;
		/* Fails the load rather than wake the OOM killer. */
		vmlat_pool_fill(p, p->low, GFP_KERNEL | __GFP_RETRY_MAYFAIL |
				   __GFP_NOWARN);
		if (p->nr < p->low)
			goto fail;
	}
	WRITE_ONCE(vmlat_pool_live, true);
	return 0;
fail:
	pr_err("no memory for the pool of %s: free some memory and load again\n",
	       vmlat_pools[i]->name);
	vmlat_pool_exit();
	return -ENOMEM;
}

/**
 * vmlat_pool_exit() - free the pools and their caches
 *
 * Context: process context, once no probe runs and every object taken
 * was given back (records.c's exit).
 */
void vmlat_pool_exit(void)
{
	struct vmlat_pool *p;
	unsigned int i;

	WRITE_ONCE(vmlat_pool_live, false);
	vmlat_kick_sync(&vmlat_pool_kicker);
	for (i = 0; i < ARRAY_SIZE(vmlat_pools); i++) {
		p = vmlat_pools[i];
		if (!p->cache)
			continue;
		WARN_ON_ONCE(atomic_long_read(&p->used));
		vmlat_pool_free_extra(p);
		while (p->nr)
			kmem_cache_free(p->cache, p->obj[--p->nr]);
		kmem_cache_destroy(p->cache);
		p->cache = NULL;
	}
}

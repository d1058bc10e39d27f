/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pools of memory for probes, which never allocate: each keeps a few free
 * objects of one kmem_cache, which a probe takes or gives back in O(1)
 * under the pool's raw spinlock; a work item tops the pool up, and frees
 * what it holds beyond its size, in process context. A probe that finds
 * its pool empty goes without: the miss is counted, the work kicked.
 *
 * vmlat_vm_pool, vmlat_vcpu_pool: the records (records.c), zeroed;
 * vmlat_blocks: the blocks of memory a VM takes on first use: its
 * histograms and its L2 exit counters.
 */
#ifndef _VMLAT_POOL_H
#define _VMLAT_POOL_H

#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/spinlock.h>

/* The most free objects a pool holds. */
#define VMLAT_POOL_MAX	64

/**
 * struct vmlat_pool - free objects of one size, for probes
 * @lock:	protects @nr and @obj
 * @nr:		free objects in @obj
 * @obj:	the free objects
 * @low:	fewer free: the work refills the pool; what it holds at load
 *		and once no VM is left
 * @high:	what the work refills it to; more free: it frees the rest
 * @extra:	objects given back to a full pool, freed by the work
 * @used:	objects taken and not given back
 * @missed:	takes that found the pool empty
 * @cache:	where the objects come from
 * @size:	their size
 * @align:	their alignment (0: the cache's default)
 * @zero:	they come zeroed
 * @name:	the cache's
 */
struct vmlat_pool {
	raw_spinlock_t lock;
	unsigned int nr;
	void *obj[VMLAT_POOL_MAX];
	unsigned int low, high;
	struct llist_head extra;
	atomic_long_t used;
	atomic64_t missed;
	struct kmem_cache *cache;
	size_t size;
	unsigned int align;
	bool zero;
	const char *name;
};

extern struct vmlat_pool vmlat_vm_pool;
extern struct vmlat_pool vmlat_vcpu_pool;
extern struct vmlat_pool vmlat_blocks;

void *vmlat_pool_take(struct vmlat_pool *p);
void *vmlat_pool_take_or_alloc(struct vmlat_pool *p);
void vmlat_pool_put(struct vmlat_pool *p, void *obj);
void vmlat_pool_free(struct vmlat_pool *p, void *obj);
void vmlat_pool_give_back(struct vmlat_pool *p, void *obj);

/**
 * struct vmlat_pool_stats - a pool, for status
 * @free:	objects in the pool
 * @used:	objects taken from it and not given back
 * @missed:	takes that found it empty
 * @size:	bytes an object takes in its cache
 */
struct vmlat_pool_stats {
	unsigned long free;
	unsigned long used;
	u64 missed;
	size_t size;
};

void vmlat_pool_read_stats(struct vmlat_pool *p, struct vmlat_pool_stats *st);
void vmlat_pool_reset(struct vmlat_pool *p);
void vmlat_pool_renew(struct vmlat_pool *p);

int vmlat_pool_init(void);
void vmlat_pool_exit(void);

#endif /* _VMLAT_POOL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/* Placeholder of the lock-free histogram (replaced by the core-tests branch). */
#ifndef _VMLAT_AHIST_H
#define _VMLAT_AHIST_H

#include <linux/atomic.h>

#include "hist.h"

struct vmlat_ahist {
	atomic64_t sum_ns;
	atomic64_t min_ns;
	atomic64_t max_ns;
	atomic64_t buckets[VMLAT_HIST_NR_BUCKETS];
};

struct vmlat_hist_snap {
	u64 count, sum_ns, min_ns, max_ns;
	u64 buckets[VMLAT_HIST_NR_BUCKETS];
};

void vmlat_ahist_init(struct vmlat_ahist *h);
void vmlat_ahist_add(struct vmlat_ahist *h, u64 ns);
void vmlat_ahist_read(const struct vmlat_ahist *h, struct vmlat_hist_snap *s);

#endif /* _VMLAT_AHIST_H */

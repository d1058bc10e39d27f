/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host side of vmlat's clock-sync hypercall (hypercall/vmlat_hypercall.h):
 * per VM, the exchanges its guest sends, checked, rate-limited and fed to
 * the guest -> host mapping (sync.h).
 */
#ifndef _VMLAT_CLOCK_SYNC_H
#define _VMLAT_CLOCK_SYNC_H

#include <linux/atomic.h>
#include <linux/spinlock.h>

#include "clock_fit.h"

/**
 * struct vmlat_vm_sync_data - one VM's clock sync, under its lock
 * @fit:	the exchanges taken (the line fit)
 * @pend:	an exchange awaits its g2 (the next call)
 * @pend_seq:	its number
 * @pend_g1:	its g1
 * @pend_h:	its host time
 * @last_ns:	host time of the last exchange taken
 * @credit_ns:	rate limit: token bucket, in ns of credit
 * @refill_ns:	when @credit_ns was last refilled
 * @calls:	sync hypercalls seen
 * @taken:	exchanges taken into the mapping
 * @malformed:	calls with a wrong header (magic, version) or seq 0
 * @replayed:	calls whose seq was not after the last one
 * @unpaired:	exchanges dropped: the next call skipped a number or
 *		brought no g2
 * @refused:	complete exchanges the mapping refused (g2 before g1, out
 *		of order, too far from the first)
 * @limited:	calls over the rate limit, ignored
 * @restarts:	mappings restarted (a call with seq 1)
 */
struct vmlat_vm_sync_data {
	struct vmlat_clock_fit fit;
	bool pend;
	u64 pend_seq;
	u64 pend_g1;
	u64 pend_h;
	u64 last_ns;
	u64 credit_ns;
	u64 refill_ns;
	u64 calls;
	u64 taken;
	u64 malformed;
	u64 replayed;
	u64 unpaired;
	u64 refused;
	u64 limited;
	u64 restarts;
};

/**
 * struct vmlat_vm_sync - one VM's clock sync
 * @lock:	protects @d (any vCPU of the VM may call)
 * @d:		the state
 * @exits:	VM exits of sync calls (not in the exit statistics)
 * @exit_ns:	their handling time
 */
struct vmlat_vm_sync {
	raw_spinlock_t lock;
	struct vmlat_vm_sync_data d;
	atomic64_t exits;
	atomic64_t exit_ns;
};

/* An exchange taken, for the trace event. */
struct vmlat_sync_xchg {
	u64 seq;
	u64 g1;
	u64 h;
	u64 g2;
};

void vmlat_vm_sync_init(struct vmlat_vm_sync *s);
void vmlat_vm_sync_clear_stats(struct vmlat_vm_sync *s);
bool vmlat_vm_sync_call(struct vmlat_vm_sync *s, u64 now, unsigned long a0,
			unsigned long a1, unsigned long a2, unsigned long a3,
			struct vmlat_sync_xchg *x);
void vmlat_vm_sync_copy(struct vmlat_vm_sync *s,
			struct vmlat_vm_sync_data *copy);

#endif /* _VMLAT_CLOCK_SYNC_H */

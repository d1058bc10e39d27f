/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host side of vmlat's clock-sync hypercall (hypercall/vmlat_hypercall.h):
 * per VM, the calls its guest makes, under the VM's lock, through the
 * pure logic of core/sync_call.h (checks, rate limit, sessions) into the
 * guest -> host mapping (core/clock_fit.h). Under the same lock, the gate
 * of its name calls (core/aspace.h) and of its steal calls
 * (core/steal_call.h): a guest calling as fast as it can contends for
 * this lock only, never taken under the scheduler's.
 */
#ifndef _VMLAT_CLOCK_SYNC_H
#define _VMLAT_CLOCK_SYNC_H

#include <linux/atomic.h>
#include <linux/spinlock.h>

#include "aspace.h"
#include "steal_call.h"
#include "sync_call.h"

/**
 * struct vmlat_vm_sync - one VM's clock sync
 * @lock:	protects @d, @names and @steal (any vCPU of the VM may call)
 * @d:		the state
 * @names:	the gate of name calls
 * @steal:	the gate of steal calls
 * @exits:	VM exits of vmlat's hypercalls from CPL 0, sync, names and
 *		steal
 *		(not in the exit statistics)
 * @exit_ns:	their handling time
 */
struct vmlat_vm_sync {
	raw_spinlock_t lock;
	struct vmlat_vm_sync_data d;
	struct vmlat_as_name_gate names;
	struct vmlat_steal_gate steal;
	atomic64_t exits;
	atomic64_t exit_ns;
};

void vmlat_vm_sync_init(struct vmlat_vm_sync *s);
void vmlat_vm_sync_clear_stats(struct vmlat_vm_sync *s);
u64 vmlat_vm_sync_call(struct vmlat_vm_sync *s,
		       const struct vmlat_sync_args *a, u64 now,
		       struct vmlat_sync_xchg *x);
void vmlat_vm_sync_copy(struct vmlat_vm_sync *s,
			struct vmlat_vm_sync_data *copy);
u64 vmlat_vm_name_gate(struct vmlat_vm_sync *s,
		       const struct vmlat_as_name_args *a, u64 now);
void vmlat_vm_name_gate_copy(struct vmlat_vm_sync *s,
			     struct vmlat_as_name_gate *copy);
u64 vmlat_vm_steal_gate(struct vmlat_vm_sync *s, u64 page, int cpl,
			bool allowed, u64 now);
void vmlat_vm_steal_gate_copy(struct vmlat_vm_sync *s,
			      struct vmlat_steal_gate *copy);

#endif /* _VMLAT_CLOCK_SYNC_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host does with one clock-sync hypercall of a guest
 * (hypercall/vmlat_hypercall.h), as pure logic: check it, rate-limit it,
 * pair it with the call before it into an exchange for the line fit
 * (clock_fit.h), and say what the guest is told. The caller holds the
 * VM's lock, passes the host time and the CPL the call was made at, and
 * writes the reply into the guest's registers.
 *
 * Sessions: a guest numbers its calls seq = 1, 2, 3... from each start
 * (boot, module load). A seq lower than the last one taken, or 1, is a new
 * session: the mapping starts over. Only CPL 0 speaks for the guest: a
 * call from any other ring is counted and changes nothing else.
 */
#ifndef _VMLAT_SYNC_CALL_H
#define _VMLAT_SYNC_CALL_H

#include "pure.h"
#include "bucket.h"
#include "clock_fit.h"

/**
 * struct vmlat_vm_sync_data - one VM's clock sync
 * @fit:	the exchanges taken (the line fit)
 * @pend:	an exchange awaits its g2 (the next call)
 * @pend_seq:	its number
 * @pend_g1:	its g1
 * @pend_h:	its host time
 * @last_ns:	host time of the last exchange taken
 * @rate:	rate limit (bucket.h)
 * @calls:	sync hypercalls seen (@user included)
 * @user:	calls not made at CPL 0 (or whose CPL could not be read):
 *		ignored
 * @taken:	exchanges taken into the mapping
 * @malformed:	calls with a wrong header (magic, version) or seq 0
 * @replayed:	calls with the number of the last call taken: ignored
 * @unpaired:	exchanges dropped: the next call skipped a number or
 *		brought no g2
 * @refused:	complete exchanges the mapping refused (g2 before g1, out
 *		of order, too far from the first)
 * @limited:	calls over the rate limit, ignored
 * @restarts:	mappings restarted (a new session: seq 1, or lower than
 *		the last)
 */
struct vmlat_vm_sync_data {
	struct vmlat_clock_fit fit;
	bool pend;
	u64 pend_seq;
	u64 pend_g1;
	u64 pend_h;
	u64 last_ns;
	struct vmlat_bucket rate;
	u64 calls;
	u64 user;
	u64 taken;
	u64 malformed;
	u64 replayed;
	u64 unpaired;
	u64 refused;
	u64 limited;
	u64 restarts;
};

/**
 * struct vmlat_sync_args - one call as the guest made it
 * @hdr:	RBX: magic and version
 * @g1:		RCX: the guest clock before this call
 * @prev_g2:	RDX: the guest clock after the previous call returned
 * @seq:	RSI: this call's number
 * @cpl:	the privilege level it was made at; < 0: unknown
 */
struct vmlat_sync_args {
	u64 hdr;
	u64 g1;
	u64 prev_g2;
	u64 seq;
	int cpl;
};

/* An exchange taken, for the trace event. */
struct vmlat_sync_xchg {
	u64 seq;
	u64 g1;
	u64 h;
	u64 g2;
};

void vmlat_sync_data_init(struct vmlat_vm_sync_data *d);
void vmlat_sync_data_clear_stats(struct vmlat_vm_sync_data *d);
u64 vmlat_sync_data_call(struct vmlat_vm_sync_data *d,
			 const struct vmlat_sync_args *a, u64 now,
			 struct vmlat_sync_xchg *x);

#endif /* _VMLAT_SYNC_CALL_H */

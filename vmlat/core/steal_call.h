/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host answers a guest's steal call with (hypercall version 4,
 * hypercall/vmlat_hypercall.h), as pure logic: check and rate-limit the
 * call, and lay out the page it asked for. The caller holds the VM's
 * hypercall lock for the gate, copies the figures the page needs into a
 * struct vmlat_steal_src (its vCPU's times, its VM's takers, its VM's
 * exit reasons) and writes the page into the guest's registers.
 *
 * The page carries the calling VM's figures only, and of the VMs and
 * host tasks that took its time, totals only: nothing names another
 * tenant.
 */
#ifndef _VMLAT_STEAL_CALL_H
#define _VMLAT_STEAL_CALL_H

#include "pure.h"
#include "bucket.h"
#include "doc_names.h"
#include "vmlat_hypercall.h"

/**
 * struct vmlat_steal_gate - one VM's steal calls
 * @rate:	rate limit (bucket.h)
 * @calls:	steal calls seen (@user included)
 * @user:	calls not made at CPL 0 (or whose CPL could not be read):
 *		not answered
 * @denied:	calls from CPL 0 the host does not allow (guest_steal)
 * @malformed:	calls for a page that does not exist
 * @limited:	calls over the rate limit, not answered
 * @taken:	calls answered
 */
struct vmlat_steal_gate {
	struct vmlat_bucket rate;
	u64 calls;
	u64 user;
	u64 denied;
	u64 malformed;
	u64 limited;
	u64 taken;
};

/*
 * The two vCPU pages' layout, the one table of it: value @r (0 to 3: RCX,
 * RDX, RSI, RDI) of page @page (VMLAT_HC_STEAL_P_STEAL or _TIME) is the
 * time in a state (enum vmlat_state), or VMLAT_STEAL_OBSERVED: the time
 * observed. The host fills the pages by it (vmlat_steal_page()), the
 * guest module reads them by it.
 */
#define VMLAT_STEAL_OBSERVED	VMLAT_NR_STATES

static inline unsigned int vmlat_steal_vcpu_value(unsigned int page,
						  unsigned int r)
{
	static const u8 value[2][4] = {
		[VMLAT_HC_STEAL_P_STEAL] = {
			VMLAT_PREEMPTED, VMLAT_WAIT, VMLAT_KERNEL, VMLAT_USER,
		},
		[VMLAT_HC_STEAL_P_TIME] = {
			VMLAT_GUEST, VMLAT_IDLE, VMLAT_BLOCKED,
			VMLAT_STEAL_OBSERVED,
		},
	};

	return value[page][r];
}

/* What a page is about: which figures its caller must copy. */
enum vmlat_steal_part {
	VMLAT_STEAL_PART_NONE,		/* none: not answered */
	VMLAT_STEAL_PART_VCPU,		/* the calling vCPU's */
	VMLAT_STEAL_PART_TAKERS,	/* the VM's takers */
	VMLAT_STEAL_PART_EXITS,		/* the VM's exit reasons */
};

/**
 * struct vmlat_steal_exit - one exit reason of the VM
 * @isa:	VMLAT_ISA_VMX or VMLAT_ISA_SVM
 * @code:	its raw code
 * @count:	its exits
 * @total_ns:	their handling time
 */
struct vmlat_steal_exit {
	u32 isa;
	u32 code;
	u64 count;
	u64 total_ns;
};

/**
 * struct vmlat_steal_src - the figures a page is made of
 * @time_ns:	the calling vCPU's time in each state
 * @observed_ns: its time observed
 * @exits:	its exits
 * @vcpu:	its index in its VM
 * @host_ns:	the VM's type-1 steal taken by host tasks
 * @vms_ns:	... by other VMs' vCPUs (or VMs its table could not name)
 * @own_ns:	... by its own vCPUs
 * @top:	its exit reasons, the most handling time first
 * @nr_top:	how many of @top are set
 */
struct vmlat_steal_src {
	u64 time_ns[VMLAT_NR_STATES];
	u64 observed_ns;
	u64 exits;
	u32 vcpu;
	u64 host_ns;
	u64 vms_ns;
	u64 own_ns;
	struct vmlat_steal_exit top[VMLAT_HC_STEAL_TOP];
	unsigned int nr_top;
};

void vmlat_steal_gate_init(struct vmlat_steal_gate *g);
void vmlat_steal_gate_clear_stats(struct vmlat_steal_gate *g);
u64 vmlat_steal_gate(struct vmlat_steal_gate *g, u64 page, int cpl,
		     bool allowed, u64 now);
enum vmlat_steal_part vmlat_steal_page_part(u64 page);
void vmlat_steal_top_add(struct vmlat_steal_src *s,
			 const struct vmlat_steal_exit *x);
void vmlat_steal_page(const struct vmlat_steal_src *s, u64 page,
		      u64 out[4]);

#endif /* _VMLAT_STEAL_CALL_H */

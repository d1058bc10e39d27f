/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lock-holder preemption, suspected (lhp.c): a vCPU preempted while
 * another vCPU of its VM spun, as the CPU's pause-loop exiting (Intel) or
 * pause filter (AMD) tells by a PAUSE exit, or a Hyper-V guest by its
 * long-spin-wait call.
 */
#ifndef _VMLAT_LHP_H
#define _VMLAT_LHP_H

#include <linux/types.h>

#include "types.h"

struct vmlat_vcpu;

/**
 * struct vmlat_lhp - a vCPU's preemptions during which a sibling spun
 * @count:	its preemptions during which another vCPU of its VM made a
 *		PAUSE exit (or long-spin-wait call): lock-holder
 *		preemptions, suspected
 * @ns:		their durations
 * @max_ns:	the longest
 * @spins:	the siblings' PAUSE exits (and calls) during them
 * @max_by:	who held its CPU the longest during the longest (charge.h)
 * @reset_gen:	the reset the figures count from (vmlat_records_reset())
 *
 * Written under the vCPU's lock, at the end of a preemption; read under
 * it.
 */
struct vmlat_lhp {
	u64 count;
	u64 ns;
	u64 max_ns;
	u64 spins;
	struct vmlat_by max_by;
	u32 reset_gen;
};

void vmlat_lhp_spin(struct vmlat_vcpu *vc);
void vmlat_lhp_preempted(struct vmlat_vcpu *vc);
unsigned int vmlat_lhp_done(struct vmlat_vcpu *vc, u64 ns,
			    const struct vmlat_by *by);
void vmlat_lhp_event(struct vmlat_vcpu *vc, u64 ns, unsigned int spins,
		     const struct vmlat_by *by);
void vmlat_lhp_read(struct vmlat_vcpu *vc, struct vmlat_lhp *l);
void vmlat_lhp_add(struct vmlat_lhp *sum, const struct vmlat_lhp *l);

#endif /* _VMLAT_LHP_H */

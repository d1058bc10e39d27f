/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Work that probes ask for. Probes run with IRQs off, some under a
 * runqueue lock, where queueing a work item could wake a worker and
 * deadlock: they queue an irq_work, whose handler queues the work.
 * pool.c, records.c and tasks.c each have one.
 */
#ifndef _VMLAT_KICK_H
#define _VMLAT_KICK_H

#include <linux/irq_work.h>
#include <linux/workqueue.h>

#include "compat.h"

struct vmlat_kick {
	struct irq_work iw;
	struct work_struct work;
};

static inline void vmlat_kick_irq_workfn(struct irq_work *iw)
{
	struct vmlat_kick *k = container_of(iw, struct vmlat_kick, iw);

	queue_work(VMLAT_UNBOUND_WQ, &k->work);
}

/* A kick @name whose work runs @fn. */
#define VMLAT_KICK(name, fn)						\
	struct vmlat_kick name = {					\
		.iw = VMLAT_IRQ_WORK_INIT(vmlat_kick_irq_workfn),	\
		.work = __WORK_INITIALIZER(name.work, fn),		\
	}

/* Have @k's work run soon. Context: any, a probe's included. */
static inline void vmlat_kick(struct vmlat_kick *k)
{
	irq_work_queue(&k->iw);
}

/*
 * Wait for a kick in flight and cancel its work. Context: process
 * context, once nothing kicks @k any more.
 */
static inline void vmlat_kick_sync(struct vmlat_kick *k)
{
	irq_work_sync(&k->iw);
	cancel_work_sync(&k->work);
}

#endif /* _VMLAT_KICK_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Halt-polling (pure logic): see halt.h.
 */
#include "halt.h"

void vmlat_halt_init(struct vmlat_halt *h)
{
	memset(h, 0, sizeof(*h));
}

/* The statistics start again; a halt under way goes on. */
void vmlat_halt_reset(struct vmlat_halt *h)
{
	memset(&h->s, 0, sizeof(h->s));
}

/**
 * vmlat_halt_window() - KVM changed the vCPU's poll window
 * @h:		the vCPU's halts
 * @grow:	grown (or shrunk)
 * @old_ns:	the window before: the one the halt ending began with
 *
 * KVM changes it at most once a halt, after the halt and before its
 * kvm_vcpu_wakeup; the first change counts should two come.
 */
void vmlat_halt_window(struct vmlat_halt *h, bool grow, u32 old_ns)
{
	if (grow)
		h->s.grows++;
	else
		h->s.shrinks++;
	if (!h->window_set) {
		h->window_ns = old_ns;
		h->window_set = true;
	}
}

/**
 * vmlat_halt_ended() - KVM ended a halt of the vCPU
 * @h:		the vCPU's halts
 * @e:		the halt
 *
 * Return: the CPU time it polled (0: no poll, or unseen).
 */
u64 vmlat_halt_ended(struct vmlat_halt *h, const struct vmlat_halt_end *e)
{
	u32 window = h->window_set ? h->window_ns : e->window_ns;
	bool polled = e->may_poll && window;
	u64 halt_ns = e->halt_ns < e->now_ns ? e->halt_ns : e->now_ns;
	u64 start = e->now_ns - halt_ns;
	u64 asleep = h->asleep_ns;
	u64 poll = 0;

	h->s.halts++;
	if (!e->valid)
		h->s.invalid++;
	if (polled)
		h->s.polled++;
	if (!e->waited) {
		/* On CPU throughout: all of it polling, if polled. */
		if (polled) {
			poll = halt_ns;
			h->s.hits++;
			h->s.hit_ns += poll;
		}
	} else if (asleep && asleep <= e->now_ns) {
		h->s.slept++;
		h->s.slept_ns += e->now_ns - asleep;
		/*
		 * KVM's clock read that began the halt and the caller's may
		 * be apart by more than a halt that did not poll lasts before
		 * its sleep: none then.
		 */
		if (polled) {
			poll = asleep > start ? asleep - start : 0;
			h->s.miss_ns += poll;
		}
		/* Woken once asleep (or as it fell asleep): this halt's. */
		if (e->woken_ns >= asleep && e->woken_ns <= e->now_ns) {
			h->s.woken++;
			h->s.wake_ns += e->now_ns - e->woken_ns;
		}
	} else {
		h->s.slept++;
		h->s.unseen++;
	}
	h->asleep_ns = 0;
	h->window_set = false;
	return poll;
}

/* Add @s to @sum: a VM's halts are its vCPUs'. */
void vmlat_halt_add(struct vmlat_halt_stats *sum,
		    const struct vmlat_halt_stats *s)
{
	sum->halts += s->halts;
	sum->polled += s->polled;
	sum->hits += s->hits;
	sum->hit_ns += s->hit_ns;
	sum->miss_ns += s->miss_ns;
	sum->slept += s->slept;
	sum->slept_ns += s->slept_ns;
	sum->woken += s->woken;
	sum->wake_ns += s->wake_ns;
	sum->invalid += s->invalid;
	sum->grows += s->grows;
	sum->shrinks += s->shrinks;
	sum->unseen += s->unseen;
}

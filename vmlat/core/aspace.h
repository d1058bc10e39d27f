/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest address spaces (pure logic): which guest process a vCPU runs,
 * from the guest's CR3, and the time each one got ([P4] §5.8 GTA, [P3]).
 *
 * The host cannot see guest pids, but it can read the guest's CR3 at every
 * VM exit (kvm_x86.h): one page-table root per guest process, shared by
 * its threads. vmlat_as_key() makes it an address-space key: the PCID and
 * flag bits go, and so does the bit that tells the two halves of a process
 * under KPTI (its kernel and user page tables are the two 4 KiB halves of
 * one 8 KiB block).
 *
 * Attribution, per vCPU: the guest interval that ends at an exit, and the
 * host time that follows it until the next entry (exit handling, then
 * preemption or waiting if the vCPU loses its CPU) belong to the address
 * space read at that exit. A guest that switches processes between two
 * exits gives the whole interval to the second ([P4] reads CR3 at entry,
 * the same granularity). Idle and blocked time is the guest's own, not a
 * process's: not counted here.
 *
 * Each vCPU keeps a cursor: its current key and the vCPU's state times when
 * that key began. When the key changes, the difference is the old key's
 * stretch, added to its VM's table; readers add each vCPU's stretch in
 * progress themselves. The table is a space-saving top-k (topk.h) of
 * VMLAT_AS_SLOTS rows weighted by their total time: an address space with
 * more than 1/VMLAT_AS_SLOTS of the VM's time keeps its row, the rest goes
 * to "other" and is counted as evicted.
 */
#ifndef _VMLAT_ASPACE_H
#define _VMLAT_ASPACE_H

#include "pure.h"
#include "bucket.h"
#include "topk.h"

#define VMLAT_AS_SLOTS		16

/* The physical address bits of CR3 (bits 51..12); the rest is PCID/flags. */
#define VMLAT_AS_ADDR_MASK	0x000ffffffffff000ULL
/* KPTI: the user page table is the kernel one + 4 KiB (PTI_USER_PGTABLE_BIT). */
#define VMLAT_AS_PTI_BIT	0x1000ULL
/* A cursor without a key yet: no CR3 ever gives it (bits 0..11 are masked). */
#define VMLAT_AS_NONE		(~0ULL)

/**
 * vmlat_as_key() - the address-space key of a guest CR3
 * @cr3:	the guest's CR3
 * @fold_pti:	fold KPTI's two halves into one key: right for a guest that
 *		isolates page tables (each process's two roots are the halves
 *		of one 8 KiB block), and harmless for one that allocates every
 *		PGD as 8 KiB (Linux before 6.16 with KPTI built in); wrong for a
 *		guest that allocates 4 KiB PGDs (Linux 6.16 and later running
 *		without KPTI): two processes could have one key. The caller
 *		folds until its guest shows otherwise (vmlat_as_shows_whole()).
 */
static inline u64 vmlat_as_key(u64 cr3, bool fold_pti)
{
	u64 key = cr3 & VMLAT_AS_ADDR_MASK;

	return fold_pti ? key & ~VMLAT_AS_PTI_BIT : key;
}

/**
 * vmlat_as_shows_whole() - whether a guest's CR3 shows it does not use KPTI
 * @cr3:	the guest's CR3 at an exit
 * @user:	the exit was taken at CPL 3
 *
 * Under KPTI, user code runs on the user half of its process's block only:
 * bit 12 set. User code on a root with bit 12 clear shows a guest without
 * KPTI, whose roots are to be keyed whole: bit 12 is an address bit there
 * (Linux 6.16 and later allocates 4 KiB PGDs when it does not isolate).
 */
static inline bool vmlat_as_shows_whole(u64 cr3, bool user)
{
	return user && !(cr3 & VMLAT_AS_PTI_BIT);
}

/* What an address space's time is made of: its vCPU's state times. */
enum vmlat_as_time {
	VMLAT_AS_GUEST,		/* in guest: the process ran */
	VMLAT_AS_EXIT,		/* handling its exits in the host: type-2 steal */
	VMLAT_AS_PREEMPTED,	/* its vCPU preempted: type-1 steal */
	VMLAT_AS_WAIT,		/* its vCPU woken, waiting for a CPU: type-1 */
	VMLAT_NR_AS_TIMES
};

struct vmlat_as_times {
	u64 ns[VMLAT_NR_AS_TIMES];
};

/*
 * Exit handling by reason (type-2 steal, [P3]): a bounded list of
 * VMLAT_AS_REASONS reasons, each with its completed exits' handling time
 * and count, by topk.h's space-saving rule weighted by time. A reason
 * without an entry takes a free one, or else the entry of least weight,
 * whose time and count go to @other_ns and @other_count; the newcomer
 * inherits that weight. So a reason with more than 1/VMLAT_AS_REASONS of
 * the list's time has an entry, an entry's time and count are exact since
 * it took it, and the entries and "other" add up to every exit the list
 * was given. Not given: the exits of clock sync, undecoded exits, and an
 * exit in progress (VMLAT_AS_EXIT has them).
 */
#define VMLAT_AS_REASONS	6

/**
 * struct vmlat_as_reasons - an address space's exit handling by reason
 * @ns:		each entry's completed exits' handling time
 * @count:	how many exits
 * @weight:	@ns plus the weight the entry had when its reason took it
 * @other_ns:	the time of the reasons that lost their entry
 * @other_count: their exits
 * @slot:	the entry's exit slot (exit_codes.h) + 1; 0: free
 */
struct vmlat_as_reasons {
	u64 ns[VMLAT_AS_REASONS];
	u64 count[VMLAT_AS_REASONS];
	u64 weight[VMLAT_AS_REASONS];
	u64 other_ns;
	u64 other_count;
	u16 slot[VMLAT_AS_REASONS];
};

void vmlat_as_reasons_add(struct vmlat_as_reasons *r, u16 slot1, u64 ns,
			  u64 count);
void vmlat_as_reasons_merge(struct vmlat_as_reasons *to,
			    const struct vmlat_as_reasons *from);

/**
 * struct vmlat_as_cursor - a vCPU's current address space
 * @key:	its key, or VMLAT_AS_NONE before the first read
 * @base:	the vCPU's times when @key began
 * @reasons:	its exits completed since it began, by reason
 * @user:	@key was seen at CPL 3 since it began
 * @last:	the entry of @reasons the last exit found its reason in:
 *		looked at first (a hint, checked against the entry's slot)
 */
struct vmlat_as_cursor {
	u64 key;
	struct vmlat_as_times base;
	struct vmlat_as_reasons reasons;
	bool user;
	u8 last;
};

/**
 * struct vmlat_as_stretch - what a vCPU gave one address space
 * @key:	the address space
 * @user:	seen at CPL 3
 * @t:		its times
 * @reasons:	its exits by reason
 */
struct vmlat_as_stretch {
	u64 key;
	bool user;
	struct vmlat_as_times t;
	struct vmlat_as_reasons reasons;
};

/**
 * struct vmlat_as_row - one address space of a VM
 * @t:		its times
 * @reasons:	its exit handling by reason (of @t's VMLAT_AS_EXIT)
 * @slices:	stretches of a vCPU in it: from an exit that found the vCPU
 *		running it after another, to the exit that found another
 * @user:	it was seen running guest user code (CPL 3); never: only
 *		the guest kernel ran in it (its own page tables, or a
 *		process only ever seen in system calls)
 */
struct vmlat_as_row {
	struct vmlat_as_times t;
	struct vmlat_as_reasons reasons;
	u64 slices;
	bool user;
};

/**
 * struct vmlat_as_table - a VM's address spaces
 * @slot:	the top-k slots: key and weight (the row's total time)
 * @row:	each slot's row
 * @other:	the rows of address spaces that lost their slot
 * @other_weight: topk's "other" (the sum of @other's times)
 * @evicted:	address spaces that lost their slot
 */
struct vmlat_as_table {
	struct vmlat_topk_slot slot[VMLAT_AS_SLOTS];
	struct vmlat_as_row row[VMLAT_AS_SLOTS];
	struct vmlat_as_row other;
	u64 other_weight;
	u64 evicted;
};

void vmlat_as_cursor_init(struct vmlat_as_cursor *c);
bool vmlat_as_cursor_move(struct vmlat_as_cursor *c, u64 key,
			  const struct vmlat_as_times *now,
			  struct vmlat_as_stretch *s);
void vmlat_as_cursor_stretch(const struct vmlat_as_cursor *c,
			     const struct vmlat_as_times *now,
			     struct vmlat_as_stretch *s);

/**
 * vmlat_as_cursor_exit() - an exit of the cursor's address space completed
 * @c:		a vCPU's cursor
 * @slot:	its exit slot; < 0 (undecoded, clock sync): not counted
 * @ns:		its handling time
 *
 * At every exit: the reason found in the list is the inline case, the
 * last one's first (a guest's exits come in runs of one reason).
 */
static inline void vmlat_as_cursor_exit(struct vmlat_as_cursor *c, int slot,
					u64 ns)
{
	struct vmlat_as_reasons *r = &c->reasons;
	unsigned int i = c->last;

	if (slot < 0 || c->key == VMLAT_AS_NONE)
		return;
	/* @last: only ever an index of the loop below, or 0 */
	if (unlikely(r->slot[i] != slot + 1)) {
		for (i = 0; i < VMLAT_AS_REASONS; i++)
			if (r->slot[i] == slot + 1)
				break;
		if (i == VMLAT_AS_REASONS) {
			vmlat_as_reasons_add(r, slot + 1, ns, 1);
			return;
		}
		c->last = i;
	}
	r->ns[i] += ns;
	r->weight[i] += ns;
	r->count[i]++;
}

void vmlat_as_table_init(struct vmlat_as_table *t);
unsigned int vmlat_as_table_add(struct vmlat_as_table *t,
				const struct vmlat_as_stretch *s);
void vmlat_as_row_merge(struct vmlat_as_row *r,
			const struct vmlat_as_stretch *s);
int vmlat_as_table_find(const struct vmlat_as_table *t, u64 key);
unsigned int vmlat_as_table_rank(const struct vmlat_as_table *t,
				 u8 idx[VMLAT_AS_SLOTS]);
u64 vmlat_as_total(const struct vmlat_as_times *t);

/*
 * Names (hypercall/vmlat_hypercall.h, version 3): the guest module says
 * which process (tgid, comm) owns which page-table root. A call passes a
 * gate first (checks, rate), then sets its name in a bounded,
 * set-associative cache per VM: VMLAT_AS_NAME_SETS sets of
 * VMLAT_AS_NAME_WAYS names, a full set giving up its oldest name that is
 * not one of the table's rows. Nothing is counted by a name.
 *
 * A root said to be new (fork, exec) that has another process's name, or
 * no name but a row, was a process's that exited: its row and its name
 * are "ended", moved to a key no CR3 gives (a generation in bits 52..63),
 * and the root's next stretch starts a row of its own for the new process
 * (taking a slot: the least row may lose its own). Time of the root in a
 * vCPU's stretch in progress goes to the new process.
 */
#define VMLAT_AS_NAME_SETS	16
#define VMLAT_AS_NAME_WAYS	8
#define VMLAT_AS_NAMES		(VMLAT_AS_NAME_SETS * VMLAT_AS_NAME_WAYS)
#define VMLAT_AS_COMM_LEN	16
#define VMLAT_AS_GEN_SHIFT	52

/* An ended address space's key: never a CR3's. */
static inline bool vmlat_as_key_ended(u64 key)
{
	return key != VMLAT_AS_NONE && (key >> VMLAT_AS_GEN_SHIFT);
}

/**
 * struct vmlat_as_name - what the guest said of one root
 * @key:	the address-space key (an ended one keeps its name); 0: free
 * @stamp:	when it was set (the cache's clock): the oldest goes first
 * @tgid:	the process
 * @comm:	its name, NUL terminated
 */
struct vmlat_as_name {
	u64 key;
	u64 stamp;
	u32 tgid;
	char comm[VMLAT_AS_COMM_LEN];
};

/**
 * struct vmlat_as_name_args - one name hypercall as the guest made it
 * @root:	RCX: the page-table root, and VMLAT_HC_NAME_NEW
 * @tgid:	RDX
 * @comm:	RSI, RDI: the name's bytes 0..7 and 8..15
 * @cpl:	the privilege level it was made at; < 0: unknown
 */
struct vmlat_as_name_args {
	u64 root;
	u64 tgid;
	u64 comm[2];
	int cpl;
};

/**
 * struct vmlat_as_name_gate - what a name call goes through first
 * @rate:	rate limit (bucket.h)
 * @calls:	name hypercalls seen (@user included)
 * @user:	calls not made at CPL 0 (or of unknown CPL): ignored
 * @taken:	calls let through: their names set
 * @limited:	calls over the rate limit: ignored
 * @malformed:	calls with a field out of range: ignored
 *
 * Apart from the names (another lock in the glue): a guest making calls
 * as fast as it can contends only for the gate's lock, and at most
 * VMLAT_HC_NAME_RATE calls a second go further.
 */
struct vmlat_as_name_gate {
	struct vmlat_bucket rate;
	u64 calls;
	u64 user;
	u64 taken;
	u64 limited;
	u64 malformed;
};

/**
 * struct vmlat_as_names_stats - what became of a VM's name hypercalls
 * @calls:	name hypercalls seen (@user included)
 * @user:	calls not made at CPL 0 (or of unknown CPL): ignored
 * @taken:	names set
 * @limited:	calls over the rate limit: ignored
 * @malformed:	calls with a field out of range: ignored
 * @dropped:	names that gave up their place in the cache to newer ones
 * @ended:	address spaces ended: a new process had their root
 */
struct vmlat_as_names_stats {
	u64 calls;
	u64 user;
	u64 taken;
	u64 limited;
	u64 malformed;
	u64 dropped;
	u64 ended;
};

/**
 * struct vmlat_as_names - a VM's names
 * @set:	the cache
 * @clock:	its clock: one tick per name set
 * @gen:	the last generation an ended address space took
 * @whole:	the guest showed that it does not use KPTI: its roots are
 *		keyed whole (vmlat_as_key()), by its exits and by the names
 *		it gives; set once, read without the lock by the exits
 * @dropped:	names that gave up their place in the cache to newer ones
 * @ended:	address spaces ended: a new process had their root
 */
struct vmlat_as_names {
	struct vmlat_as_name set[VMLAT_AS_NAME_SETS][VMLAT_AS_NAME_WAYS];
	u64 clock;
	u16 gen;
	bool whole;
	u64 dropped;
	u64 ended;
};

/*
 * Whether @n's VM keys its roots whole, and to make it so: exits set it
 * without the VM's lock, names under it, readers read it without.
 */
static inline bool vmlat_as_names_whole(const struct vmlat_as_names *n)
{
	return READ_ONCE(n->whole);
}

static inline void vmlat_as_names_set_whole(struct vmlat_as_names *n)
{
	if (!READ_ONCE(n->whole))
		WRITE_ONCE(n->whole, true);
}

void vmlat_as_name_gate_init(struct vmlat_as_name_gate *g);
void vmlat_as_name_gate_clear_stats(struct vmlat_as_name_gate *g);
u64 vmlat_as_name_gate(struct vmlat_as_name_gate *g,
		       const struct vmlat_as_name_args *a, u64 now);
void vmlat_as_names_init(struct vmlat_as_names *n);
void vmlat_as_names_clear_stats(struct vmlat_as_names *n);
void vmlat_as_name_set(struct vmlat_as_names *n, struct vmlat_as_table *t,
		       const struct vmlat_as_name_args *a);
void vmlat_as_names_stats(const struct vmlat_as_name_gate *g,
			  const struct vmlat_as_names *n,
			  struct vmlat_as_names_stats *st);
const struct vmlat_as_name *vmlat_as_name_find(const struct vmlat_as_names *n,
					       u64 key);
unsigned int vmlat_as_names_count(const struct vmlat_as_names *n);

#endif /* _VMLAT_ASPACE_H */

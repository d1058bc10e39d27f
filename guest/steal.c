// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat_guest.ko: the guest's own steal, as the host measured it
 * (hypercall version 4, hypercall/vmlat_hypercall.h), when the host's
 * operator allows it (vmlat.ko's guest_steal).
 *
 * Each read of a file asks anew: on each online CPU, that vCPU's pages
 * (smp_call_function_single(): the call must come from the vCPU it is
 * about), then the VM's pages from any. At most VMLAT_HC_STEAL_TOP + 4
 * calls, and 3 per CPU: a read of a 64-CPU guest makes 204, within the
 * host's burst (VMLAT_HC_STEAL_BURST).
 *
 *   steal		a row per vCPU: type 1 (preempted, wait), type 2
 *			(host kernel, VMM), the rest of its time, its exits
 *   steal_takers	who took the VM's type-1 steal, as totals: host
 *			tasks, other VMs, the VM's own vCPUs
 *   steal_exits	the VM's exit reasons that took the most host time
 *   steal.json		all of it, as one document in the members of
 *			vmlat.ko's (schema 4) that the vmlat command reads:
 *			"vmlat report" run in the guest reads it
 *
 * Every figure is a total since the host's vmlat was loaded or reset.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/utsname.h>
#include <asm/kvm_para.h>

#include "doc_names.h"
#include "escape.h"
#include "exit_codes.h"
#include "steal_call.h"
#include "vmlat.h"
#include "vmlat_guest.h"
#include "vmlat_hypercall.h"

static const char *const vmlat_steal_states[VMLAT_NR_STATES] = {
	VMLAT_STATES(VMLAT_NAME_, VMLAT_COMMA_)
};

/* What the host said to the last call of a round, as a word. */
static const char *const vmlat_steal_replies[] = {
	[VMLAT_HC_CALL_TAKEN]		= "answered",
	[VMLAT_HC_CALL_LIMITED]		= "limited",
	[VMLAT_HC_CALL_MALFORMED]	= "malformed",
	[VMLAT_HC_CALL_REPLAYED]	= "malformed",
	[VMLAT_HC_CALL_DENIED]		= "denied",
};

/* The pages of a vCPU: VMLAT_HC_STEAL_P_STEAL .. _INFO. */
#define VMLAT_STEAL_VCPU_PAGES	(VMLAT_HC_STEAL_P_INFO + 1)

/**
 * struct vmlat_steal_vcpu - one CPU's answer
 * @reply:	the host's reply to its last call (0: none came)
 * @calls:	the calls it made
 * @page:	its pages
 */
struct vmlat_steal_vcpu {
	u64 reply;
	unsigned int calls;
	u64 page[VMLAT_STEAL_VCPU_PAGES][4];
};

/* The last round; vmlat_steal_lock's. */
static DEFINE_MUTEX(vmlat_steal_lock);
static struct {
	const char *state;	/* what the round got */
	unsigned int cpus;	/* CPUs asked */
	unsigned int answered;	/* ... that answered */
	struct vmlat_steal_vcpu *vcpu;	/* by CPU, nr_cpu_ids */
	u64 takers[4];
	u64 exits[VMLAT_HC_STEAL_TOP][4];
	unsigned int nr_exits;
	u64 rounds;
	u64 calls;
} sg;

static u64 vmlat_steal_hypercall(u64 page, u64 out[4])
{
	u64 rbx = VMLAT_HC_HDR_STEAL, rcx = page, rdx = 0, rsi = 0, rdi = 0;
	long ret;

	asm volatile(KVM_HYPERCALL
		     : "=a"(ret), "+b"(rbx), "+c"(rcx), "+d"(rdx), "+S"(rsi),
		       "+D"(rdi)
		     : "a"(VMLAT_HC_NR)
		     : "memory");
	out[0] = rcx;
	out[1] = rdx;
	out[2] = rsi;
	out[3] = rdi;
	/* RBX unchanged: no vmlat.ko that speaks version 4 saw it. */
	return VMLAT_HC_IS_REPLY(rbx) ? rbx : 0;
}

static bool vmlat_steal_taken(u64 reply)
{
	return reply == VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0);
}

/*
 * On the CPU asked about, in its IPI: its pages, until one is not taken.
 * The time observed (page 1) first: the figures of the pages after it
 * grew since by no more than it did.
 */
static void vmlat_steal_on_cpu(void *arg)
{
	static const unsigned int order[VMLAT_STEAL_VCPU_PAGES] = {
		VMLAT_HC_STEAL_P_TIME, VMLAT_HC_STEAL_P_STEAL,
		VMLAT_HC_STEAL_P_INFO,
	};
	struct vmlat_steal_vcpu *v = arg;
	unsigned int i, p;

	for (i = 0; i < VMLAT_STEAL_VCPU_PAGES; i++) {
		p = order[i];
		v->reply = vmlat_steal_hypercall(p, v->page[p]);
		v->calls++;
		if (!vmlat_steal_taken(v->reply))
			return;
	}
}

static const char *vmlat_steal_word(u64 reply)
{
	unsigned int call = VMLAT_HC_REPLY_CALL(reply);

	if (!reply)
		return "no-host";
	return call < ARRAY_SIZE(vmlat_steal_replies) &&
	       vmlat_steal_replies[call] ? vmlat_steal_replies[call] :
	       "malformed";
}

/*
 * A round of calls: every online CPU's pages if @vcpus, then the VM's.
 * Context: vmlat_steal_lock held.
 */
static void vmlat_steal_round(bool vcpus)
{
	const char *why = vmlat_guest_no_calls();
	u64 reply = 0, page[4];
	unsigned int cpu, r;

	sg.cpus = sg.answered = sg.nr_exits = 0;
	memset(sg.takers, 0, sizeof(sg.takers));
	/* No row of an earlier round: a CPU not asked this time has none. */
	memset(sg.vcpu, 0, nr_cpu_ids * sizeof(*sg.vcpu));
	if (why) {
		sg.state = why;
		return;
	}
	sg.rounds++;
	if (vcpus) {
		cpus_read_lock();
		sg.cpus = num_online_cpus();
		for_each_online_cpu(cpu) {
			struct vmlat_steal_vcpu *v = &sg.vcpu[cpu];

			if (smp_call_function_single(cpu, vmlat_steal_on_cpu,
						     v, 1))
				continue;
			sg.calls += v->calls;
			reply = v->reply;
			if (!vmlat_steal_taken(reply))
				break;
			sg.answered++;
		}
		cpus_read_unlock();
		if (sg.cpus && !sg.answered) {
			sg.state = vmlat_steal_word(reply);
			return;
		}
	}
	reply = vmlat_steal_hypercall(VMLAT_HC_STEAL_P_TAKERS, sg.takers);
	sg.calls++;
	for (r = 0; vmlat_steal_taken(reply) && r < VMLAT_HC_STEAL_TOP; r++) {
		reply = vmlat_steal_hypercall(VMLAT_HC_STEAL_P_EXITS + r, page);
		sg.calls++;
		if (!vmlat_steal_taken(reply) || !(page[0] >> 32))
			break;
		memcpy(sg.exits[sg.nr_exits++], page, sizeof(page));
	}
	sg.state = vmlat_steal_word(reply);
	if (vmlat_steal_taken(reply) && vcpus && sg.answered < sg.cpus)
		sg.state = "partly";
}

/* A vCPU's time in each state, from its pages (steal_call.h's layout). */
static void vmlat_steal_states_of(const struct vmlat_steal_vcpu *v,
				  u64 ns[VMLAT_NR_STATES], u64 *observed)
{
	unsigned int p, r, s;

	for (p = VMLAT_HC_STEAL_P_STEAL; p <= VMLAT_HC_STEAL_P_TIME; p++)
		for (r = 0; r < 4; r++) {
			s = vmlat_steal_vcpu_value(p, r);
			if (s == VMLAT_STEAL_OBSERVED)
				*observed = v->page[p][r];
			else
				ns[s] = v->page[p][r];
		}
}

/* The round's header line: what the host said, and this kernel's steal. */
static void vmlat_steal_header(struct seq_file *m)
{
	seq_printf(m, "# steal %s", sg.state);
	if (!strcmp(sg.state, "denied"))
		seq_puts(m, ": the host's vmlat does not allow this guest its steal (its guest_steal)");
	else if (!strcmp(sg.state, "no-host"))
		seq_puts(m, ": no vmlat that answers steal calls on the host");
	seq_printf(m, "; steal_accounting %s\n",
		   vmlat_guest_steal_accounting());
}

static bool vmlat_steal_vcpu_answered(unsigned int cpu)
{
	return vmlat_steal_taken(sg.vcpu[cpu].reply);
}

static int steal_show(struct seq_file *m, void *unused)
{
	u64 ns[VMLAT_NR_STATES], obs;
	unsigned int cpu;

	mutex_lock(&vmlat_steal_lock);
	vmlat_steal_round(true);
	vmlat_steal_header(m);
	seq_puts(m, "# cpu vcpu observed_ns ready_ns preempted_ns wait_ns handling_ns kernel_ns user_ns guest_ns idle_ns blocked_ns exits\n");
	for_each_possible_cpu(cpu) {
		const struct vmlat_steal_vcpu *v = &sg.vcpu[cpu];

		if (!sg.answered || !vmlat_steal_vcpu_answered(cpu))
			continue;
		vmlat_steal_states_of(v, ns, &obs);
		seq_printf(m, "%u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
			   cpu, v->page[VMLAT_HC_STEAL_P_INFO][1], obs,
			   ns[VMLAT_PREEMPTED] + ns[VMLAT_WAIT],
			   ns[VMLAT_PREEMPTED], ns[VMLAT_WAIT],
			   ns[VMLAT_KERNEL] + ns[VMLAT_USER], ns[VMLAT_KERNEL],
			   ns[VMLAT_USER], ns[VMLAT_GUEST], ns[VMLAT_IDLE],
			   ns[VMLAT_BLOCKED],
			   v->page[VMLAT_HC_STEAL_P_INFO][0]);
	}
	mutex_unlock(&vmlat_steal_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(steal);

static bool vmlat_steal_vm_answered(void)
{
	return !strcmp(sg.state, "answered") || !strcmp(sg.state, "partly");
}

static int steal_takers_show(struct seq_file *m, void *unused)
{
	mutex_lock(&vmlat_steal_lock);
	vmlat_steal_round(false);
	vmlat_steal_header(m);
	seq_puts(m, "# host_tasks_ns other_vms_ns own_vcpus_ns\n");
	if (vmlat_steal_vm_answered())
		seq_printf(m, "%llu %llu %llu\n", sg.takers[0], sg.takers[1],
			   sg.takers[2]);
	mutex_unlock(&vmlat_steal_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(steal_takers);

/* The name of the exit reason of a steal_exits page's first value. */
static void vmlat_steal_exit_names(u64 v, const char **isa,
				   const char **name)
{
	int slot = vmlat_exit_slot((u32)(v >> 32), (u32)v);

	*isa = vmlat_exit_isa_name((u32)(v >> 32));
	*name = slot >= 0 ? vmlat_exit_slot_name(slot) : "UNKNOWN";
}

static int steal_exits_show(struct seq_file *m, void *unused)
{
	const char *isa, *name;
	unsigned int i;

	mutex_lock(&vmlat_steal_lock);
	vmlat_steal_round(false);
	vmlat_steal_header(m);
	seq_puts(m, "# isa code name count total_ns\n");
	for (i = 0; i < sg.nr_exits; i++) {
		vmlat_steal_exit_names(sg.exits[i][0], &isa, &name);
		seq_printf(m, "%s %#x %s %llu %llu\n", isa,
			   (u32)sg.exits[i][0], name, sg.exits[i][1],
			   sg.exits[i][2]);
	}
	mutex_unlock(&vmlat_steal_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(steal_exits);

static void json_states(struct seq_file *m, const u64 ns[VMLAT_NR_STATES],
			u64 obs, u64 exits)
{
	unsigned int i;

	seq_printf(m, ",\"observed_ns\":%llu", obs);
	for (i = 0; i < VMLAT_NR_STATES; i++)
		seq_printf(m, ",\"%s_ns\":%llu", vmlat_steal_states[i], ns[i]);
	seq_printf(m, ",\"exits_total\":%llu", exits);
}

/* One string member, escaped as the host's names are (escape.h). */
static void json_str(struct seq_file *m, const char *key, const char *s)
{
	char buf[6 * __NEW_UTS_LEN + 1];

	vmlat_escape_json(buf, sizeof(buf), s, strnlen(s, __NEW_UTS_LEN));
	seq_printf(m, ",\"%s\":\"%s\"", key, buf);
}

static int steal_json_show(struct seq_file *m, void *unused)
{
	u64 ns[VMLAT_NR_STATES], sum[VMLAT_NR_STATES] = {}, obs, all_obs = 0;
	u64 exits = 0;
	const char *isa, *name;
	unsigned int cpu, i;
	bool first = true;

	mutex_lock(&vmlat_steal_lock);
	vmlat_steal_round(true);
	seq_printf(m, "{\"schema\":%d,\"version\":\"%s\",\"now_ns\":%llu,\"from\":\"guest\",\"guest\":{\"steal\":\"%s\",\"steal_accounting\":\"%s\",\"cpus\":%u,\"answered\":%u},\"vms\":[",
		   VMLAT_JSON_SCHEMA, VMLAT_VERSION,
		   ktime_get_mono_fast_ns(), sg.state,
		   vmlat_guest_steal_accounting(), sg.cpus, sg.answered);
	if (!vmlat_steal_vm_answered())
		goto out;
	for_each_possible_cpu(cpu) {
		if (!vmlat_steal_vcpu_answered(cpu))
			continue;
		vmlat_steal_states_of(&sg.vcpu[cpu], ns, &obs);
		for (i = 0; i < VMLAT_NR_STATES; i++)
			sum[i] += ns[i];
		all_obs += obs;
		exits += sg.vcpu[cpu].page[VMLAT_HC_STEAL_P_INFO][0];
	}
	seq_puts(m, "{\"id\":0,\"pid\":0");
	json_str(m, "comm", utsname()->nodename);
	seq_printf(m, ",\"exited\":false,\"partly_tracked\":%s",
		   sg.answered < sg.cpus ? "true" : "false");
	json_states(m, sum, all_obs, exits);
	seq_puts(m, ",\"vcpus\":[");
	for_each_possible_cpu(cpu) {
		const struct vmlat_steal_vcpu *v = &sg.vcpu[cpu];

		if (!vmlat_steal_vcpu_answered(cpu))
			continue;
		vmlat_steal_states_of(v, ns, &obs);
		seq_printf(m, "%s{\"vcpu\":%llu,\"cpu\":%u,\"tid\":0,\"state\":\"\"",
			   first ? "" : ",", v->page[VMLAT_HC_STEAL_P_INFO][1],
			   cpu);
		json_states(m, ns, obs, v->page[VMLAT_HC_STEAL_P_INFO][0]);
		seq_putc(m, '}');
		first = false;
	}
	seq_puts(m, "],\"exits\":[");
	for (i = 0; i < sg.nr_exits; i++) {
		vmlat_steal_exit_names(sg.exits[i][0], &isa, &name);
		seq_printf(m, "%s{\"isa\":\"%s\",\"code\":%u,\"name\":\"%s\",\"count\":%llu,\"total_ns\":%llu}",
			   i ? "," : "", isa, (u32)sg.exits[i][0], name,
			   sg.exits[i][1], sg.exits[i][2]);
	}
	seq_printf(m, "],\"stolen_by\":{\"host_ns\":%llu,\"vms\":[],\"other_ns\":%llu,\"own_ns\":%llu}",
		   sg.takers[0], sg.takers[1], sg.takers[2]);
	seq_printf(m, ",\"steal\":{\"ready_ns\":%llu,\"preempted_ns\":%llu,\"wait_ns\":%llu,\"handling_ns\":%llu,\"kernel_ns\":%llu,\"user_ns\":%llu}}",
		   sum[VMLAT_PREEMPTED] + sum[VMLAT_WAIT], sum[VMLAT_PREEMPTED],
		   sum[VMLAT_WAIT], sum[VMLAT_KERNEL] + sum[VMLAT_USER],
		   sum[VMLAT_KERNEL], sum[VMLAT_USER]);
out:
	seq_puts(m, "],\"dropped\":{\"vms\":0,\"vcpus\":0,\"victims\":0}}\n");
	mutex_unlock(&vmlat_steal_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(steal_json);

/**
 * vmlat_guest_steal_show_status() - the steal lines of the status file
 * @m:	the file
 */
void vmlat_guest_steal_show_status(struct seq_file *m)
{
	mutex_lock(&vmlat_steal_lock);
	seq_printf(m, "steal %s\n", sg.state);
	seq_printf(m, "steal_rounds %llu\n", sg.rounds);
	seq_printf(m, "steal_calls %llu\n", sg.calls);
	mutex_unlock(&vmlat_steal_lock);
}

/**
 * vmlat_guest_steal_create() - the steal files in @dir
 * @dir:	/sys/kernel/debug/vmlat_guest
 */
void vmlat_guest_steal_create(struct dentry *dir)
{
	sg.state = "not-asked";
	sg.vcpu = kcalloc(nr_cpu_ids, sizeof(*sg.vcpu), GFP_KERNEL);
	if (!sg.vcpu) {
		pr_warn("steal: no memory for %u CPUs' answers; no steal files\n",
			nr_cpu_ids);
		return;
	}
	debugfs_create_file("steal", 0444, dir, NULL, &steal_fops);
	debugfs_create_file("steal_takers", 0444, dir, NULL,
			    &steal_takers_fops);
	debugfs_create_file("steal_exits", 0444, dir, NULL, &steal_exits_fops);
	debugfs_create_file("steal.json", 0444, dir, NULL, &steal_json_fops);
}

/**
 * vmlat_guest_steal_stop() - free the answers
 *
 * Context: module unload, the debugfs files removed (no reader left).
 */
void vmlat_guest_steal_stop(void)
{
	kfree(sg.vcpu);
	sg.vcpu = NULL;
}

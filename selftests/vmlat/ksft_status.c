// SPDX-License-Identifier: GPL-2.0
/*
 * The vmlat debugfs status file (/sys/kernel/debug/vmlat/status), parsed
 * into one record per hook.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include "ksft_status.h"
#include "ksft_util.h"

/**
 * vmlat_debugfs_mounted() - is debugfs mounted at /sys/kernel/debug?
 *
 * Return: true if /sys/kernel/debug is a debugfs mount.
 */
bool vmlat_debugfs_mounted(void)
{
	struct statfs sfs;

	if (statfs("/sys/kernel/debug", &sfs))
		return false;
	return sfs.f_type == DEBUGFS_MAGIC;
}

const char *const vmlat_hook_names[VMLAT_NR_HOOKS] = {
	"kvm:kvm_entry",
	"kvm:kvm_exit",
	"kvm:kvm_userspace_exit",
	"kvm:kvm_hypercall",
	"kvm:kvm_hv_hypercall",
	"kvm:kvm_nested_vmenter",
	"kvm:kvm_nested_vmexit_inject",
	"kvmmmu:kvm_mmu_get_page",
	"kvm:kvm_apic_accept_irq",
	"kvm:kvm_inj_virq",
	"kvm:kvm_msi_set_irq",
	"kvm:kvm_set_irq",
	"kvm:kvm_halt_poll_ns",
	"kvm:kvm_vcpu_wakeup",
	"kvm:kvm_wait_lapic_expire",
	"sched:sched_switch",
	"sched:sched_waking",
	"sched:sched_wakeup",
	"sched:sched_wakeup_new",
	"sched:sched_migrate_task",
	"sched:sched_process_exit",
	"timer:hrtimer_expire_entry",
};

/**
 * vmlat_hook_is_kvm() - is @hook a tracepoint of kvm.ko?
 * @hook: "system:name"
 *
 * Return: true for the kvm: and kvmmmu: systems (they come and go with
 * kvm.ko), false for the built-in sched: ones.
 */
bool vmlat_hook_is_kvm(const char *hook)
{
	return !strncmp(hook, "kvm:", 4) || !strncmp(hook, "kvmmmu:", 7);
}

/* Parses "hook state hits detail..." (see the contract). */
static int parse_status_line(char *line, struct vmlat_hook_status *h)
{
	char state[16], hits[24], *end;
	int detail_at = -1;

	memset(h, 0, sizeof(*h));
	if (sscanf(line, "%63s %15s %23s %n", h->hook, state, hits,
		   &detail_at) != 3 || detail_at < 0)
		return -EPROTO;
	if (!strchr(h->hook, ':'))
		return -EPROTO;
	if (!strcmp(state, "attached"))
		h->attached = true;
	else if (strcmp(state, "detached"))
		return -EPROTO;
	if (!isdigit((unsigned char)hits[0]))
		return -EPROTO;
	errno = 0;
	h->hits = strtoull(hits, &end, 10);
	if (errno || *end)
		return -EPROTO;
	snprintf(h->detail, sizeof(h->detail), "%s", line + detail_at);
	vmlat_trim_right(h->detail);
	return h->detail[0] ? 0 : -EPROTO;
}

/**
 * vmlat_status_read() - parse /sys/kernel/debug/vmlat/status
 * @hooks: receives one record per hook line, in file order
 * @max:   capacity of @hooks
 * @nr:    receives the number of records filled
 *
 * Header lines (starting with '#') and blank lines are skipped.
 *
 * Return: 0; -ENOENT if vmlat is not loaded (or debugfs not mounted);
 * -EPROTO if a line does not follow the contract's format; -E2BIG if there
 * are more than @max hook lines; another negative errno on read errors.
 */
int vmlat_status_read(struct vmlat_hook_status *hooks, int max, int *nr)
{
	char *line = NULL;
	size_t cap = 0;
	int n = 0, ret = 0;
	FILE *f;

	*nr = 0;
	f = fopen(VMLAT_STATUS_PATH, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		vmlat_trim_right(line);
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (n == max) {
			ret = -E2BIG;
			break;
		}
		ret = parse_status_line(line, &hooks[n]);
		if (ret)
			break;
		n++;
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	*nr = n;
	return ret;
}

/**
 * vmlat_status_find() - the record of @hook
 * @hooks: records from vmlat_status_read()
 * @nr:    number of records
 * @hook:  "system:name"
 *
 * Return: the record, or NULL if @hook is not listed.
 */
const struct vmlat_hook_status *
vmlat_status_find(const struct vmlat_hook_status *hooks, int nr,
		  const char *hook)
{
	int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(hooks[i].hook, hook))
			return &hooks[i];
	return NULL;
}

/**
 * vmlat_prototype_nr_params() - number of parameters in a "(a, b, c)" detail
 * @detail: detail column of an attached hook: the prototype, and after it
 *	    what confirmed it if not BTF (" (5.10's; 1 args, no BTF)")
 *
 * Commas inside nested parentheses (function pointers) do not count.
 *
 * Return: number of parameters of the first parenthesised list ("()" and
 * "(void)" have 0), or -1 if @detail does not begin with one.
 */
int vmlat_prototype_nr_params(const char *detail)
{
	int depth = 1, nr = 1;
	const char *p;

	if (detail[0] != '(')
		return -1;
	if (!strncmp(detail, "()", 2) || !strncmp(detail, "(void)", 6))
		return 0;
	for (p = detail + 1; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && !--depth)
			return nr;
		else if (*p == ',' && depth == 1)
			nr++;
	}
	return -1;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * hooks_test - vmlat attaches to all its tracepoints, counts exactly what
 * ftrace counts, follows kvm.ko being reloaded, and can be unloaded while a
 * guest runs.
 *
 * ftrace is the oracle: it records the same tracepoints in a private
 * instance during the same run, so "vmlat's hits == ftrace's events" checks
 * vmlat's probes without trusting vmlat. The guest is the tiny guest of
 * ksft_kvm.c, whose exits are known one by one.
 *
 * Run as root in a KVM host (kvm + vendor module loaded) with
 * VMLAT_KO=<path of vmlat.ko>. Each test starts with vmlat unloaded and
 * restores what it found: vmlat loaded or not (a vmlat loaded beforehand is
 * reloaded from VMLAT_KO), the vendor module loaded with its "nested"
 * parameter. Tests skip when /dev/kvm, debugfs, tracefs or VMLAT_KO are
 * missing.
 *
 * Loaders vmlat cannot choose are played too: a loader in a mount namespace
 * of its own without /sys/kernel/btf (a chroot, a container, a service with
 * private mounts), and kvm loading at the same time as vmlat (udev loads
 * kvm_amd at boot while vmlat is loaded from modules-load.d).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ksft_ftrace.h"
#include "ksft_kvm.h"
#include "ksft_module.h"
#include "ksft_status.h"
#include "ksft_util.h"

/* ≈0.2 s of exits under TCG (100-200 us each), instant on hardware. */
#define GUEST_NR_IO		1000u
/* Per CPU; a kvm_exit + kvm_entry pair takes < 200 bytes. */
#define FTRACE_BUFFER_KB	4096u
#define DEV_KVM_WAIT_MS		30000u
/*
 * rmmod_while_guest_runs: guest run time and progress expectations. The
 * test stops the guest itself (progress->stop): GUEST_RUN_MAX_MS only
 * ends a guest whose test died, so it lies just inside the test's own
 * timeout (180 s), never within the test's run however slow a loaded
 * test host makes the module loads (it was 60 s: a guest that ended
 * before the last wait looked like one vmlat had stopped).
 * PROGRESS_WAIT_MS and DEV_KVM_WAIT_MS are liveness limits of polls that
 * return as soon as what they wait for happened: only a guest that
 * stopped (or a /dev/kvm that never came) waits that long.
 */
#define GUEST_RUN_MIN_MS	3000u	/* $VMLAT_GUEST_RUN_MIN_MS: less (bochs) */
#define GUEST_RUN_MAX_MS	170000u
#define PROGRESS_WAIT_MS	30000u
#define PROGRESS_STEP		50u
/* load_races_kvm_load: rounds, and the step of vmlat's start between them. */
#define RACE_ROUNDS		6u	/* $VMLAT_RACE_ROUNDS: fewer (bochs) */
#define RACE_STEP_MS		40

/*
 * The 6.1 harness runs the test body even when FIXTURE_SETUP() called
 * SKIP() (newer harnesses do not), so every body starts with this.
 */
#define RETURN_IF_SETUP_SKIPPED() do {		\
	if (_metadata->skip)			\
		return;				\
} while (0)

/* Prints the status file into the log, to go with a failed assertion. */
static void dump_status(void)
{
	char line[512];
	FILE *f = fopen(VMLAT_STATUS_PATH, "re");

	if (!f) {
		fprintf(stderr, "#   (%s: %s)\n", VMLAT_STATUS_PATH,
			strerror(errno));
		return;
	}
	fprintf(stderr, "#   %s:\n", VMLAT_STATUS_PATH);
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "#   | %s", line);
	fclose(f);
}

static void load_vmlat(struct __test_metadata *_metadata, const char *ko)
{
	int ret = vmlat_module_load(ko, NULL);

	ASSERT_EQ(0, ret) TH_LOG("insmod %s failed: %s", ko, strerror(-ret));
	ASSERT_TRUE(vmlat_path_exists(VMLAT_STATUS_PATH))
		TH_LOG("vmlat loaded but %s does not exist", VMLAT_STATUS_PATH);
}

static void unload_vmlat(struct __test_metadata *_metadata, const char *why)
{
	int ret = vmlat_module_unload("vmlat");

	ASSERT_EQ(0, ret) TH_LOG("rmmod vmlat %s failed: %s", why,
				 strerror(-ret));
}

static void read_status(struct __test_metadata *_metadata,
			struct vmlat_hook_status *hooks, int *nr)
{
	int ret = vmlat_status_read(hooks, VMLAT_NR_HOOKS * 2, nr);

	ASSERT_EQ(0, ret) {
		TH_LOG("cannot read %s: %s%s", VMLAT_STATUS_PATH,
		       strerror(-ret), ret == -EPROTO ?
		       " (a line does not follow the contract's format)" : "");
		dump_status();
	}
}

static const struct vmlat_hook_status *
get_hook(struct __test_metadata *_metadata, const struct vmlat_hook_status *hooks,
	 int nr, const char *name)
{
	const struct vmlat_hook_status *h = vmlat_status_find(hooks, nr, name);

	if (!h) {
		TH_LOG("hook %s is not listed in %s", name, VMLAT_STATUS_PATH);
		dump_status();
	}
	ASSERT_NE(NULL, h);
	return h;
}

static void expect_all_attached(struct __test_metadata *_metadata,
				const char *when)
{
	struct vmlat_hook_status hooks[VMLAT_NR_HOOKS * 2];
	const struct vmlat_hook_status *h;
	int i, nr;

	read_status(_metadata, hooks, &nr);
	EXPECT_EQ(VMLAT_NR_HOOKS, nr) {
		TH_LOG("%s: status lists %d hooks, the contract has %d",
		       when, nr, VMLAT_NR_HOOKS);
		dump_status();
	}
	for (i = 0; i < VMLAT_NR_HOOKS; i++) {
		h = get_hook(_metadata, hooks, nr, vmlat_hook_names[i]);
		/* A tracepoint this kernel has not (5.10: kvm_nested_vmrun). */
		if (!h->attached &&
		    !vmlat_tracefs_event_exists(vmlat_hook_names[i])) {
			TH_LOG("%s: %s: no such event in tracefs: detached (%s)",
			       when, h->hook, h->detail);
			continue;
		}
		EXPECT_TRUE(h->attached)
			TH_LOG("%s: hook %s is detached: %s", when, h->hook,
			       h->detail);
		EXPECT_EQ('(', h->detail[0])
			TH_LOG("%s: attached hook %s has detail '%s', expected its prototype '(...)'",
			       when, h->hook, h->detail);
	}
}

/* Loads the KVM vendor module again with the "nested" value found at start. */
static int load_vendor(const char *vendor, const char *nested)
{
	char params[64];
	uint64_t deadline_ms;
	int ret;

	snprintf(params, sizeof(params), "nested=%s", nested);
	ret = vmlat_modprobe(vendor, params);
	if (ret)
		return ret;
	/* devtmpfs creates the node during misc_register(); be lenient. */
	deadline_ms = vmlat_now_ms() + DEV_KVM_WAIT_MS;
	while (!vmlat_path_exists("/dev/kvm")) {
		if (vmlat_now_ms() > deadline_ms)
			return -ETIMEDOUT;
		usleep(10 * 1000);
	}
	return 0;
}

FIXTURE(vmlat) {
	bool armed;		/* setup recorded the state to restore */
	const char *ko;
	const char *vendor;	/* kvm_amd or kvm_intel */
	char nested[16];	/* its "nested" parameter at start */
	bool vmlat_was_loaded;
	pid_t guest_pid;
	struct vmlat_guest_progress *progress;
	struct vmlat_ftrace ft;
};

FIXTURE_SETUP(vmlat)
{
	int ret;

	self->guest_pid = -1;
	if (geteuid())
		SKIP(return, "needs root (modules, debugfs, tracefs)");
	self->ko = getenv("VMLAT_KO");
	if (!self->ko || !self->ko[0])
		SKIP(return, "VMLAT_KO (path of vmlat.ko) is not set");
	if (access(self->ko, R_OK))
		SKIP(return, "VMLAT_KO=%s: %s", self->ko, strerror(errno));
	if (!vmlat_path_exists("/dev/kvm"))
		SKIP(return, "/dev/kvm is missing (kvm not loaded?)");
	if (!vmlat_debugfs_mounted())
		SKIP(return, "debugfs is not mounted at /sys/kernel/debug");
	if (!vmlat_tracefs_root())
		SKIP(return, "tracefs is not mounted (the ftrace oracle needs it)");
	self->vendor = vmlat_kvm_vendor_module();
	if (!self->vendor || !vmlat_module_loaded(self->vendor))
		SKIP(return, "no KVM vendor module (kvm_amd/kvm_intel) is loaded");
	ret = vmlat_module_param_read(self->vendor, "nested", self->nested,
				      sizeof(self->nested));
	ASSERT_EQ(0, ret) TH_LOG("cannot read %s's nested parameter: %s",
				 self->vendor, strerror(-ret));

	self->vmlat_was_loaded = vmlat_module_loaded("vmlat");
	if (self->vmlat_was_loaded) {
		TH_LOG("vmlat is loaded: unloading it; it is reloaded from VMLAT_KO afterwards");
		unload_vmlat(_metadata, "(loaded before the test)");
	}
	self->armed = true;
}

FIXTURE_TEARDOWN(vmlat)
{
	int ret;

	if (self->guest_pid > 0) {
		kill(self->guest_pid, SIGKILL);
		waitpid(self->guest_pid, NULL, 0);
	}
	if (self->progress)
		munmap(self->progress, sizeof(*self->progress));
	vmlat_ftrace_close(&self->ft);
	if (!self->armed)
		return;

	if (vmlat_module_loaded("vmlat")) {
		ret = vmlat_module_unload("vmlat");
		EXPECT_EQ(0, ret) TH_LOG("teardown: rmmod vmlat failed: %s",
					 strerror(-ret));
	}
	if (!vmlat_module_loaded(self->vendor)) {
		ret = load_vendor(self->vendor, self->nested);
		EXPECT_EQ(0, ret) TH_LOG("teardown: modprobe %s nested=%s failed: %s",
					 self->vendor, self->nested,
					 strerror(-ret));
	}
	if (self->vmlat_was_loaded) {
		ret = vmlat_module_load(self->ko, NULL);
		EXPECT_EQ(0, ret) TH_LOG("teardown: reloading vmlat failed: %s",
					 strerror(-ret));
	}
}

/*
 * Runs GUEST_NR_IO guest exits while ftrace records kvm_exit and kvm_entry
 * in a private instance, and checks that vmlat's hits grew by exactly the
 * number of events ftrace recorded.
 */
static void check_hits_match_ftrace(struct __test_metadata *_metadata,
				    FIXTURE_DATA(vmlat) *self)
{
	static const char *const events[] = { "kvm:kvm_exit", "kvm:kvm_entry" };
	struct vmlat_hook_status hooks[VMLAT_NR_HOOKS * 2];
	uint64_t before[2], after[2], counts[2], lost, entries, total;
	const uint64_t nr_io = GUEST_NR_IO;
	struct vmlat_guest_stats st;
	int i, nr, ret;

	ret = vmlat_ftrace_open(&self->ft, FTRACE_BUFFER_KB);
	ASSERT_EQ(0, ret) TH_LOG("cannot create a tracing instance: %s",
				 strerror(-ret));
	for (i = 0; i < 2; i++) {
		ret = vmlat_ftrace_enable(&self->ft, events[i]);
		ASSERT_EQ(0, ret) TH_LOG("cannot enable ftrace event %s: %s",
					 events[i], strerror(-ret));
	}

	read_status(_metadata, hooks, &nr);
	for (i = 0; i < 2; i++)
		before[i] = get_hook(_metadata, hooks, nr, events[i])->hits;

	ASSERT_EQ(0, vmlat_ftrace_start(&self->ft));
	ret = vmlat_guest_run_exits(GUEST_NR_IO, &st);
	ASSERT_EQ(0, vmlat_ftrace_stop(&self->ft));
	ASSERT_EQ(0, ret) TH_LOG("tiny guest failed: %s", st.error);
	ASSERT_EQ(nr_io, st.io_exits);
	ASSERT_EQ(1ull, st.hlt_exits);

	read_status(_metadata, hooks, &nr);
	for (i = 0; i < 2; i++)
		after[i] = get_hook(_metadata, hooks, nr, events[i])->hits;

	ret = vmlat_ftrace_lost(&self->ft, &lost, &entries);
	ASSERT_EQ(0, ret) TH_LOG("cannot read the instance's per-CPU stats: %s",
				 strerror(-ret));
	ASSERT_EQ(0ull, lost)
		TH_LOG("ftrace lost %llu events: the oracle is incomplete (raise FTRACE_BUFFER_KB)",
		       (unsigned long long)lost);
	ret = vmlat_ftrace_count(&self->ft, counts, &total);
	ASSERT_EQ(0, ret) TH_LOG("cannot read the instance's trace: %s",
				 strerror(-ret));
	ASSERT_EQ(entries, total)
		TH_LOG("parsed %llu event lines from trace but the ring buffer holds %llu events: trace parsing is wrong",
		       (unsigned long long)total, (unsigned long long)entries);

	for (i = 0; i < 2; i++) {
		TH_LOG("%s: vmlat hits +%llu, ftrace events %llu",
		       events[i], (unsigned long long)(after[i] - before[i]),
		       (unsigned long long)counts[i]);
		EXPECT_EQ(counts[i], after[i] - before[i])
			TH_LOG("vmlat counted %llu %s hits for a guest run in which ftrace recorded %llu",
			       (unsigned long long)(after[i] - before[i]),
			       events[i], (unsigned long long)counts[i]);
		/* Every OUT is one exit and one re-entry; HLT one more exit. */
		EXPECT_GE(counts[i], nr_io)
			TH_LOG("ftrace recorded only %llu %s for a guest that made %llu I/O exits",
			       (unsigned long long)counts[i], events[i],
			       (unsigned long long)nr_io);
	}
	vmlat_ftrace_close(&self->ft);
}

/*
 * Checks the test's own instrument: without vmlat, the tiny guest makes
 * exactly the exits it is told to (each one checked by value).
 */
TEST(tiny_guest_makes_exact_exits)
{
	static const uint32_t nr_io[] = { 1, 2, GUEST_NR_IO };
	struct vmlat_guest_stats st;
	unsigned int i;
	int ret;

	if (!vmlat_path_exists("/dev/kvm"))
		SKIP(return, "/dev/kvm is missing (kvm not loaded?)");
	for (i = 0; i < ARRAY_SIZE(nr_io); i++) {
		ret = vmlat_guest_run_exits(nr_io[i], &st);
		ASSERT_EQ(0, ret) TH_LOG("tiny guest asked for %u I/O exits failed: %s",
					 nr_io[i], st.error);
		EXPECT_EQ((uint64_t)nr_io[i], st.io_exits);
		EXPECT_EQ(1ull, st.hlt_exits);
	}
}

/*
 * insmod vmlat with kvm loaded: all 22 hooks attached with a confirmed
 * prototype; kvm_entry's arity agrees with the event's format file; rmmod
 * removes the debugfs directory.
 */
TEST_F_TIMEOUT(vmlat, load_all_hooks_attached, 120)
{
	struct vmlat_hook_status hooks[VMLAT_NR_HOOKS * 2];
	const struct vmlat_hook_status *entry;
	int nr, has_field, nr_params;

	RETURN_IF_SETUP_SKIPPED();
	load_vmlat(_metadata, self->ko);
	expect_all_attached(_metadata, "after insmod");

	/* Independent oracle for vmlat's prototype check (6.9 added a bool,
	 * backported to 6.1.y and 6.6.y).
	 */
	has_field = vmlat_tracefs_event_has_field("kvm:kvm_entry",
						  "immediate_exit");
	ASSERT_LE(0, has_field) TH_LOG("cannot read kvm_entry's format file: %s",
				       strerror(-has_field));
	read_status(_metadata, hooks, &nr);
	entry = get_hook(_metadata, hooks, nr, "kvm:kvm_entry");
	nr_params = vmlat_prototype_nr_params(entry->detail);
	EXPECT_EQ(has_field ? 2 : 1, nr_params)
		TH_LOG("vmlat confirmed kvm_entry as %s, but the event's format %s an immediate_exit field",
		       entry->detail, has_field ? "has" : "has no");

	unload_vmlat(_metadata, "");
	EXPECT_FALSE(vmlat_path_exists(VMLAT_DEBUGFS_DIR))
		TH_LOG("%s still exists after rmmod vmlat", VMLAT_DEBUGFS_DIR);
}

/* vmlat's kvm_exit and kvm_entry hits equal ftrace's counts of those events. */
TEST_F_TIMEOUT(vmlat, kvm_exit_hits_match_ftrace, 120)
{
	RETURN_IF_SETUP_SKIPPED();
	load_vmlat(_metadata, self->ko);
	check_hits_match_ftrace(_metadata, self);
}

/*
 * rmmod kvm_amd kvm under a loaded vmlat detaches exactly the kvm.ko hooks;
 * modprobe reattaches them, hits stay cumulative and still match ftrace.
 */
TEST_F_TIMEOUT(vmlat, kvm_reload_reattaches, 180)
{
	struct vmlat_hook_status hooks[VMLAT_NR_HOOKS * 2];
	const struct vmlat_hook_status *h;
	struct vmlat_guest_stats st;
	uint64_t exit_hits;
	int i, nr, ret;

	RETURN_IF_SETUP_SKIPPED();
	if (!vmlat_module_loaded("kvm"))
		SKIP(return, "kvm is not a loaded module (built in?): cannot reload it");
	load_vmlat(_metadata, self->ko);
	/* Give the hits something to carry across the reload. */
	ret = vmlat_guest_run_exits(10, &st);
	ASSERT_EQ(0, ret) TH_LOG("tiny guest failed before the reload: %s",
				 st.error);
	read_status(_metadata, hooks, &nr);
	exit_hits = get_hook(_metadata, hooks, nr, "kvm:kvm_exit")->hits;

	ret = vmlat_module_unload(self->vendor);
	ASSERT_EQ(0, ret) TH_LOG("rmmod %s with vmlat loaded failed: %s",
				 self->vendor, strerror(-ret));
	ret = vmlat_module_unload("kvm");
	ASSERT_EQ(0, ret) TH_LOG("rmmod kvm with vmlat loaded failed: %s (does vmlat pin kvm.ko?)",
				 strerror(-ret));

	read_status(_metadata, hooks, &nr);
	for (i = 0; i < VMLAT_NR_HOOKS; i++) {
		h = get_hook(_metadata, hooks, nr, vmlat_hook_names[i]);
		if (vmlat_hook_is_kvm(h->hook)) {
			EXPECT_FALSE(h->attached)
				TH_LOG("%s is still attached after rmmod kvm", h->hook);
		} else {
			EXPECT_TRUE(h->attached)
				TH_LOG("%s got detached by rmmod kvm: %s", h->hook,
				       h->detail);
		}
	}

	ret = load_vendor(self->vendor, self->nested);
	ASSERT_EQ(0, ret) TH_LOG("modprobe %s nested=%s failed: %s", self->vendor,
				 self->nested, strerror(-ret));
	expect_all_attached(_metadata, "after modprobe of kvm");
	read_status(_metadata, hooks, &nr);
	EXPECT_LE(exit_hits, get_hook(_metadata, hooks, nr, "kvm:kvm_exit")->hits)
		TH_LOG("kvm_exit hits went down from %llu across the kvm reload; they must be cumulative",
		       (unsigned long long)exit_hits);

	check_hits_match_ftrace(_metadata, self);
}

/* Exit codes of the namespace child besides the errno it passes on. */
#define NS_CHILD_SETUP_FAILED	200
#define NS_CHILD_BTF_VISIBLE	201

/*
 * Runs @fn(@arg) in a child whose mount namespace has an empty tmpfs over
 * /sys/kernel/btf: what a loader in a chroot or container without the
 * host's /sys sees. The host's mounts are untouched (the child's are
 * private). Returns what @fn returned (0 or a negative errno), or -ECHILD
 * if the namespace could not be set up (logged).
 */
static int run_in_mount_ns_without_btf(struct __test_metadata *_metadata,
				       int (*fn)(const void *), const void *arg)
{
	int status, ret;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("vmlat-test", "/sys/kernel/btf", "tmpfs", 0, NULL))
			_exit(NS_CHILD_SETUP_FAILED);
		if (vmlat_path_exists("/sys/kernel/btf/vmlinux"))
			_exit(NS_CHILD_BTF_VISIBLE);
		ret = fn(arg);
		_exit(ret < 0 && -ret < NS_CHILD_SETUP_FAILED ? -ret : ret ? EIO : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFEXITED(status)) {
		TH_LOG("the namespace child died of signal %d", WTERMSIG(status));
		return -ECHILD;
	}
	switch (WEXITSTATUS(status)) {
	case NS_CHILD_SETUP_FAILED:
		TH_LOG("cannot set up a mount namespace with a tmpfs over /sys/kernel/btf");
		return -ECHILD;
	case NS_CHILD_BTF_VISIBLE:
		TH_LOG("/sys/kernel/btf/vmlinux still visible under the tmpfs");
		return -ECHILD;
	}
	return -WEXITSTATUS(status);
}

static int load_ko_fn(const void *ko)
{
	return vmlat_module_load(ko, NULL);
}

/*
 * insmod vmlat by a loader whose mount namespace has no /sys/kernel/btf:
 * vmlat reads BTF with the kernel's own root, not the loader's, so all
 * hooks attach (kvm's included, kvm being loaded already).
 */
TEST_F_TIMEOUT(vmlat, load_from_mount_ns_without_btf, 120)
{
	int ret;

	RETURN_IF_SETUP_SKIPPED();
	ret = run_in_mount_ns_without_btf(_metadata, load_ko_fn, self->ko);
	ASSERT_NE(-ECHILD, ret);
	ASSERT_EQ(0, ret)
		TH_LOG("insmod %s without /sys/kernel/btf in its namespace: %s",
		       self->ko, strerror(-ret));
	expect_all_attached(_metadata, "after insmod from another mount namespace");
}

struct vendor_load {
	const char *vendor;
	const char *nested;
};

static int load_vendor_fn(const void *arg)
{
	const struct vendor_load *vl = arg;

	return load_vendor(vl->vendor, vl->nested);
}

/* rmmod the vendor module and kvm if loaded; 0 or a negative errno. */
static int unload_kvm(const char *vendor)
{
	int ret = 0;

	if (vmlat_module_loaded(vendor))
		ret = vmlat_module_unload(vendor);
	if (!ret && vmlat_module_loaded("kvm"))
		ret = vmlat_module_unload("kvm");
	return ret;
}

/*
 * vmlat loaded first, then kvm loaded by a loader whose mount namespace has
 * no /sys/kernel/btf (the udev order, from a chroot or container): the kvm
 * hooks, attached in the loader's module notifier, attach all the same.
 */
TEST_F_TIMEOUT(vmlat, kvm_loaded_from_mount_ns_without_btf, 180)
{
	struct vendor_load vl = { self->vendor, self->nested };
	int ret;

	RETURN_IF_SETUP_SKIPPED();
	if (!vmlat_module_loaded("kvm"))
		SKIP(return, "kvm is not a loaded module (built in?): cannot reload it");
	load_vmlat(_metadata, self->ko);
	ret = unload_kvm(self->vendor);
	ASSERT_EQ(0, ret) TH_LOG("rmmod %s kvm failed: %s", self->vendor,
				 strerror(-ret));
	ret = run_in_mount_ns_without_btf(_metadata, load_vendor_fn, &vl);
	ASSERT_NE(-ECHILD, ret);
	ASSERT_EQ(0, ret)
		TH_LOG("modprobe %s without /sys/kernel/btf in its namespace: %s",
		       self->vendor, strerror(-ret));
	expect_all_attached(_metadata, "after modprobe of kvm from another mount namespace");
}

/* kvm's load state: "coming", "live", "going", or "absent". */
static void kvm_state(char *buf, size_t size)
{
	if (vmlat_read_line("/sys/module/kvm/initstate", buf, size))
		snprintf(buf, size, "absent");
}

/*
 * insmod vmlat and modprobe of kvm and the vendor module at once, vmlat
 * starting from 120 ms before modprobe to 80 ms after it, so that vmlat's
 * attach pass meets kvm in each phase of its load (not there yet, coming,
 * initialising, live) and kvm meets vmlat in each of its own. Every round
 * ends with every hook attached.
 */
TEST_F_TIMEOUT(vmlat, load_races_kvm_load, 300)
{
	struct vendor_load vl = { self->vendor, self->nested };
	char when[80], before[16], after[16];
	int status, ret, offset_ms;
	unsigned long long rounds;
	unsigned int round;
	pid_t pid;

	RETURN_IF_SETUP_SKIPPED();
	if (!vmlat_module_loaded("kvm"))
		SKIP(return, "kvm is not a loaded module (built in?): cannot reload it");
	ASSERT_EQ(0, vmlat_env_ull("VMLAT_RACE_ROUNDS", RACE_ROUNDS, &rounds))
		TH_LOG("VMLAT_RACE_ROUNDS is not a number");
	ASSERT_TRUE(rounds >= 1 && rounds <= RACE_ROUNDS)
		TH_LOG("VMLAT_RACE_ROUNDS=%llu: 1 to %u", rounds, RACE_ROUNDS);
	for (round = 0; round < rounds; round++) {
		/* vmlat's start minus modprobe's, in ms; with fewer rounds,
		 * spread over the same span */
		offset_ms = ((int)(round * RACE_ROUNDS / (unsigned int)rounds) -
			     (int)RACE_ROUNDS / 2) * RACE_STEP_MS;
		snprintf(when, sizeof(when), "round %u (insmod vmlat %+d ms after modprobe)",
			 round, offset_ms);
		ret = unload_kvm(self->vendor);
		ASSERT_EQ(0, ret) TH_LOG("%s: rmmod %s kvm failed: %s", when,
					 self->vendor, strerror(-ret));
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (offset_ms < 0)
				usleep(-offset_ms * 1000);
			_exit(-load_vendor_fn(&vl));
		}
		if (offset_ms > 0)
			usleep(offset_ms * 1000);
		kvm_state(before, sizeof(before));
		ret = vmlat_module_load(self->ko, NULL);
		kvm_state(after, sizeof(after));
		TH_LOG("%s: kvm %s before insmod vmlat, %s after", when, before,
		       after);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, ret) TH_LOG("%s: insmod %s failed: %s", when,
					 self->ko, strerror(-ret));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("%s: modprobe %s failed (status %#x)", when,
			       self->vendor, status);
		expect_all_attached(_metadata, when);
		unload_vmlat(_metadata, when);
	}
}

/* Waits until the guest has made more than @above I/O exits. */
static bool wait_progress(struct vmlat_guest_progress *pr, uint64_t above,
			  uint64_t *now)
{
	uint64_t deadline_ms = vmlat_now_ms() + PROGRESS_WAIT_MS;

	for (;;) {
		*now = __atomic_load_n(&pr->io_exits, __ATOMIC_ACQUIRE);
		if (*now > above)
			return true;
		if (vmlat_now_ms() > deadline_ms)
			return false;
		usleep(5 * 1000);
	}
}

static void guest_child(struct vmlat_guest_progress *pr)
{
	struct vmlat_guest_stats st;
	int ret = vmlat_guest_run_until(pr, GUEST_RUN_MAX_MS, &st);

	if (ret) {
		fprintf(stderr, "# guest child: %s\n", st.error);
		_exit(1);
	}
	if (st.io_exits != __atomic_load_n(&pr->io_exits, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "# guest child: saw %llu exits but published %llu\n",
			(unsigned long long)st.io_exits,
			(unsigned long long)pr->io_exits);
		_exit(2);
	}
	_exit(0);
}

/*
 * rmmod vmlat (then insmod + rmmod again) while a vCPU keeps exiting: the
 * guest keeps running and its process ends cleanly.
 */
TEST_F_TIMEOUT(vmlat, rmmod_while_guest_runs, 180)
{
	struct vmlat_hook_status hooks[VMLAT_NR_HOOKS * 2];
	uint64_t start_ms, now, seen, elapsed_ms;
	unsigned long long min_ms;
	int status = 0, nr;
	pid_t pid;

	RETURN_IF_SETUP_SKIPPED();
	load_vmlat(_metadata, self->ko);

	self->progress = mmap(NULL, sizeof(*self->progress),
			      PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->progress) {
		self->progress = NULL;	/* nothing for teardown to unmap */
	}
	memset(self->progress, 0, sizeof(*self->progress));
	fflush(stdout);
	fflush(stderr);
	start_ms = vmlat_now_ms();
	self->guest_pid = fork();
	ASSERT_LE(0, self->guest_pid);
	if (self->guest_pid == 0)
		guest_child(self->progress);

	ASSERT_TRUE(wait_progress(self->progress, 0, &seen))
		TH_LOG("the guest made no I/O exit within %u ms", PROGRESS_WAIT_MS);
	read_status(_metadata, hooks, &nr);
	EXPECT_LT(0ull, get_hook(_metadata, hooks, nr, "kvm:kvm_exit")->hits)
		TH_LOG("vmlat counted no kvm_exit while the guest was exiting");

	unload_vmlat(_metadata, "while a guest runs");
	now = __atomic_load_n(&self->progress->io_exits, __ATOMIC_ACQUIRE);
	ASSERT_TRUE(wait_progress(self->progress, now + PROGRESS_STEP, &seen))
		TH_LOG("the guest stopped at %llu exits after rmmod vmlat",
		       (unsigned long long)seen);

	load_vmlat(_metadata, self->ko);
	ASSERT_TRUE(wait_progress(self->progress, seen + PROGRESS_STEP, &seen))
		TH_LOG("the guest stopped at %llu exits after the second insmod vmlat",
		       (unsigned long long)seen);
	unload_vmlat(_metadata, "while a guest runs (second time)");
	now = __atomic_load_n(&self->progress->io_exits, __ATOMIC_ACQUIRE);
	ASSERT_TRUE(wait_progress(self->progress, now + PROGRESS_STEP, &seen))
		TH_LOG("the guest stopped at %llu exits after the second rmmod vmlat",
		       (unsigned long long)seen);

	/*
	 * The guest runs on for a while: its process must end cleanly after
	 * it. Bochs runs a guest making exits hundreds of times slower than
	 * real time: there the job asks for less.
	 */
	ASSERT_EQ(0, vmlat_env_ull("VMLAT_GUEST_RUN_MIN_MS", GUEST_RUN_MIN_MS,
				   &min_ms))
		TH_LOG("VMLAT_GUEST_RUN_MIN_MS is not a number");
	ASSERT_GE(GUEST_RUN_MIN_MS, min_ms)
		TH_LOG("VMLAT_GUEST_RUN_MIN_MS=%llu: at most %u", min_ms,
		       GUEST_RUN_MIN_MS);
	elapsed_ms = vmlat_now_ms() - start_ms;
	if (elapsed_ms < min_ms)
		usleep((min_ms - elapsed_ms) * 1000);
	__atomic_store_n(&self->progress->stop, 1, __ATOMIC_RELEASE);

	pid = self->guest_pid;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->guest_pid = -1;
	ASSERT_TRUE(WIFEXITED(status))
		TH_LOG("the guest process died of signal %d", WTERMSIG(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("the guest process failed (exit status %d, see its message above)",
		       WEXITSTATUS(status));
	now = __atomic_load_n(&self->progress->io_exits, __ATOMIC_ACQUIRE);
	TH_LOG("the guest made %llu I/O exits in %llu ms", (unsigned long long)now,
	       (unsigned long long)(vmlat_now_ms() - start_ms));
	EXPECT_LE(seen, now)
		TH_LOG("the guest reports %llu exits in total, fewer than the %llu seen while it ran",
		       (unsigned long long)now, (unsigned long long)seen);
}

TEST_HARNESS_MAIN

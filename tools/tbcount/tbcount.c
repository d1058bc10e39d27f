// SPDX-License-Identifier: GPL-2.0
/*
 * tbcount.so: a QEMU TCG plugin that counts the instructions the guest
 * executes in the kernel's module area, by translation block. tools/bench
 * loads it (-plugin tbcount.so,arg=out=FILE) in a test host under -icount
 * and tools/tbcount/attribute.py turns the blocks into vmlat's functions:
 * the exact count of vmlat's own instructions an exit round trip, by
 * function, where timing gives a total within the rounds' spread.
 *
 * At QEMU's exit it writes one line per block executed:
 * "<vaddr hex> <instructions> <executions>". With arg mark=PATH it counts
 * only what runs after PATH appears (the test host's job creates it on
 * the shared directory once vmlat is loaded, so that loading it does not
 * count): a thread looks for it every 10 ms. With arg from=ADDR (hex) it
 * counts from ADDR up instead of the module area's start: from the kernel
 * image's (ffffffff80000000), the kernel's own instructions too, which
 * a build whose probes return at once (the floor) tells from vmlat's
 * share by difference.
 *
 * Plugin API version 1 (QEMU 7.2, Debian 12's), declared here rather
 * than from qemu-plugin.h, which Debian does not ship: an inline counter
 * per block, which under -icount (one TCG thread) is exact. A QEMU whose
 * API left version 1 behind refuses to load it, and tools/bench says so.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;

#define EXPORTED __attribute__((visibility("default")))

EXPORTED int qemu_plugin_version = 1;

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
/* op 0: QEMU_PLUGIN_INLINE_ADD_U64 */
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      int op, void *ptr,
					      uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, void *userdata),
		void *userdata);

/* x86-64's module area: MODULES_VADDR, past the kernel image's 1 GiB */
#define MODULES_START	0xffffffffc0000000ULL
#define NR_BLOCKS	(1U << 20)

/* A block, by start and length (QEMU may translate one address twice). */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;
	uint64_t before;	/* execs when the mark appeared */
};

static struct block *blocks;
static uint64_t from = MODULES_START;	/* the lowest address counted */
static char out_path[4096] = "tbcount.txt";
static char mark_path[4096];

/* Counts from here: the executions so far are the mark's "before". */
static void *watch_mark(void *arg)
{
	unsigned int i;

	while (access(mark_path, F_OK))
		usleep(10000);
	for (i = 0; i < NR_BLOCKS; i++)
		blocks[i].before = __atomic_load_n(&blocks[i].execs,
						   __ATOMIC_RELAXED);
	return arg;
}

static struct block *block_of(uint64_t vaddr, uint64_t insns)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ULL) ^ insns;
	unsigned int i;

	for (i = 0; i < NR_BLOCKS; i++) {
		struct block *b = &blocks[(h + i) & (NR_BLOCKS - 1)];

		if (b->vaddr == vaddr && b->insns == insns)
			return b;
		if (!b->vaddr) {
			b->vaddr = vaddr;
			b->insns = insns;
			return b;
		}
	}
	return NULL;	/* full: the block goes uncounted */
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	if (vaddr < from)
		return;
	b = block_of(vaddr, qemu_plugin_tb_n_insns(tb));
	if (b)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, 0, &b->execs, 1);
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_path, "w");
	unsigned int i;

	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < NR_BLOCKS; i++)
		if (blocks[i].execs > blocks[i].before)
			fprintf(f, "%llx %llu %llu\n",
				(unsigned long long)blocks[i].vaddr,
				(unsigned long long)blocks[i].insns,
				(unsigned long long)(blocks[i].execs -
						     blocks[i].before));
	fclose(f);
}

EXPORTED int qemu_plugin_install(qemu_plugin_id_t id,
				 const struct qemu_info_t *info,
				 int argc, char **argv)
{
	pthread_t watcher;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			snprintf(out_path, sizeof(out_path), "%s", argv[i] + 4);
		} else if (!strncmp(argv[i], "from=", 5)) {
			from = strtoull(argv[i] + 5, NULL, 16);
		} else if (!strncmp(argv[i], "mark=", 5)) {
			snprintf(mark_path, sizeof(mark_path), "%s",
				 argv[i] + 5);
		} else {
			fprintf(stderr, "tbcount: unknown argument %s\n",
				argv[i]);
			return -1;
		}
	}
	blocks = calloc(NR_BLOCKS, sizeof(*blocks));
	if (!blocks)
		return -1;
	if (mark_path[0] &&
	    pthread_create(&watcher, NULL, watch_mark, NULL)) {
		fprintf(stderr, "tbcount: no thread to watch %s\n", mark_path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}

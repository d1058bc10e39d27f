// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat-btfproto: print tracepoint prototypes the way vmlat reads them.
 *
 *   vmlat-btfproto [-B BASE] BTF_FILE [TRACEPOINT...]
 *
 * With no TRACEPOINT, prints every btf_trace_* typedef of BTF_FILE as
 * "name|(args)". Uses vmlat's own parser (vmlat/core/btf.c), so it answers
 * "why did vmlat leave this hook detached?" on any kernel, and lets the
 * tests compare that parser with bpftool's over every real tracepoint.
 */
#include <stdio.h>
#include <stdlib.h>

#include "btf.h"

static void *slurp(const char *path, size_t *size)
{
	size_t cap = 1 << 20, len = 0, n;
	FILE *f = fopen(path, "rb");
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	*size = len;
	return buf;
}

static int load(struct vmlat_btf *btf, const char *path,
		const struct vmlat_btf *base)
{
	size_t size;
	void *data = slurp(path, &size);
	u32 nr, *offs;
	int err;

	if (!data) {
		perror(path);
		return -1;
	}
	err = vmlat_btf_count(data, size, &nr);
	offs = err ? NULL : calloc(nr + 1, sizeof(*offs));
	if (!err && offs)
		err = vmlat_btf_init(btf, data, size, base, offs, nr);
	if (err || !offs) {
		fprintf(stderr, "%s: not valid BTF (%d)\n", path, err);
		return -1;
	}
	return 0;
}

static int print_one(const struct vmlat_btf *btf, const char *tp)
{
	char buf[1024];
	int err = vmlat_btf_tp_proto(btf, tp, buf, sizeof(buf));

	if (err) {
		printf("%s|error %d\n", tp, err);
		return 1;
	}
	printf("%s|%s\n", tp, buf);
	return 0;
}

/* Every typedef named btf_trace_* in @btf itself (not its base). */
static int print_all(const struct vmlat_btf *btf)
{
	static const char prefix[] = "btf_trace_";
	int ret = 0;
	u32 i;

	for (i = 0; i < btf->nr_types; i++) {
		const struct btf_type *t = (const void *)(btf->types + btf->offs[i]);
		const char *name;

		if (BTF_INFO_KIND(t->info) != BTF_KIND_TYPEDEF ||
		    t->name_off < btf->start_str ||
		    t->name_off - btf->start_str >= btf->strs_len)
			continue;
		name = btf->strs + (t->name_off - btf->start_str);
		if (!strncmp(name, prefix, sizeof(prefix) - 1))
			ret |= print_one(btf, name + sizeof(prefix) - 1);
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct vmlat_btf base, btf;
	const char *base_path = NULL;
	int i = 1, ret = 0;

	if (argc > 2 && !strcmp(argv[1], "-B")) {
		base_path = argv[2];
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-B BASE] BTF_FILE [TRACEPOINT...]\n",
			argv[0]);
		return 2;
	}
	if (base_path && load(&base, base_path, NULL))
		return 1;
	if (load(&btf, argv[i], base_path ? &base : NULL))
		return 1;
	if (i + 1 == argc)
		return print_all(&btf);
	for (i++; i < argc; i++)
		ret |= print_one(&btf, argv[i]);
	return ret;
}

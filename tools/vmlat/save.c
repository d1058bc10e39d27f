// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat save: the module's document as it is, with the names this host
 * gives its VMs written into it, so that a report of it on another
 * machine names them as here (names.c looks up this host's /proc and
 * libvirt, which another machine does not have).
 *
 * Each VM object gains "name" (its libvirt domain's or QEMU's -name;
 * null: none, its comm names it), "libvirt" and "uuid" (null: none);
 * each vCPU object "thread" (its thread's name; null: unknown); the
 * document "saved" (the command's version and the host's name). Adding
 * members leaves the schema as it is (Documentation/vmlat.rst, json).
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <json-c/json.h>

#include "escape.h"
#include "vmlat.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: vmlat [-f FILE] save > FILE\n\n"
		"  Write the module's document, with this host's names of its VMs,\n"
		"  to standard output: 'vmlat -f FILE report' shows them on any\n"
		"  machine.\n"
		"  -h, --help  this text\n");
}

static const struct cmd_options save_cmd = {
	.name = "save",
	.usage = usage,
};

/*
 * @s as a JSON string, ill-formed UTF-8 replaced by U+FFFD as the module
 * does: a name is any bytes, a document is UTF-8. NULL for "".
 */
static json_object *name_string(const char *s)
{
	size_t len = strlen(s), o = 0, n;
	unsigned int bad;
	char buf[3 * 128 + 1];
	const unsigned char *p = (const unsigned char *)s;

	if (!len)
		return NULL;
	while (len && o + 3 < sizeof(buf)) {
		n = *p < 0x80 ? 1 : vmlat_utf8_seq(p, len, &bad);
		if (!n) {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			n = bad;
		} else if (o + n < sizeof(buf)) {
			memcpy(buf + o, p, n);
			o += n;
		} else {
			break;
		}
		p += n;
		len -= n;
	}
	buf[o] = '\0';
	return json_object_new_string(buf);
}

static void add_names(json_object *root, const struct snap *s)
{
	json_object *vms, *vo, *cs, *saved;
	struct utsname u;
	size_t i, j;

	if (!json_object_object_get_ex(root, "vms", &vms))
		return;
	for (i = 0; i < s->nr_vms; i++) {
		const struct vm *v = &s->vms[i];

		vo = json_object_array_get_idx(vms, i);
		json_object_object_add(vo, "name",
				       v->named ? name_string(v->name) : NULL);
		json_object_object_add(vo, "libvirt",
				       json_object_new_boolean(v->libvirt));
		json_object_object_add(vo, "uuid", v->uuid[0] ?
				       json_object_new_string(v->uuid) : NULL);
		if (!json_object_object_get_ex(vo, "vcpus", &cs))
			continue;
		for (j = 0; j < v->nr_vcpus; j++)
			json_object_object_add(json_object_array_get_idx(cs, j),
					       "thread",
					       name_string(v->vcpus[j].thread));
	}
	saved = json_object_new_object();
	json_object_object_add(saved, "by",
			       json_object_new_string("vmlat " VMLAT_CMD_VERSION));
	json_object_object_add(saved, "host", uname(&u) ? NULL :
			       name_string(u.nodename));
	json_object_object_add(root, "saved", saved);
}

int cmd_save(int argc, char **argv)
{
	struct common_params common = { 0 };
	struct snap s;
	int ret;

	ret = common_parse_options(argc, argv, &save_cmd, &common);
	if (ret >= 0)
		return ret;
	if (common.filter)
		return common_refuse("save", "%s: it saves every VM, and takes no VM",
				     common.filter);
	snap_keep_doc = true;
	ret = vmlat_read(&s);
	snap_keep_doc = false;
	if (ret)
		return EXIT_ERR;
	add_names(s.doc, &s);
	ret = puts(json_object_to_json_string_ext(s.doc,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	snap_free(&s);
	if (ret < 0 || fflush(stdout)) {
		perror("vmlat: save: standard output");
		return EXIT_ERR;
	}
	return 0;
}

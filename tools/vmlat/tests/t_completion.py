# SPDX-License-Identifier: GPL-2.0
"""The bash completion (completion/vmlat), driven as bash drives it:
COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT set, _vmlat called, its
COMPREPLY read. In a non-interactive bash, with bash-completion's helpers
(if installed) and without them. What it offers is held to the -h texts:
the commands, every option of each, the values of top -o and -s, hist -k,
export --detail and plot -t; files for -f, directories for plot -o; VMs
from the recorded /proc and libvirt directories of the fixtures, and a
hostile VM name quoted, not run."""
import os
import shlex
import shutil
import subprocess
import tempfile

from cmdtest import FIXTURES, HERE
from helptext import Help

COMPLETION = os.path.normpath(os.path.join(HERE, "..", "completion",
                                           "vmlat"))
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
SEP = "--- vmlat completion test ---"


def complete(queries, helpers, env=None):
    """[COMPREPLY] of each query (the words of a command line, the last
    the one completed) in one bash; with bash-completion's helpers if
    HELPERS."""
    script = ["set +o history"]
    if helpers:
        script.append(". %s" % shlex.quote(BASH_COMPLETION))
    script.append(". %s" % shlex.quote(COMPLETION))
    script.append("""q() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMP_TYPE=9 COMP_KEY=9
	COMPREPLY=()
	_vmlat vmlat "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	printf '%s\\n' "${COMPREPLY[@]}"
	echo '""" + SEP + """'
}""")
    for words in queries:
        script.append("q " + " ".join(shlex.quote(w) for w in words))
    e = dict(os.environ)
    e.pop("BASH_ENV", None)
    if env:
        e.update(env)
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                        "\n".join(script)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=e, timeout=60)
    out = p.stdout.decode("utf-8", "replace").split(SEP + "\n")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0 or err or len(out) != len(queries) + 1:
        raise RuntimeError("bash: exit %d: %s" % (p.returncode, err[:300]))
    return [[w for w in o.split("\n") if w] for o in out[:-1]]


def fixture_vms():
    """The VMs of the fixtures as the completion should offer them: the
    libvirt domains (pid files), and each QEMU of /proc, by pid and by
    its -name (guest=NAME,...)."""
    names, pids = set(), set()
    for f in os.listdir(os.path.join(FIXTURES, "libvirt")):
        if f.endswith(".pid"):
            names.add(f[:-4])
    proc = os.path.join(FIXTURES, "proc")
    for pid in os.listdir(proc):
        with open(os.path.join(proc, pid, "cmdline"), "rb") as f:
            args = f.read().decode().split("\0")
        if not os.path.basename(args[0]).startswith("qemu"):
            continue
        pids.add(pid)
        for i, a in enumerate(args[:-1]):
            if a in ("-name", "--name"):
                n = args[i + 1]
                n = n[len("guest="):] if n.startswith("guest=") else n
                names.add(n.split(",")[0])
    return names, pids


def run(ctx):
    if not shutil.which("bash"):
        ctx.skip("completion", "no bash")
        return
    help_ = Help(ctx)
    modes = [("plain", False)]
    if os.path.isfile(BASH_COMPLETION):
        modes.insert(0, ("bash_completion", True))
    else:
        ctx.skip("completion.bash_completion",
                 "no %s (bash-completion)" % BASH_COMPLETION)
    tmp = tempfile.mkdtemp(prefix="vmlat-comp-")
    try:
        for f in ("doc-a.json", "doc-b.json", "dfile"):
            open(os.path.join(tmp, f), "w").close()
        os.mkdir(os.path.join(tmp, "dplots"))
        # A QEMU that names itself to run a command in the shell that
        # completes, and a libvirt directory of nothing.
        evil = os.path.join(tmp, "proc")
        pwned = os.path.join(tmp, "pwned")
        os.makedirs(os.path.join(evil, "4242"))
        with open(os.path.join(evil, "4242", "cmdline"), "wb") as f:
            f.write(b"qemu-system-x86_64\0-name\0guest=$(touch %s),x=y\0"
                    % pwned.encode())
        for name, helpers in modes:
            run_mode(ctx, help_, tmp, "completion.%s" % name, helpers)
            got = complete([["vmlat", "report", ""]], helpers, env={
                "VMLAT_PROC": evil, "VMLAT_LIBVIRT_RUN": tmp + "/none"})[0]
            made = os.path.exists(pwned)
            ctx.check(not made and sorted(got) == sorted([
                "4242", r"\$\(touch\ %s\)" % pwned]),
                      "completion.%s.hostile_name" % name,
                      "offers %r; %s %s" % (got, pwned,
                                            "made" if made else "not made"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_mode(ctx, help_, tmp, name, helpers):
    names, pids = fixture_vms()
    queries = [
        ("commands", ["vmlat", ""]),
        ("globals", ["vmlat", "-"]),
        ("after_f", ["vmlat", "-f", "x.json", ""]),
        ("files", ["vmlat", "-f", tmp + "/doc-"]),
        ("top_o", ["vmlat", "top", "-o", ""]),
        ("top_o_after_f", ["vmlat", "-f", "x.json", "top", "-b", "-o", ""]),
        ("top_s", ["vmlat", "top", "-s", ""]),
        ("hist_k", ["vmlat", "hist", "-k", ""]),
        ("detail", ["vmlat", "export", "--detail", ""]),
        ("detail_list", ["vmlat", "export", "--detail", "vcpu,re"]),
        ("plot_t", ["vmlat", "plot", "-t", ""]),
        ("plot_o", ["vmlat", "plot", "-o", tmp + "/d"]),
        ("export_o", ["vmlat", "export", "-o", tmp + "/d"]),
        ("vms", ["vmlat", "report", ""]),
        ("vms_after_options", ["vmlat", "top", "-b", "-n", "2", ""]),
        ("one_vm", ["vmlat", "report", "web1", ""]),
        ("top_p", ["vmlat", "top", "-p", ""]),
    ]
    for cmd in help_.commands:
        queries.append(("options." + cmd, ["vmlat", cmd, "-"]))
    try:
        got = complete([q for _, q in queries], helpers, env={
            "VMLAT_PROC": os.path.join(FIXTURES, "proc"),
            "VMLAT_LIBVIRT_RUN": os.path.join(FIXTURES, "libvirt")})
    except RuntimeError as e:
        ctx.check(False, name + ".runs", e)
        return
    r = dict(zip([n for n, _ in queries], got))

    def same(what, expected):
        ctx.check(sorted(r[what]) == sorted(expected), "%s.%s" % (name, what),
                  "offers %s, expected %s" % (r[what], sorted(expected)))

    def offers(what, expected):
        missing = sorted(set(expected) - set(r[what]))
        ctx.check(expected and not missing, "%s.%s" % (name, what),
                  "offers %s, not %s" % (r[what], missing))

    same("commands", help_.commands)
    offers("globals", help_.globals)
    same("after_f", help_.commands)
    same("files", [tmp + "/doc-a.json", tmp + "/doc-b.json"])
    same("top_o", help_.usage_values("top", "-o") or ["?"])
    same("top_o_after_f", help_.usage_values("top", "-o") or ["?"])
    same("top_s", help_.sort_keys())
    same("hist_k", help_.kinds() + ["exit:"])
    same("detail", help_.details())
    same("detail_list", ["vcpu,reason"])
    same("plot_t", help_.usage_values("plot", "-t") or ["?"])
    same("plot_o", [tmp + "/dplots"])
    same("export_o", [tmp + f for f in ("/doc-a.json", "/doc-b.json",
                                         "/dfile", "/dplots")])
    same("vms", names | pids)
    same("vms_after_options", names | pids)
    same("one_vm", [])
    same("top_p", pids)
    for cmd in help_.commands:
        offers("options." + cmd, help_.options[cmd])

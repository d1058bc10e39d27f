# SPDX-License-Identifier: GPL-2.0
"""What "vmlat -h" and "vmlat COMMAND -h" say: the commands, each one's
options and the values of those that take one of a fixed set. The man
page's and the completion's tests hold them to it, so that an option
added to a -h text without its documentation or completion fails."""
import re

# An option as the texts write it: -f, --detail (not "type-1", "hist-NAME").
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _text(ctx, args):
    rc, out, err = ctx.run(args)
    if rc != 0:
        raise RuntimeError("vmlat %s: exit %d: %s" % (" ".join(args), rc,
                                                       err.strip()))
    return out


def _options(text):
    """The options of a -h text: those of its usage line and those that
    begin its option lines (the first column, before two blanks)."""
    opts = set()
    for line in text.splitlines():
        if line.startswith("usage:"):
            opts.update(OPTION.findall(line))
            continue
        m = re.match(r"^( {1,4})(-\S.*?)(?: {2,}|$)", line)
        if m:
            opts.update(OPTION.findall(m.group(2)))
    return opts


class Help:
    """@commands: the commands "vmlat -h" lists, in its order; @globals:
    its options; @options[cmd]: what "vmlat CMD -h" lists (its usage line
    and option lines); @text[cmd]: that text ("" for vmlat's own)."""

    def __init__(self, ctx):
        top = _text(ctx, ["-h"])
        self.text = {"": top}
        self.commands = re.findall(r"^  ([a-z][a-z0-9_-]*) {2,}\S", top,
                                   re.M)
        self.globals = _options(top)
        self.options = {}
        for cmd in self.commands:
            self.text[cmd] = _text(ctx, [cmd, "-h"])
            self.options[cmd] = _options(self.text[cmd])

    def usage_values(self, cmd, opt):
        """The values of OPT that CMD's usage line gives as a|b|c."""
        m = re.search(r"\[%s ([\w]+(?:\|[\w]+)+)\]" % re.escape(opt),
                      self.text[cmd])
        return m.group(1).split("|") if m else None

    def option_text(self, cmd, opt):
        """The text of OPT's option line in CMD's -h, with the lines that
        continue it (deeper than the option column, up to the next
        option), blanks collapsed."""
        lines = self.text[cmd].splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^ {1,4}(-\S.*)$", line)
            if not m or opt not in OPTION.findall(
                    re.split(r" {2,}", m.group(1))[0]):
                continue
            out = [m.group(1)]
            for more in lines[i + 1:]:
                if not re.match(r"^ {5,}\S", more):
                    break
                out.append(more.strip())
            return " ".join(" ".join(out).split())
        return None

    def sort_keys(self):
        """top -s KEY: "sort by steal (...), name, pid, ..., exits, p99"."""
        t = self.option_text("top", "-s")
        t = re.sub(r"\([^)]*\)", "", t.split("sort by", 1)[1])
        return [w.strip() for w in re.split(r",|\bor\b", t) if w.strip()]

    def kinds(self):
        """hist -k KIND: "one kind: preempt, wait, ..., or exit:REASON"."""
        t = self.option_text("hist", "-k")
        t = t.split("one kind:", 1)[1].split(" or ", 1)[0]
        return [w.strip() for w in t.split(",") if w.strip()]

    def details(self):
        """export --detail LIST: the names listed under it, one a line."""
        lines = self.text["export"].splitlines()
        for i, line in enumerate(lines):
            if re.match(r"^ {1,4}--detail ", line):
                break
        else:
            return []
        names = []
        for line in lines[i + 1:]:
            m = re.match(r"^ {6,}([a-z]\w*) {2,}\S", line)
            if not m:
                break
            names.append(m.group(1))
        return names

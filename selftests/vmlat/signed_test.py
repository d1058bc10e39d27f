#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""signed_test.py - vmlat on a kernel that loads only signed modules.

Runs on the debug kernel, which trusts the project's test key
(CONFIG_SYSTEM_TRUSTED_KEYS), enforcing module signatures under lockdown
as a Secure Boot host does: selftests/run's debug-signed boot has
module.sig_enforce=1 lockdown=integrity on its command line; in make
check's debug-b host, guest-job.sh runs this test last with
$VMLAT_ENFORCE_SIGNATURES=1, and the test enforces both itself (Y written
to /sys/module/module/parameters/sig_enforce, integrity to the lockdown
file: what the kernel checks at each module load, and neither can be
undone before a reboot). The suite loads $VMLAT_KO, signed with that key
by selftests/run (sign-file); $VMLAT_KO_UNSIGNED is the same build
unsigned, $VMLAT_KO_OTHER_KEY the same build signed with a key the
kernel does not trust (an operator's MOK key that was never enrolled).
Unless signatures are enforced (sig_enforce is Y) under lockdown
([integrity]), the whole test skips before loading anything.

  signed-loaded:     the signed vmlat is loaded: the kernel did not taint
                     it as unsigned (no E in /sys/module/vmlat/taint),
                     modinfo reads the test key's signer from it, and its
                     statistics read under lockdown.
  unsigned-refused:  the unsigned build is refused: insmod "Key was
                     rejected by service" (EKEYREJECTED), the kernel's
                     "Loading of unsigned module is rejected", not loaded.
  other-key-refused: the build signed with an untrusted key is refused:
                     EKEYREJECTED, "Loading of module with unavailable key
                     is rejected", not loaded.
  tampered-refused:  the signed module with one byte of its code changed
                     is refused (its signature no longer matches):
                     EKEYREJECTED, not loaded.
  signed-reloads:    after those refusals the signed vmlat loads again.

Needs root; TAP output; exit status 4 when everything was skipped.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (LOCKDOWN, VMLAT, dmesg, insmod,  # noqa: E402
                         lockdown_level, main, rd, rmmod, tap, wr)

KO = os.environ.get("VMLAT_KO", "")
UNSIGNED = os.environ.get("VMLAT_KO_UNSIGNED", "")
OTHER_KEY = os.environ.get("VMLAT_KO_OTHER_KEY", "")
SIG_ENFORCE = "/sys/module/module/parameters/sig_enforce"
SIGNER = "vmlat test signing key"
REJECTED = "Key was rejected by service"     # strerror(EKEYREJECTED)


def enforce():
    """With $VMLAT_ENFORCE_SIGNATURES=1, on a kernel that checks module
    signatures and trusts $VMLAT_KO's key: enforce signatures, then
    lockdown integrity, where the boot did not (sig_enforce only goes
    from N to Y; lockdown only up). Both stay until reboot."""
    if os.environ.get("VMLAT_ENFORCE_SIGNATURES") != "1" or \
            not os.path.exists(SIG_ENFORCE):
        return
    if rd(SIG_ENFORCE).strip() != "Y":
        wr(SIG_ENFORCE, "1")
    if lockdown_level() == "none":
        wr(LOCKDOWN, "integrity")


def enforcing():
    """Whether signatures are enforced under lockdown, and why not."""
    if not os.path.exists(SIG_ENFORCE):
        return False, "this kernel does not check module signatures"
    if rd(SIG_ENFORCE).strip() != "Y":
        return False, "module signatures are not enforced (module.sig_enforce)"
    if lockdown_level() != "integrity":
        return False, "the kernel is not locked down to integrity"
    if not (UNSIGNED and OTHER_KEY):
        return False, "no $VMLAT_KO_UNSIGNED and $VMLAT_KO_OTHER_KEY"
    return True, ""


def loaded():
    return os.path.isdir("/sys/module/vmlat")


def refused(name, ko, message):
    """KO is refused: insmod fails (with REJECTED), vmlat is not loaded,
    and the kernel logs MESSAGE (if any)."""
    if loaded() and rmmod():
        raise RuntimeError("rmmod vmlat failed")
    dmesg(clear=True)
    rc, err = insmod(ko)
    log = dmesg()
    now = loaded()
    tap(rc != 0 and REJECTED in err and not now and
        (message is None or message in log), name,
        "insmod %d (%s), loaded %s; kernel log: %r" %
        (rc, err[-100:], now, log.strip()[-200:]))


def test_signed_loaded():
    taint = rd("/sys/module/vmlat/taint").strip()
    signer = subprocess.run(["modinfo", "-F", "signer", KO],
                            stdout=subprocess.PIPE,
                            universal_newlines=True).stdout.strip()
    exit_hook = [ln.split()[1] for ln in rd(VMLAT + "/status").splitlines()
                 if ln.startswith("kvm:kvm_exit ")]
    tap("E" not in taint and signer == SIGNER and exit_hook == ["attached"],
        "signed-loaded", "taint %r, signer %r, kvm:kvm_exit %s in status" %
        (taint, signer, exit_hook))


def test_unsigned_refused():
    refused("unsigned-refused", UNSIGNED,
            "Loading of unsigned module is rejected")


def test_other_key_refused():
    refused("other-key-refused", OTHER_KEY,
            "Loading of module with unavailable key is rejected")


def test_tampered_refused():
    with open(KO, "rb") as f:
        data = bytearray(f.read())
    # a byte in the middle of the module: code or data, well before the
    # appended signature (a few hundred bytes at the end)
    data[len(data) // 2] ^= 0xff
    with tempfile.TemporaryDirectory() as tmp:
        ko = os.path.join(tmp, "vmlat.ko")
        with open(ko, "wb") as f:
            f.write(data)
        refused("tampered-refused", ko, None)


def test_signed_reloads():
    if not loaded():
        rc, err = insmod(KO)
    else:
        rc, err = 0, "was loaded"
    tap(rc == 0 and loaded() and os.path.isfile(VMLAT + "/status"),
        "signed-reloads", "insmod %d (%s)" % (rc, err[-100:]))


if __name__ == "__main__":
    enforce()
    ok_, why_ = enforcing()
    if not ok_:
        # the stock kernels: one skip, no module loaded
        print("1..0 # SKIP %s (selftests/run enforces it on the debug "
              "kernel)" % why_)
        sys.exit(4)
    main([test_signed_loaded, test_unsigned_refused,
          test_other_key_refused, test_tampered_refused,
          test_signed_reloads])

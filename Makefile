# SPDX-License-Identifier: GPL-2.0
#
#   make [KDIR=...] [W=1]   build vmlat.ko (and vmlat_kunit.ko if KDIR has KUnit)
#   make demo               boot a KVM test host and show vmlat at work
#   make check              the test suite, on every supported kernel (CI's)
#   make check-full         the whole suite on every kernel (about 2.5 hours)
#   make soak               the churn and fuzzing soaks at full size (6.12, debug)
#   make unit               the pure-logic unit tests, in userspace (ASan/UBSan)
#   make deb                vmlat's Debian packages, from debian/, into build/:
#                           vmlat-dkms_<version>_all.deb (the module, for DKMS)
#                           and vmlat_<version>_<arch>.deb (the command)
#   make install            install vmlat.ko for KDIR's kernel (without DKMS)
#
# Without KDIR, tools/kdir.sh picks the running kernel's build dir or the
# newest installed Debian headers, and says which.

FIND_KDIR = kdir="$(KDIR)"; [ -n "$$kdir" ] || kdir=$$($(CURDIR)/tools/kdir.sh) || exit 1

.PHONY: all modules clean demo check check-full soak cases unit deb install

all: modules

modules:
	@$(FIND_KDIR); $(MAKE) -C "$$kdir" M=$(CURDIR) modules

clean:
	@$(FIND_KDIR); $(MAKE) -C "$$kdir" M=$(CURDIR) clean
	$(MAKE) -C selftests/unit clean

demo:
	tools/demo

check:
	selftests/run

check-full:
	VMLAT_FULL=1 selftests/run

# 10000 VM lifetimes on 6.12 (1000 on debug), 400 random inputs per
# knob (100 on debug) and 20 unloads racing parameter writes: about 30
# minutes, past what CI gives make check.
soak:
	VMLAT_SOAK=1 VMLAT_ONLY="records_test fuzz_test lockdown_test:unload-race" \
		selftests/run 6.12 debug

# The seed papers' experiments with Linux guests running sysbench
# (selftests/vmlat/cases_test.py), in the test host whose clock counts
# instructions: about 5 minutes, too slow for make check.
cases:
	VMLAT_ONLY="cases_test" selftests/run 6.12-icount

unit:
	$(MAKE) -C selftests/unit run

# Built in a copy of git's tree (tools/mkdeb), reproducibly; prints the
# packages' paths.
deb:
	tools/mkdeb build

# Into /lib/modules/<release>/updates, then depmod: modprobe vmlat works.
install: modules
	@$(FIND_KDIR); $(MAKE) -C "$$kdir" M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install

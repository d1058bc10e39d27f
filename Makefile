# SPDX-License-Identifier: GPL-2.0
#
#   make [KDIR=...] [W=1]   build vmlat.ko (and vmlat_kunit.ko if KDIR has KUnit)
#   make demo               boot a KVM test host and show vmlat at work
#   make check              the full test suite, on every supported kernel
#   make unit               the pure-logic unit tests, in userspace (ASan/UBSan)
#
# Without KDIR, tools/kdir.sh picks the running kernel's build dir or the
# newest installed Debian headers, and says which.

FIND_KDIR = kdir="$(KDIR)"; [ -n "$$kdir" ] || kdir=$$($(CURDIR)/tools/kdir.sh) || exit 1

.PHONY: all modules clean demo check unit

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

unit:
	$(MAKE) -C selftests/unit run

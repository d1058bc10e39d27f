# SPDX-License-Identifier: GPL-2.0
#
#   make [KDIR=...] [W=1]   build vmlat.ko (and vmlat_kunit.ko if KDIR has KUnit)
#   make demo               boot a KVM test host and show vmlat at work
#   make check              the full test suite, on every supported kernel
#   make unit               the pure-logic unit tests, in userspace (ASan/UBSan)

ifeq ($(origin KDIR),undefined)
KDIR := $(shell $(CURDIR)/tools/kdir.sh)
endif

.PHONY: all modules clean demo check unit

all: modules

modules:
	@test -n "$(KDIR)" || { echo "vmlat: set KDIR=/path/to/kernel/build" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	$(MAKE) -C selftests/unit clean

demo:
	tools/demo

check:
	selftests/run

unit:
	$(MAKE) -C selftests/unit run

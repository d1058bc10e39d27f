/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests' test build of vmlat (make VMLAT_TEST_BUILD=1), never a
 * production one: its module parameter test_case (hooks.c) makes vmlat
 * take the running kernel for one it must refuse, so that lockdown_test
 * sees each refusal and its message:
 *  - layout-skew: the VMCB's exit code expected 8 bytes further than it
 *    is (layout.c): the layout check refuses SVM exit reasons;
 *  - no-mod-btf: a kernel built without module BTF: the load fails;
 *  - kvm-no-btf: module BTF, but none for kvm (as when the kernel drops a
 *    module's BTF that does not match vmlinux's): the load fails while
 *    kvm is loaded, kvm's hooks stay detached if it loads later.
 * In any other build vmlat_test_case is the constant VMLAT_TEST_NONE and
 * the tests of it compile away.
 */
#ifndef _VMLAT_TEST_BUILD_H
#define _VMLAT_TEST_BUILD_H

enum vmlat_test_case {
	VMLAT_TEST_NONE,
	VMLAT_TEST_LAYOUT_SKEW,
	VMLAT_TEST_NO_MOD_BTF,
	VMLAT_TEST_KVM_NO_BTF,
};

#ifdef VMLAT_TEST_BUILD
extern int vmlat_test_case;
#else
#define vmlat_test_case	VMLAT_TEST_NONE
#endif

#endif /* _VMLAT_TEST_BUILD_H */

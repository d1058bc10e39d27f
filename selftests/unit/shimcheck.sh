#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# shimcheck.sh BINARY: run the KUnit shim's self-test (selftest_shim_test.c)
# and check that it fails exactly as intended, says so in the expected
# words, and that the filter and the exit statuses work.
set -u

bin=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT

fail() {
	echo "shimcheck: FAIL: $*" >&2
	echo "---- output of $bin ----" >&2
	cat "$out" >&2
	exit 1
}

# run EXPECTED_STATUS EXPECTED_LAST_LINE [FILTER]
run() {
	want_rc=$1 want_last=$2
	shift 2
	"$bin" "$@" >"$out" 2>&1
	rc=$?
	[ "$rc" -eq "$want_rc" ] || fail "'$bin $*' exited $rc, expected $want_rc"
	last=$(tail -n 1 "$out")
	[ "$last" = "$want_last" ] || fail "last line '$last', expected '$want_last'"
}

run 0 "1 passed, 0 failed" 'kunit_shim.pass_expectations'
run 4 "0 passed, 0 failed, 1 skipped" '*.skip_case'
run 1 "8 passed, 5 failed, 3 skipped"

# Exactly the intended results are "not ok" (suites included).
got=$(sed -n 's/^ *not ok [0-9]* \([^ ]*\).*/\1/p' "$out" | sort | tr '\n' ' ')
want="fail_assert_aborts fail_expect_continues fail_messages fail_never_runs \
fail_params fail_three kunit_shim kunit_shim_init_fails "
[ "$got" = "$want" ] || fail "not ok: '$got', expected '$want'"

! grep -q "must not be reached" "$out" || fail "an aborted case went on"

F=selftests/unit/selftest_shim_test.c
while IFS= read -r line; do
	grep -qxF -- "$line" "$out" || fail "missing line: '$line'"
done <<END
KTAP version 1
1..2
    KTAP version 1
    # Subtest: kunit_shim
    1..11
    ok 1 pass_expectations
    # Expected 1 + 1 == 3, but
    #     1 + 1 == 2
    # Expected neg < small, but
    #     neg == -1
    #     small == 1
    #     big == 18446744073709551615
    #     b == false
    # Expected b == 1, but
    # Expected 2 > 1 to be false, but is true
    # Expected 0 to be true, but is false
    # ctx 7
    #     s == "a b\n"
    # Expected null_str == "x", but
    #     null_str == NULL
    #     first difference at byte 2 of 4
    #     0000: 01  02 <03> 04 
    #     0000: 01  02 <09> 04 
    # Expected &x == NULL, but
    # Expected (void *)-22L is not error, but is: -22
    ok 6 skip_case # SKIP reason 42
    ok 7 skip_marked_continues # SKIP marked
        KTAP version 1
        # Subtest: fail_params
        ok 1 ok_one
        not ok 3 fail_three
        ok 4 skip_four # SKIP four
    # fail_params: pass:2 fail:1 skip:1 total:4
    not ok 8 fail_params
        ok 2 param-1
    # pass_bookkeeping: info 99
    # Totals: pass:8 fail:4 skip:3 total:15
not ok 1 kunit_shim
    # kunit_shim_init_fails: failed to initialize (-5)
    not ok 1 fail_never_runs
not ok 2 kunit_shim_init_fails
END

for pattern in \
	"# fail_expect_continues: EXPECTATION FAILED at $F:" \
	"# fail_assert_aborts: ASSERTION FAILED at $F:" \
	"already freed or not allocated by kunit"; do
	grep -qF -- "$pattern" "$out" || fail "missing: '$pattern'"
done
! grep -qxF -e "    #     3 == 3" -e "    #     \"a\\tb\" == \"a\\tb\"" "$out" ||
	fail "a literal was printed as a value"

echo "shimcheck: OK (the shim reports exactly the intended failures)"

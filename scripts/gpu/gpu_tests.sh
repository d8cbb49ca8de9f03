#!/usr/bin/env bash
# tests/main's GPU tests in parts, for device calls shorter than the whole suite (on an H200 it
# takes more than one 600 s call: the CUDA C and CUB harnesses are built first on a fresh host).
#
#   scripts/gpu/gpu_tests.sh TEST_BINARY DONE_FILE [SECONDS]
#
# Runs TEST_BINARY --include-ignored "[gpu]", skipping every test DONE_FILE names (one full name
# a line, as `--list` prints it without ": test"), for at most SECONDS (500); appends the names of
# the tests that passed to DONE_FILE (created if missing), and prints one line: how many passed
# now, failed now, skipped themselves now (`ignored (skipped: …)`: no GPU, no nvcc; never counted
# as passed), and are left. Carry DONE_FILE to the next call to go on where this one stopped. The
# binary's output goes to stdout. Exit status 0 when every test has passed, 3 when none failed but
# some are left, 4 when none failed or is left but some skipped, 1 when one failed, 2 on bad
# arguments.
set -uo pipefail
usage="usage: gpu_tests.sh TEST_BINARY DONE_FILE [SECONDS]"
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "gpu_tests: two or three arguments expected, $# given; $usage" >&2; exit 2; }
bin=$1; done_file=$2; secs=${3:-500}
[ -x "$bin" ] || { echo "gpu_tests: $bin is not an executable test binary; $usage" >&2; exit 2; }
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "gpu_tests: SECONDS takes a whole number of seconds, not '$secs'" >&2; exit 2; }
touch "$done_file" 2>/dev/null || { echo "gpu_tests: cannot write $done_file" >&2; exit 2; }
skips=()
while IFS= read -r name; do [ -n "$name" ] && skips+=(--skip "$name"); done < "$done_file"
log=$(mktemp) || exit 2
trap 'rm -f "$log"' EXIT
timeout "$secs" "$bin" --include-ignored "[gpu]" "${skips[@]}" 2>&1 | tee "$log"
# `test [gpu] a::b   ... ok`: the name between "test " and the padding before " ... ".
name_of() { sed -E 's/^test (.*[^ ]) +\.\.\. [A-Za-z]+$/\1/' | sed -E 's/ +/ /g'; }
grep -E '^test .* \.\.\. ok$' "$log" | name_of >> "$done_file"
passed=$(grep -cE '^test .* \.\.\. ok$' "$log")
failed=$(grep -cE '^test .* \.\.\. FAILED$' "$log")
skipped=$(grep -cE '^test .* \.\.\. ignored \(skipped' "$log")
total=$("$bin" --include-ignored "[gpu]" --list 2>/dev/null | grep -c ': test$')
left=$((total - $(sort -u "$done_file" | grep -c .) - failed - skipped))
echo "gpu_tests: $passed passed, $failed failed, $skipped skipped, $left left of $total (passed so far: $done_file)"
[ "$failed" -gt 0 ] && exit 1
[ "$left" -gt 0 ] && exit 3
[ "$skipped" -gt 0 ] && exit 4
exit 0

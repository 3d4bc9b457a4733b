#!/usr/bin/env bash
# The reviewer's hardware check, on any Hopper (or newer) GPU, one command:
#
#   tools/gpu/review-hopper.sh [LOG_DIR]
#
# 1. builds every day with the same CMake (preset gpu-only: no Python tools
#    needed on the GPU machine), plus the two negative variants;
# 2. runs `ctest -L gpu` and fails if any GPU test failed or was skipped;
# 3. runs day 77 at a small size under compute-sanitizer memcheck,
#    racecheck and synccheck with --error-exitcode (all must be clean),
#    and days 24 and 58 under memcheck;
# 4. runs day 77 built without its trailing cluster.sync() and requires
#    that the fault is caught (a non-zero exit, or a sanitizer error);
# 5. runs day 58's read-before-wait build and reports what it saw.
# Every log lands in LOG_DIR (default build/review). Exit 0 only if all of
# the required steps passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
logs=${1:-build/review}
mkdir -p "$logs"
failed=0
step() { printf '\n== %s\n' "$*"; }
pass() { printf 'PASS  %s\n' "$*" | tee -a "$logs/summary.txt"; }
fail() { printf 'FAIL  %s\n' "$*" | tee -a "$logs/summary.txt"; failed=1; }
: > "$logs/summary.txt"
small="--size 65536 --quick"

step "build (cmake --preset gpu-only)"
if cmake --preset gpu-only > "$logs/configure.log" 2>&1 &&
   cmake --build --preset gpu-only -j "$(nproc)" > "$logs/build.log" 2>&1 &&
   cmake --build build --target day77_cluster_reduction_no_trailing_sync \
         day58_pdl_read_before_wait -j "$(nproc)" >> "$logs/build.log" 2>&1; then
  pass "build"
else
  fail "build (see $logs/build.log)"; tail -30 "$logs/build.log"; exit 1
fi

step "ctest -L gpu"
ctest --test-dir build -L gpu --output-on-failure > "$logs/ctest-gpu.log" 2>&1
rc=$?
tail -8 "$logs/ctest-gpu.log"
if [ $rc -eq 0 ] && ! grep -q "(Skipped)" "$logs/ctest-gpu.log"; then
  pass "ctest -L gpu: every GPU test ran and passed"
else
  fail "ctest -L gpu (rc=$rc; a skip counts as a failure on a GPU machine)"
fi

cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer --tool $tool day77 $small"
  "$cs" --tool "$tool" --error-exitcode 99 build/bin/day77_cluster_reduction $small \
    > "$logs/day77-$tool.log" 2>&1
  rc=$?
  tail -3 "$logs/day77-$tool.log"
  [ $rc -eq 0 ] && pass "day77 $tool clean" || fail "day77 $tool (rc=$rc)"
done
for day in day24_reduction day58_pdl; do
  step "compute-sanitizer --tool memcheck $day --quick"
  "$cs" --tool memcheck --error-exitcode 99 "build/bin/$day" --quick > "$logs/$day-memcheck.log" 2>&1
  rc=$?
  tail -3 "$logs/$day-memcheck.log"
  [ $rc -eq 0 ] && pass "$day memcheck clean" || fail "$day memcheck (rc=$rc)"
done

step "negative: day77 without the trailing cluster.sync()"
build/bin/day77_cluster_reduction_no_trailing_sync $small > "$logs/day77-nosync.log" 2>&1
rc=$?
tail -4 "$logs/day77-nosync.log"
if [ $rc -ne 0 ]; then
  pass "day77 without trailing sync: fault caught (exit $rc)"
else
  "$cs" --tool racecheck --error-exitcode 99 build/bin/day77_cluster_reduction_no_trailing_sync \
    $small > "$logs/day77-nosync-racecheck.log" 2>&1
  rc2=$?
  [ $rc2 -ne 0 ] && pass "day77 without trailing sync: ran clean alone, racecheck caught it (exit $rc2)" \
                 || fail "day77 without trailing sync: nothing caught the missing barrier"
fi

# What each cluster kernel does without its trailing barrier, one group at
# a time (the whole program stops at the first fault): reported, not judged.
for group in seed-and-costs persistent histogram stencil; do
  build/bin/day77_cluster_reduction_no_trailing_sync --only "$group" $small \
    > "$logs/day77-nosync-$group.log" 2>&1
  rc=$?
  printf 'INFO  day77 without trailing sync, --only %s: exit %d: %s\n' "$group" "$rc" \
    "$(grep -m1 -E 'CUDA error|wrong|checks passed' "$logs/day77-nosync-$group.log")" \
    | tee -a "$logs/summary.txt"
done

step "negative: day58 reading before cudaGridDependencySynchronize()"
build/bin/day58_pdl_read_before_wait > "$logs/day58-read-before-wait.log" 2>&1
rc=$?
tail -12 "$logs/day58-read-before-wait.log"
printf 'INFO  day58 read-before-wait exited %d (1: wrong results were caught; 0: none seen)\n' "$rc" \
  | tee -a "$logs/summary.txt"

step "summary"
cat "$logs/summary.txt"
exit $failed

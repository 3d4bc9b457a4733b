#!/usr/bin/env bash
# What each day costs the suite: a fresh clone of this repository's HEAD is
# built and `ctest --preset course` timed; then DAYS days are added with
# `tools/course new`, built, and ctest timed again, in one sequence on one
# machine. It prints both times, the tests that failed in each, and the
# seconds each added day cost; it exits 1 when a test failed with the days
# that passed without them (a skeleton day must pass every test).
#
#   tools/bench/suite-scale.sh [DAYS] [FOLDER]    (10 days; a new folder in /tmp)
#
# Uncommitted changes are not in the clone: commit first. The builds are
# not timed (their logs are in FOLDER); a run takes about DAYS/2 + 15 minutes
# on a 2-core machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
days=${1:-10}
work=${2:-$(mktemp -d /tmp/suite-scale.XXXXXX)}
[[ "$days" =~ ^[1-9][0-9]?$ ]] || { echo "suite-scale: DAYS must be 1 to 99, got '$days'" >&2; exit 64; }
git clone -q "$root" "$work/course"
cd "$work/course"

# One ctest run, its log in $work/ctest-$1.log: "WALL CPU", its seconds on
# the clock and of CPU (user and system, every process it waited for; on a
# machine shared with other work the clock's count moves with their load,
# the CPU's much less).
timed_ctest() {
  local t0
  t0=$(date +%s%N)
  ( ctest --preset course >"$work/ctest-$1.log" 2>&1; times ) | tail -1 >"$work/cpu-$1" || true
  echo "$(( ($(date +%s%N) - t0) / 1000000000 )) $(awk '{ n = 0; for (i = 1; i <= 2; i++) {
      split($i, p, "m"); sub("s", "", p[2]); n += p[1] * 60 + p[2] } printf "%.0f", n }' "$work/cpu-$1")"
}
failed() { sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (Failed)$/\1/p' "$work/ctest-$1.log" | sort; }

# The build, and the nvbench programs ctest's nvbench_builds test would
# otherwise build in the first run only (a minute the second would not pay).
build() {
  cmake --workflow --preset course >"$work/build-$1.log" 2>&1
  cmake --build --preset course --target course_nvbench >>"$work/build-$1.log" 2>&1 || true
}
build 0
before=$(timed_ctest 0)
added=0
for n in $(seq 100 999); do  # day numbers no lesson has
  (( added < days )) || break
  ls -d lessons/day${n}_* >/dev/null 2>&1 && continue
  tools/course new "day${n}_scale_probe$added" >/dev/null
  added=$((added + 1))
done
build "$days"
after=$(timed_ctest "$days")

new=$(comm -13 <(failed 0) <(failed "$days") | tr '\n' ' ')
read -r wall0 cpu0 <<<"$before"
read -r wall1 cpu1 <<<"$after"
per_day() { awk -v a="$1" -v b="$2" -v d="$days" 'BEGIN { printf "%.1f", (a - b) / d }'; }
echo "suite-scale: without the days: ${wall0} s (${cpu0} s of CPU; failed: $(failed 0 | tr '\n' ' ')); logs in $work"
echo "suite-scale: with $days days from tools/course new: ${wall1} s (${cpu1} s of CPU; failed:" \
     "$(failed "$days" | tr '\n' ' '))"
echo "suite-scale: $(per_day "$wall1" "$wall0") s a day ($(per_day "$cpu1" "$cpu0") s of CPU a day," \
     "on $(nproc) cores); tests failing only with the days: ${new:-none}"
[[ -z "$new" ]]

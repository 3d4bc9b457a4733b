#!/usr/bin/env bash
# A reviewer's records on a GPU machine, every day (or those named) under
# one tag in one call, as research/REVIEW-PROCESS.md describes: the
# gpu-only build configured where it is not, then `tools/course evidence
# record` for each lesson.
#
#   tools/gpu/record-hopper.sh TAG COMMIT [--timed-only] [--review FILE] [LESSON...]
#
# COMMIT: the commit this copy is, from where the history is (git rev-parse
# HEAD); the copy must be that commit unchanged (it is recorded --clean).
# --timed-only: the timed run alone (no ncu, timeline or nvbench runs).
# --review FILE: the summary tools/course review wrote for this code.
# Every lesson is tried; the exit code is 1 when any record was refused.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
[ $# -ge 2 ] || { echo "usage: $0 TAG COMMIT [--timed-only] [--review FILE] [LESSON...]" >&2; exit 64; }
tag=$1 commit=$2
shift 2
extra=() lessons=()
while [ $# -gt 0 ]; do
    case $1 in
        --timed-only) extra+=(--no-profile --no-timeline --no-nvbench) ;;
        --review) extra+=(--review "$2"); shift ;;
        *) lessons+=("$1") ;;
    esac
    shift
done
[ -f build-gpu/CMakeCache.txt ] || cmake --preset gpu-only >/dev/null || exit 1
if [ ${#lessons[@]} -eq 0 ]; then
    lessons=($(ls -d lessons/day*/ | xargs -n1 basename))
fi
status=0
for lesson in "${lessons[@]}"; do
    start=$(date +%s)
    if tools/course evidence record --lesson "$lesson" --tag "$tag" --build-dir build-gpu \
        --commit "$commit" --clean "${extra[@]}"; then
        echo "recorded $lesson $tag in $(( $(date +%s) - start )) s"
    else
        echo "refused or failed: $lesson $tag" >&2
        status=1
    fi
done
exit $status

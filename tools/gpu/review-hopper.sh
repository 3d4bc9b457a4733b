#!/usr/bin/env bash
# The reviewer's hardware check on any Hopper (or newer) GPU: builds every
# day and variant, runs the GPU tests, the sanitizers and the negative
# builds each lesson declares in its lesson.toml, and writes a summary
# that `tools/course evidence record --review FILE` stores in the record.
#
#   tools/gpu/review-hopper.sh [BUILD_DIR]      (default build-gpu)
#
# Needs only python3 (3.11+, standard library) beside CUDA and CMake.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-gpu}
exec "$root/tools/course" review --build-dir "$build" -o "$build/review.json"

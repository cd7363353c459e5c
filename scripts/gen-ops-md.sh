#!/usr/bin/env bash
# Writes docs/ops.md, the op support matrix, from the conformance table
# (tests/conformance/op_cases.cpp): builds conformance_test and the simulated NPU driver, then runs
# the test's OpsMatrix mode with the driver enabled, so that the npu columns come from it.
# With --check, writes nothing and fails (exit 1, one line) when docs/ops.md is out of date.
#
#   bash scripts/gen-ops-md.sh [--check]
#
# Environment (optional):
#   HSCHED_BUILD_DIR=PATH   build folder (default build/ops-md; configured when it has none)
#   HSCHED_JOBS=N           build parallelism (default: nproc)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
build=${HSCHED_BUILD_DIR:-${root}/build/ops-md}
jobs=${HSCHED_JOBS:-$(nproc)}
check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: scripts/gen-ops-md.sh [--check]" >&2; exit 2 ;;
esac

if [[ ! -f "${build}/build.ninja" ]]; then
  cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHSCHED_BUILD_TESTS=ON -DHSCHED_BUILD_BENCH=OFF >/dev/null
fi
ninja -C "${build}" -j"${jobs}" conformance_test ze_hsched_sim >/dev/null

export ZE_ENABLE_ALT_DRIVERS=${build}/backends/level_zero/sim/libze_hsched_sim.so
export ZE_ENABLE_VALIDATION_LAYER=1 ZE_ENABLE_PARAMETER_VALIDATION=1
test_program=${build}/tests/conformance/conformance_test
if [[ ${check} == 1 ]]; then
  if ! result=$("${test_program}" --gtest_filter=OpsMatrix.DocsAreUpToDate 2>&1); then
    echo "docs/ops.md is out of date with tests/conformance/op_cases.cpp: run scripts/gen-ops-md.sh"
    exit 1
  fi
  if grep -q '^\[  SKIPPED' <<<"${result}"; then
    echo "gen-ops-md: cannot check docs/ops.md here (it needs the cpu, PoCL and the simulated npu)"
    exit 1
  fi
  exit 0
fi
output=$(mktemp)
trap 'rm -f "${output}"' EXIT
HSCHED_OPS_MD=${output} "${test_program}" --gtest_filter=OpsMatrix.DocsAreUpToDate \
  --gtest_brief=1 >/dev/null
if ! grep -q '| npu fp16 |' "${output}" 2>/dev/null; then
  echo "gen-ops-md: no page written (it needs the cpu, PoCL and the simulated npu)" >&2
  exit 1
fi
cp "${output}" docs/ops.md
echo "wrote docs/ops.md"

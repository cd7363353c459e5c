#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): Debian packages, the docs check
#   (scripts/check-docs.sh), then release build + CTest + ONNX's node tests on the CPU, PoCL and
#   the simulated NPU (tests/onnx_node/) + the installed package (scripts/test-install.sh),
#   asan (ASan+UBSan) build + CTest, tsan (ThreadSanitizer) build of the executor stress test +
#   its CTest label, fuzz build + timed libFuzzer runs of the three fuzz targets (tests/fuzz/: importer, run path, config loaders).
# Every phase runs even when an earlier one failed (one CI run shows every failure), except that a
# failed set-up or build skips what needs it. Prints the time of each phase; exits 1 on any failure.
#
# Environment (all optional):
#   HSCHED_SKIP_SETUP=1       skip scripts/setup-debian.sh (a developer machine already set up)
#   HSCHED_MODELS_DIR=PATH    shared reference models (default: ../shared/models beside the repo)
#   HSCHED_JOBS=N             build and test parallelism (default: nproc)
#   HSCHED_FUZZ_SECONDS=N     length of the importer's fuzz run (default: 60)
#   HSCHED_FUZZ_RUN_SECONDS=N     ... of run_fuzzer's (default: 60)
#   HSCHED_FUZZ_CONFIG_SECONDS=N  ... of config_fuzzer's (default: 30)
# Logs of every phase: build/test-logs/<phase>.log. docs/ci.md has the time budget.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
jobs=${HSCHED_JOBS:-$(nproc)}
models_dir=${HSCHED_MODELS_DIR:-${root}/../shared/models}
fuzz_seconds=${HSCHED_FUZZ_SECONDS:-60}
fuzz_run_seconds=${HSCHED_FUZZ_RUN_SECONDS:-60}
fuzz_config_seconds=${HSCHED_FUZZ_CONFIG_SECONDS:-30}
log_dir=${root}/build/test-logs
mkdir -p "${log_dir}"

# Same sanitizer options as the asan test preset (CMakePresets.json), for the fuzz run.
supp=${root}/tests/sanitizers
export_sanitizer_options() {
  export ASAN_OPTIONS="suppressions=${supp}/asan.supp:detect_leaks=1:halt_on_error=1:print_stacktrace=1"
  export UBSAN_OPTIONS="suppressions=${supp}/ubsan.supp:halt_on_error=1:print_stacktrace=1"
  export LSAN_OPTIONS="suppressions=${supp}/lsan.supp:print_suppressions=0"
}

phase_names=()
phase_results=()
phase_seconds=()
tests_passed=0
tests_failed=0
failed=0

# run_phase NAME COMMAND...: runs the command with its output on the terminal and in the log.
run_phase() {
  local name=$1
  shift
  local start=${SECONDS}
  echo
  echo "=== ${name}: $*"
  "$@" 2>&1 | tee "${log_dir}/${name}.log"
  local rc=${PIPESTATUS[0]}
  record_phase "${name}" $((SECONDS - start)) "${rc}"
}

# record_phase NAME SECONDS EXIT_CODE: adds a phase's line to the summary; returns EXIT_CODE.
record_phase() {
  local name=$1 took=$2 rc=$3
  phase_names+=("${name}")
  phase_seconds+=("${took}")
  if [[ ${rc} -eq 0 ]]; then
    phase_results+=("ok")
    echo "=== ${name}: ok (${took} s)"
  else
    phase_results+=("FAILED (exit ${rc})")
    failed=1
    echo "=== ${name}: FAILED with exit code ${rc} after ${took} s (log: ${log_dir}/${name}.log)"
  fi
  return "${rc}"
}

skip_phase() {
  phase_names+=("$1")
  phase_seconds+=("-")
  phase_results+=("skipped: $2")
  echo
  echo "=== $1: skipped ($2)"
}

# Adds CTest's "N% tests passed, F tests failed out of T" of a phase's log to the totals.
count_ctest() {
  local line
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "${log_dir}/$1.log" |
         tail -n 1)
  if [[ -z ${line} ]]; then
    tests_failed=$((tests_failed + 1))  # CTest did not get to its summary: count the pass as one
    return
  fi
  local failed_count total
  failed_count=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"${line}")
  total=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"${line}")
  tests_passed=$((tests_passed + total - failed_count))
  tests_failed=$((tests_failed + failed_count))
}

# The release pass runs each test program as one CTest test (HSCHED_TEST_WHOLE_PROGRAMS), as the
# asan pass does: with a process per case, each OpenCL case started PoCL and loaded the op
# programs anew (docs/ci.md).
configure_and_build() {
  local preset=$1 whole=()
  [[ ${preset} == release ]] && whole=(-DHSCHED_TEST_WHOLE_PROGRAMS=ON)
  cmake --preset "${preset}" -DHSCHED_MODELS_DIR="${models_dir}" "${whole[@]}" &&
    cmake --build --preset "${preset}" --parallel "${jobs}"
}

# The fuzz build preset builds the three fuzz targets.
fuzz_build() {
  cmake --preset fuzz -DHSCHED_MODELS_DIR="${models_dir}" &&
    cmake --build --preset fuzz --parallel "${jobs}"
}

# fuzz_run NAME SECONDS SEEDS ARTIFACTS (the last two: folders under tests/fuzz/): libFuzzer
# writes new coverage inputs to the first corpus folder (scratch, under build/) and reads the
# checked-in seeds from the second. A crashing input is written to ARTIFACTS as NAME-crash-...
# (-artifact_prefix; the name tells the runs apart, which share a folder and run at once):
# tests/fuzz/corpus/ for the importer; tests/fuzz/pending/ for the others, whose corpus folders
# CTest replays. It is to be fixed and committed; its base64 is printed, since a CI machine's
# files are not kept.
fuzz_run() {
  local name=$1 seconds=$2 seeds=${root}/tests/fuzz/$3 artifacts=${root}/tests/fuzz/$4
  local fuzzer=${root}/build/fuzz/tests/fuzz/${name}
  local scratch=${root}/build/fuzz/corpus-${name}
  [[ ${name} == import_fuzzer ]] && scratch=${root}/build/fuzz/corpus  # its folder before
  mkdir -p "${scratch}" "${artifacts}"
  local marker=${log_dir}/fuzz-start-${name}
  touch "${marker}"
  export_sanitizer_options
  # libFuzzer prints a line per new input: keep those in their own log, show the end of it.
  local fuzz_log=${log_dir}/libfuzzer-${name}.log
  # A fixed seed makes the run a prefix of one reproducible sequence (HSCHED_FUZZ_SEED to vary).
  # run_fuzzer: no leak check after each input (-detect_leaks=0): with its threads (TBB, the
  # executor's device threads, the simulated driver's queue) clang 14's LeakSanitizer sometimes
  # crashes in its own thread tracer ("Tracer caught signal 11") there; ASan's detect_leaks=1
  # still checks once at exit, which reports any leak (without the input that made it).
  local leaks=()
  [[ ${name} == run_fuzzer ]] && leaks=(-detect_leaks=0)
  "${fuzzer}" -seed="${HSCHED_FUZZ_SEED:-1}" -max_total_time="${seconds}" -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 "${leaks[@]}" \
    -artifact_prefix="${artifacts}/${name}-" "${scratch}" "${seeds}" >"${fuzz_log}" 2>&1
  local rc=$?
  grep -E '^INFO: +[0-9]+ files found|INITED' "${fuzz_log}"
  if [[ ${rc} -eq 0 ]]; then
    grep -E '^(Done|stat::)' "${fuzz_log}"
  else
    tail -n 120 "${fuzz_log}"  # the report: sanitizer stack, the input's bytes, the artifact
  fi
  local found
  found=$(find "${artifacts}" -newer "${marker}" -type f \
    \( -name "${name}-crash-*" -o -name "${name}-leak-*" -o -name "${name}-timeout-*" \
       -o -name "${name}-oom-*" -o -name "${name}-slow-unit-*" \))
  for f in ${found}; do
    echo "fuzz: input kept as ${f#"${root}"/}; base64 (decode with base64 -d):"
    base64 -w 0 "${f}" | head -c 65536
    echo
  done
  return "${rc}"
}

# ONNX's node tests (tests/onnx_node/node_suite.py) through the release build's hsched: on the
# CPU, on OpenCL (PoCL) and on the simulated NPU in fp16. Each fails on a test of its baseline that
# no longer passes, a crash, a hang or an unexplained mismatch.
onnx_node_suite() {
  local hsched=${root}/build/release/cli/hsched status=0
  local sim=${root}/build/release/backends/level_zero/sim/libze_hsched_sim.so
  local suite=(/usr/bin/python3 "${root}/tests/onnx_node/node_suite.py" --hsched "${hsched}"
    --jobs "${jobs}" --check)
  "${suite[@]}" --devices cpu --precision fp32 --json "${log_dir}/onnx-node-cpu.json" || status=1
  "${suite[@]}" --devices opencl --precision fp32 --json "${log_dir}/onnx-node-opencl.json" ||
    status=1
  ZE_ENABLE_ALT_DRIVERS=${sim} "${suite[@]}" --devices npu --precision fp16 \
    --json "${log_dir}/onnx-node-npu.json" || status=1
  return "${status}"
}

total_start=${SECONDS}
echo "hsched test.sh: jobs=${jobs}, models=${models_dir}, fuzz: import ${fuzz_seconds} s," \
  "run ${fuzz_run_seconds} s, config ${fuzz_config_seconds} s"

if [[ ${HSCHED_SKIP_SETUP:-0} == 1 ]]; then
  skip_phase setup "HSCHED_SKIP_SETUP=1"
elif ! run_phase setup bash scripts/setup-debian.sh; then
  echo "test.sh: set-up failed; nothing else can run" >&2
  exit 1
fi

# docs: relative links and anchors, page lengths, no issue numbers or run labels.
if run_phase docs bash scripts/check-docs.sh; then
  tests_passed=$((tests_passed + 1))
else
  tests_failed=$((tests_failed + 1))
fi

# tsan: the preset builds only the executor stress test and its test preset runs label tsan.
for preset in release asan tsan; do
  if run_phase "${preset}-build" configure_and_build "${preset}"; then
    run_phase "${preset}-test" ctest --preset "${preset}" --parallel "${jobs}"
    count_ctest "${preset}-test"
    if [[ ${preset} == release ]]; then
      if run_phase onnx-node onnx_node_suite; then
        tests_passed=$((tests_passed + 1))
      else
        tests_failed=$((tests_failed + 1))
      fi
      # The installed package: cmake --install, find_package, pkg-config, pip install, pytest.
      if run_phase install bash scripts/test-install.sh "${root}/build/release"; then
        tests_passed=$((tests_passed + 1))
      else
        tests_failed=$((tests_failed + 1))
      fi
    fi
  else
    skip_phase "${preset}-test" "build failed"
    tests_failed=$((tests_failed + 1))
  fi
done

# phase, fuzz target, seconds, seed folder, artifact folder (the folders under tests/fuzz/)
fuzz_phases=(
  "fuzz-import import_fuzzer ${fuzz_seconds} corpus corpus"
  "fuzz-run run_fuzzer ${fuzz_run_seconds} run_corpus pending"
  "fuzz-config config_fuzzer ${fuzz_config_seconds} config_corpus pending"
)
if run_phase fuzz-build fuzz_build; then
  # The three runs at once: each is bounded by its own -max_total_time, so together they take
  # the longest one's time rather than the sum (on 2 cores each gets less CPU; the runs are
  # short samples of one seeded sequence either way).
  fuzz_start=${SECONDS}
  fuzz_pids=()
  for spec in "${fuzz_phases[@]}"; do
    read -r phase fuzzer seconds seeds artifacts <<<"${spec}"
    fuzz_run "${fuzzer}" "${seconds}" "${seeds}" "${artifacts}" >"${log_dir}/${phase}.log" 2>&1 &
    fuzz_pids+=($!)
  done
  for i in "${!fuzz_phases[@]}"; do
    read -r phase _ <<<"${fuzz_phases[$i]}"
    wait "${fuzz_pids[$i]}"
    rc=$?
    echo
    echo "=== ${phase}: fuzz_run ${fuzz_phases[$i]#* }"
    cat "${log_dir}/${phase}.log"
    if record_phase "${phase}" $((SECONDS - fuzz_start)) "${rc}"; then
      tests_passed=$((tests_passed + 1))
    else
      tests_failed=$((tests_failed + 1))
    fi
  done
else
  for spec in "${fuzz_phases[@]}"; do
    read -r phase _ <<<"${spec}"
    skip_phase "${phase}" "build failed"
    tests_failed=$((tests_failed + 1))
  done
fi

echo
echo "=== summary (seconds per phase, ${jobs} jobs)"
for i in "${!phase_names[@]}"; do
  printf '  %-14s %6s  %s\n' "${phase_names[$i]}" "${phase_seconds[$i]}" "${phase_results[$i]}"
done
printf '  %-14s %6s\n' "total" "$((SECONDS - total_start))"
# One closing line over all passes: CTest tests of release and asan (test programs) and tsan
# (cases), plus each fuzz run as one.
echo "test.sh: ${tests_passed} passed, ${tests_failed} failed"
exit "${failed}"

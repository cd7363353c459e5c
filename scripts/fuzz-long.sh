#!/usr/bin/env bash
# Long fuzzing runs of the three fuzz targets (tests/fuzz/), for hours or for exact execution
# counts, under ASan+UBSan (build/fuzz-o1 unless HSCHED_FUZZ_BUILD says: the fuzz preset's
# settings with the CPU kernels at -O1, which CI's build/fuzz compiles at -O0).
#
#   scripts/fuzz-long.sh HOURS                 e.g. 8 or 0.5: run_fuzzer 70% of the time,
#                                              config_fuzzer and import_fuzzer 15% each
#   scripts/fuzz-long.sh --runs RUN [CONFIG [IMPORT]]
#                                              exact executions per target (-runs=); defaults
#                                              10000000 1000000 1000000: the acceptance run
#                                              (0 skips a target)
#   scripts/fuzz-long.sh --seconds RUN [CONFIG [IMPORT]]
#                                              wall-clock seconds per target (0 skips a target;
#                                              defaults 0), for a machine lent for a fixed time
#
# The fuzzers run one after the other, each as HSCHED_FUZZ_WORKERS (default 2) parallel libFuzzer
# jobs, as -jobs=N -workers=N would run them, but each with its own seed and execution count;
# they share a scratch corpus under build/fuzz-long/<target>/corpus and read the checked-in
# seeds. With --runs each job does RUN/N executions (the remainder to the first), so the total is
# exact. A job that stops on a finding starts again on what is left of its budget. Per-input
# limits: -timeout=25 s (a hang), -rss_limit_mb=2048, leaks checked after each input (run_fuzzer:
# at each process's exit).
# Logs: build/fuzz-long/<target>/fuzz-<job>-<attempt>.log (libFuzzer's), crash inputs in
# build/fuzz-long/<target>/artifacts/ (crash-*, leak-*, timeout-*, oom-*: minimize one with
# `<fuzzer> -minimize_crash=1 -runs=100000 FILE`, then keep it in tests/fuzz/pending/).
# Summary at the end: executions and findings per target. Exit 0 when nothing was found, 1 when
# something was (or a target did not finish its executions), 2 on a usage or build error.
#
# Environment: HSCHED_FUZZ_BUILD (build folder, default build/fuzz-o1; built here if a fuzzer is
# missing, as below), HSCHED_FUZZ_WORKERS (default 2),
# HSCHED_FUZZ_SEED (libFuzzer -seed of job k is SEED + k; default 1).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
build=${HSCHED_FUZZ_BUILD:-${root}/build/fuzz-o1}
[[ ${build} == /* ]] || build=${root}/${build}
workers=${HSCHED_FUZZ_WORKERS:-2}
seed=${HSCHED_FUZZ_SEED:-1}
out=${root}/build/fuzz-long
targets=(run_fuzzer config_fuzzer import_fuzzer)
declare -A seeds=([run_fuzzer]=run_corpus [config_fuzzer]=config_corpus [import_fuzzer]=corpus)
declare -A share=([run_fuzzer]=70 [config_fuzzer]=15 [import_fuzzer]=15)  # % of HOURS
declare -A runs=() seconds=()

usage() {
  sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
is_count() { [[ $1 =~ ^[0-9]+$ ]]; }

mode=""
if [[ $# -ge 1 && $1 == --runs ]]; then
  mode=runs
  runs[run_fuzzer]=${2:-10000000}
  runs[config_fuzzer]=${3:-1000000}
  runs[import_fuzzer]=${4:-1000000}
  for t in "${targets[@]}"; do is_count "${runs[$t]}" || usage; done
elif [[ $# -ge 2 && $1 == --seconds ]]; then
  mode=hours
  seconds[run_fuzzer]=$2
  seconds[config_fuzzer]=${3:-0}
  seconds[import_fuzzer]=${4:-0}
  for t in "${targets[@]}"; do is_count "${seconds[$t]}" || usage; done
elif [[ $# -eq 1 && $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  mode=hours
  for t in "${targets[@]}"; do
    seconds[$t]=$(awk -v h="$1" -v p="${share[$t]}" 'BEGIN { printf "%d", h * 3600 * p / 100 }')
  done
else
  usage
fi
is_count "${workers}" && [[ ${workers} -ge 1 ]] || usage

# Build what is missing of the targets that run, with the fuzz preset's settings but the CPU
# kernels at -O1 (CMakePresets.json), in ${build}.
missing=()
for t in "${targets[@]}"; do
  [[ ${runs[$t]:-0} -eq 0 && ${seconds[$t]:-0} -eq 0 ]] && continue
  [[ -x ${build}/tests/fuzz/${t} ]] || missing+=("${t}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "fuzz-long: building ${missing[*]} in ${build}"
  cmake --preset fuzz -B "${build}" -DHSCHED_KERNEL_COMPILE_OPTIONS= >/dev/null &&
    cmake --build "${build}" --parallel "${workers}" --target "${missing[@]}" || exit 2
fi

# Parallelism is across jobs: oneDNN's OpenMP team is one thread per job, so that N jobs on N
# cores do not each spin N threads (32 jobs on a 32-core machine, without this, ran at ~35
# executions/s each against ~245 for one job on a 2-core machine).
export OMP_NUM_THREADS=1
supp=${root}/tests/sanitizers
export ASAN_OPTIONS="suppressions=${supp}/asan.supp:detect_leaks=1:halt_on_error=1:print_stacktrace=1"
export UBSAN_OPTIONS="suppressions=${supp}/ubsan.supp:halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=${supp}/lsan.supp:print_suppressions=0"

# Executions in one libFuzzer log: its final stats, else (a process stopped by a finding prints
# none) the last status line's "#N".
executions() {
  local n
  n=$(grep -E '^stat::number_of_executed_units:' "$1" | tail -n 1 | awk '{print $2}')
  [[ -z ${n} ]] && n=$(grep -oE '^#[0-9]+' "$1" | tail -n 1 | tr -d '#')
  echo "${n:-0}"
}

# fuzz_job TARGET K BUDGET: one worker (what -jobs=N -workers=N would start, started here so that
# each gets its own execution count and seed). BUDGET is executions (--runs) or seconds; after a
# finding (the process stops) the worker starts again on what is left, at most 20 times, so that
# one crash does not end a night's run. Logs fuzz-K-ATTEMPT.log; -reload=1 picks up the inputs
# the other worker adds to the shared scratch corpus.
fuzz_job() {
  local t=$1 k=$2 attempt=0 left=$3 deadline=$((SECONDS + $3))
  local dir=${out}/$1
  while [[ ${attempt} -lt 20 ]]; do
    local limit
    if [[ ${mode} == runs ]]; then
      [[ ${left} -le 0 ]] && break
      limit=-runs=${left}
    else
      left=$((deadline - SECONDS))
      [[ ${left} -le 0 ]] && break
      limit=-max_total_time=${left}
    fi
    local log=${dir}/fuzz-${k}-${attempt}.log
    # run_fuzzer: leaks checked at exit only (scripts/test.sh says why).
    local leaks=-detect_leaks=1
    [[ ${t} == run_fuzzer ]] && leaks=-detect_leaks=0
    (cd "${dir}" && exec "${build}/tests/fuzz/${t}" "${limit}" -seed=$((seed + 100 * attempt + k)) \
      -reload=1 -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 "${leaks}" \
      -artifact_prefix="${dir}/artifacts/" "${dir}/corpus" "${root}/tests/fuzz/${seeds[$t]}" \
      >"${log}" 2>&1)
    local rc=$?
    [[ ${mode} == runs ]] && left=$((left - $(executions "${log}")))
    [[ ${rc} -eq 0 ]] && break
    grep -q 'INITED' "${log}" || break  # it failed before fuzzing: starting again will not help
    attempt=$((attempt + 1))
  done
}

declare -A done_runs=() found=() took=() expected=()
status=0
start_all=${SECONDS}
for t in "${targets[@]}"; do
  dir=${out}/${t}
  mkdir -p "${dir}/corpus" "${dir}/artifacts"
  rm -f "${dir}"/fuzz-*.log
  if [[ ${mode} == runs ]]; then
    total=${runs[$t]}
    expected[$t]=${total}
    [[ ${total} -eq 0 ]] && continue
    jobs=$((total < workers ? total : workers))
    per_job=$((total / jobs))
    remainder=$((total - per_job * jobs))
    limit=(-runs="${per_job}")  # per job
  else
    expected[$t]=""
    [[ ${seconds[$t]} -eq 0 ]] && continue
    jobs=${workers}
    remainder=0
    limit=(-max_total_time="${seconds[$t]}")
  fi
  extra=""
  [[ ${remainder} -gt 0 ]] && extra=" (+${remainder} in job 0)"
  echo "fuzz-long: ${t}: ${jobs} jobs, ${limit[*]}${extra}"
  start=${SECONDS}
  pids=()
  for ((k = 0; k < jobs; k++)); do
    if [[ ${mode} == runs ]]; then
      budget=$((per_job + (k == 0 ? remainder : 0)))
    else
      budget=${seconds[$t]}
    fi
    fuzz_job "${t}" "${k}" "${budget}" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "${pid}"; done
  took[$t]=$((SECONDS - start))
  executed=0
  for log in "${dir}"/fuzz-*.log; do executed=$((executed + $(executions "${log}"))); done
  done_runs[$t]=${executed}
  found[$t]=$(find "${dir}/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  [[ ${found[$t]} -gt 0 ]] && status=1
  if [[ -n ${expected[$t]} && ${executed} -lt ${expected[$t]} ]]; then status=1; fi
done

echo
echo "=== fuzz-long summary ($(date -u +%FT%TZ), ${workers} workers, $((SECONDS - start_all)) s)"
printf '  %-14s %12s %12s %8s %8s  %s\n' target executions expected seconds findings artifacts
for t in "${targets[@]}"; do
  [[ -z ${took[$t]:-} ]] && continue
  printf '  %-14s %12s %12s %8s %8s  %s\n' "${t}" "${done_runs[$t]}" "${expected[$t]:--}" \
    "${took[$t]}" "${found[$t]}" "${out#"${root}"/}/${t}/artifacts/"
done
for t in "${targets[@]}"; do
  [[ ${found[$t]:-0} -gt 0 ]] || continue
  echo "  ${t} findings:"
  find "${out}/${t}/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) -printf '    %p\n'
  grep -hE '^(==[0-9]+==ERROR|SUMMARY|[a-z_]+: .*abort)' "${out}/${t}"/fuzz-*.log | sort | uniq -c |
    head -n 10
done
echo "fuzz-long: $([[ ${status} -eq 0 ]] && echo "clean" || echo "FINDINGS or unfinished runs")"
exit "${status}"

#!/usr/bin/env bash
# Soak test: mixed requests for MINUTES on the shared models, on the CPU and hsched's simulated
# NPU, with device faults, watching memory and results.
#
#   scripts/soak.sh MINUTES          e.g. 2 (a check), 60 (a real soak)
#
# The main process, hsched_soak (tests/fuzz/soak_driver.cpp), plans squeezenet1_1,
# mobilenet_v3_small and bert_mini (HSCHED_SOAK_MODELS) with policy npu-offload, verification on,
# and sends a seeded mix of run(), run_stream() and concurrent run() requests for the whole time,
# recompiling each model every 25 requests; one NPU partition run in 50 gets its outputs
# corrupted or fails (the executor's test hook, ScopedDeviceOutputHook), which verification and
# quarantine must absorb. Every 2nd request's outputs are checked against the model's reference outputs
# (|a-b| <= 5e-2 + 5e-2|b|, fp16 partitions). Its RSS (/proc/PID/status VmRSS) is sampled every
# 2 s into build/soak/rss.csv (seconds,rss_kib,phase: warmup until the driver's warm-up pass has
# sent every request kind at its largest and recompiled each model once, then mix).
# Beside it, fault episodes run one after the other until the main process ends: hsched_soak on
# squeezenet1_1 for 15 s with the simulated driver's faults (HSCHED_ZE_SIM_FAULTS, one key each:
# device_lost_after=5, corrupt_output=1, oom=1, build_delay_s=3 with a 1 s compile deadline), every
# output checked: a fault must end in correct outputs from the CPU, never an error or a crash.
#
# Summary line: RSS growth after the warm-up (the driver's warm-up pass, and a fifth of the time,
# at least 30 s) as the median RSS of the last window against that of the first (a window is a
# quarter of the mixed time, at most 5 minutes), each window's peak, crashes, wrong outputs,
# failed requests. Exit 1 when the growth passes 5%, or on any crash, wrong output or failed
# request; 2 on a usage or set-up error. Logs: build/soak/ (soak.log, fault-N.log, rss.csv).
#
# Environment: HSCHED_SOAK_BUILD (a gcc Release build folder holding tests/fuzz/hsched_soak and the
# simulated driver, default build/release; built there if missing), HSCHED_MODELS_DIR (default
# ../shared/models beside the repo), HSCHED_SOAK_MODELS (comma-separated), HSCHED_SOAK_SEED.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
if [[ $# -ne 1 || ! $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
minutes=$1
seconds=$(awk -v m="${minutes}" 'BEGIN { printf "%d", m * 60 }')
build=${HSCHED_SOAK_BUILD:-${root}/build/release}
[[ ${build} == /* ]] || build=${root}/${build}
models_dir=${HSCHED_MODELS_DIR:-${root}/../shared/models}
models=${HSCHED_SOAK_MODELS:-squeezenet1_1,mobilenet_v3_small,bert_mini}
seed=${HSCHED_SOAK_SEED:-1}
out=${root}/build/soak
warmup=$((seconds / 5 > 30 ? seconds / 5 : 30))
max_growth=5

driver=${build}/tests/fuzz/hsched_soak
sim=${build}/backends/level_zero/sim/libze_hsched_sim.so
if [[ ! -x ${driver} || ! -f ${sim} ]]; then
  echo "soak: building hsched_soak and the simulated driver in ${build}"
  cmake --build "${build}" --target hsched_soak ze_hsched_sim || exit 2
fi
[[ -d ${models_dir} ]] || { echo "soak: no models at ${models_dir}" >&2; exit 2; }
rm -rf "${out}"
mkdir -p "${out}/cache"
export ZE_ENABLE_ALT_DRIVERS=${sim}
unset HSCHED_ZE_SIM_FAULTS
common=(--models-dir "${models_dir}" --cache-dir "${out}/cache" --report-every 10)

# The main process and its RSS samples.
"${driver}" "${common[@]}" --models "${models}" --seconds "${seconds}" --seed "${seed}" \
  >"${out}/soak.log" 2>&1 &
main_pid=$!
(
  echo "seconds,rss_kib,phase"
  start=${SECONDS}
  while kill -0 "${main_pid}" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/${main_pid}/status" 2>/dev/null)
    phase=warmup
    grep -q '^soak: warmed-up' "${out}/soak.log" && phase=mix
    [[ -n ${rss} ]] && echo "$((SECONDS - start)),${rss},${phase}"
    sleep 2
  done
) >"${out}/rss.csv" &
sampler_pid=$!

# Fault episodes until the main process ends.
faults=("device_lost_after=5" "corrupt_output=1" "oom=1" "build_delay_s=3")
episodes=0
episode_failures=0
episode_crashes=0
while kill -0 "${main_pid}" 2>/dev/null; do
  spec=${faults[$((episodes % ${#faults[@]}))]}
  log=${out}/fault-${episodes}.log
  echo "HSCHED_ZE_SIM_FAULTS=${spec}" >"${log}"
  HSCHED_ZE_SIM_FAULTS=${spec} "${driver}" "${common[@]}" --models squeezenet1_1 --seconds 15 \
    --check-every 1 --fault-every 0 --compile-timeout-ms 1000 --seed $((seed + episodes)) \
    >>"${log}" 2>&1
  rc=$?
  episodes=$((episodes + 1))
  if [[ ${rc} -gt 2 ]]; then
    episode_crashes=$((episode_crashes + 1))
    echo "soak: fault episode ${spec} ended with exit code ${rc} (${log#"${root}"/})"
  elif [[ ${rc} -ne 0 ]]; then
    episode_failures=$((episode_failures + 1))
    echo "soak: fault episode ${spec} failed (${log#"${root}"/}): $(tail -n 1 "${log}")"
  fi
done
wait "${main_pid}"
main_rc=$?
wait "${sampler_pid}"

# The figures.
# field LINE NAME: the number after NAME in a "soak: done ..." line (0 when absent).
field() {
  local value
  value=$(sed -nE "s/.* $2 ([0-9]+).*/\1/p" <<<"$1")
  echo "${value:-0}"
}
last=$(grep -E '^soak: done ' "${out}/soak.log" | tail -n 1)
requests=$(field "${last}" requests)
checked=$(field "${last}" checked)
mismatches=$(field "${last}" mismatches)
errors=$(field "${last}" errors)
quarantines=$(field "${last}" quarantines)
for log in "${out}"/fault-*.log; do
  [[ -f ${log} ]] || continue
  line=$(grep -E '^soak: done ' "${log}" | tail -n 1)
  mismatches=$((mismatches + $(field "${line}" mismatches)))
  errors=$((errors + $(field "${line}" errors)))
done
crashes=${episode_crashes}
if [[ ${main_rc} -gt 2 || -z ${last} ]]; then
  crashes=$((crashes + 1))
  echo "soak: the main process ended with exit code ${main_rc}; the end of its log:"
  tail -n 20 "${out}/soak.log"
fi
# Growth: the median RSS of the last window against that of the first window after the warm-up
# (window: a quarter of the mixed time, at most 300 s). RSS rises and falls by several percent
# with each recompile (old and new weights live together for a moment), so single samples at the
# two ends measure where in that cycle they fell; medians over windows measure the level.
read -r start_s start_rss end_rss growth start_peak end_peak < <(awk -F, -v w="${warmup}" '
  NR > 1 && $1 >= w && $3 == "mix" { t[n + 0] = $1; r[n + 0] = $2; n++ }
  function median(lo, hi,   i, j, k, m, v) {
    m = 0
    for (i = lo; i <= hi; i++) v[m++] = r[i]
    for (i = 1; i < m; i++) { k = v[i]; for (j = i - 1; j >= 0 && v[j] > k; j--) v[j + 1] = v[j]; v[j + 1] = k }
    return v[int(m / 2)]
  }
  function peak(lo, hi,   i, p) { p = 0; for (i = lo; i <= hi; i++) if (r[i] > p) p = r[i]; return p }
  END {
    if (n < 2) { print "0 0 0 0 0 0"; exit }
    win = (t[n - 1] - t[0]) / 4; if (win > 300) win = 300
    for (a = 0; a + 1 < n && t[a + 1] <= t[0] + win; a++) {}
    for (b = n - 1; b > 0 && t[b - 1] >= t[n - 1] - win; b--) {}
    s = median(0, a); e = median(b, n - 1)
    printf "%d %d %d %.2f %d %d\n", t[0], s, e, (e - s) * 100 / s, peak(0, a), peak(b, n - 1)
  }' "${out}/rss.csv")
status=0
reasons=()
if awk -v g="${growth}" -v m="${max_growth}" 'BEGIN { exit !(g > m) }'; then
  reasons+=("RSS grew ${growth}% after the warm-up (limit ${max_growth}%)")
fi
if [[ ${start_rss} -eq 0 ]]; then reasons+=("no RSS sample after the warm-up (${warmup} s and the driver's pass)"); fi
[[ ${crashes} -gt 0 ]] && reasons+=("${crashes} crashes")
[[ ${mismatches} -gt 0 ]] && reasons+=("${mismatches} wrong outputs")
[[ ${errors} -gt 0 || ${episode_failures} -gt 0 ]] &&
  reasons+=("${errors} failed requests, ${episode_failures} failed fault episodes")
[[ ${#reasons[@]} -gt 0 ]] && status=1

echo "soak: ${minutes} min, models ${models}: requests ${requests} (checked ${checked}," \
  "partitions quarantined ${quarantines}), fault episodes ${episodes}; RSS median" \
  "$((start_rss / 1024)) MiB in the first window (from ${start_s} s), $((end_rss / 1024)) MiB in the" \
  "last (peaks $((start_peak / 1024)) and $((end_peak / 1024)) MiB), growth ${growth}%, crashes ${crashes}, wrong outputs ${mismatches}, failed requests ${errors}"
if [[ ${status} -ne 0 ]]; then
  echo "soak: FAILED: $(IFS=';'; echo "${reasons[*]}")"
else
  echo "soak: ok (logs and rss.csv in ${out#"${root}"/}/)"
fi
exit "${status}"

#!/bin/bash
# On the GPU machine (bench/gpu/README.md): calibrate the CPU and the GPU (or take CALIBRATION, a
# profile calibrated before), then export the models the bundle lacks and run
# bench/bench_plans.py over every model. Environment: GPU_ID (the GPU's device id there; default:
# the first device whose name says NVIDIA), ROUNDS (5), POLICY (the plan's policy, default
# bench_plans.py's), CALIBRATION, CALIBRATE_ROUNDS (calibration's rounds, default hsched's),
# PHASE (calibrate: stop after calibrating, as one call of the device tool may not hold both;
# with CALIBRATION, calibrate into a copy of it, reusing its points), CALIBRATE_DEVICES (what to
# calibrate: default the GPU, and the host CPU unless CALIBRATION has it; `cpu` for the CPU alone,
# so that the two can be calibrated in two calls), FRESH (1: measure again what CALIBRATION
# already has of the devices calibrated), RECALIBRATE
# (with CALIBRATION and no PHASE: when `hsched calibrate --check` finds the host CPU more than
# this fraction off its calibrated speed, calibrate the CPU again, keeping the GPU's profile, and
# stop: bench with that profile in another call; default 0.1, 0 never: a machine just started
# ran its first calibration 26% slow).
# Results under $OUT: h100.yaml, calibrate.txt, check.txt, export.txt, devices.txt, bench.txt,
# bench.json.
set -x
out=${OUT:-/tmp/out}
mkdir -p "$out"
hsched() { bash .devrun/run.sh .devrun/hsched "$@"; }
hsched devices > "$out/devices.txt" 2>&1
cat "$out/devices.txt"
gpu=${GPU_ID:-$(hsched devices --json | python3 -c '
import json, sys
print(next(d["id"] for d in json.load(sys.stdin)["devices"] if "NVIDIA" in d["name"]))')}
[[ -n $CALIBRATION ]] && cp "$CALIBRATION" "$out/h100.yaml"
if [[ $PHASE == calibrate || -z $CALIBRATION ]]; then
  time hsched calibrate --devices "${CALIBRATE_DEVICES:-$gpu}" -o "$out/h100.yaml" \
    ${CALIBRATE_ROUNDS:+--rounds $CALIBRATE_ROUNDS} ${FRESH:+--fresh} > "$out/calibrate.txt" \
    2> "$out/calibrate.err"
  grep -E "measured|rounds" "$out/calibrate.txt"
elif [[ ${RECALIBRATE:-0.1} != 0 ]]; then
  hsched calibrate --check "$out/h100.yaml" --devices cpu > "$out/check.txt" 2> /dev/null
  cat "$out/check.txt"
  if python3 - "$out/check.txt" "${RECALIBRATE:-0.1}" << 'EOF'
import re, sys
ratio = re.search(r"now/then ([0-9.]+)", open(sys.argv[1]).read())
sys.exit(0 if ratio and abs(float(ratio.group(1)) - 1) > float(sys.argv[2]) else 1)
EOF
  then
    time hsched calibrate --devices cpu --fresh -o "$out/h100.yaml" > "$out/calibrate.txt" \
      2> "$out/calibrate.err"
    tail -2 "$out/calibrate.txt"
    # A calibration and a bench together outrun one call of the device tool (6.5 + 5 minutes on
    # the H200 machine): stop here rather than have the bench cut off.
    echo "the CPU was calibrated again into $out/h100.yaml: bench with it as CALIBRATION and" \
      "RECALIBRATE=0"
    exit 0
  fi
fi
[[ $PHASE == calibrate ]] && exit 0
mkdir -p /tmp/models
for m in squeezenet1_1 mobilenet_v3_small vae_decoder_small; do
  ln -sfn "$PWD/.devrun/$m" /tmp/models/$m
done
python3 bench/gpu/torch_baseline.py resnet18,mobilenet_v2,convnext_atto,vit_tiny,bert_mini \
  --export /tmp/models > "$out/export.txt" 2>&1
ls /tmp/models/*/ >> "$out/export.txt"
bash .devrun/run.sh python3 bench/bench_plans.py --hsched .devrun/hsched --models /tmp/models \
  --target "$out/h100.yaml" --devices "cpu0,$gpu" ${POLICY:+--policy $POLICY} \
  --rounds "${ROUNDS:-5}" --iterations 10 --warmup 10 --json "$out/bench.json" \
  > "$out/bench.txt" 2>&1
tail -45 "$out/bench.txt"

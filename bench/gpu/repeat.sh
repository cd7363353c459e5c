#!/usr/bin/env bash
# hsched-gpu timed in several processes per model, rounds alternating over the models, on the GPU
# machine: the median of each model's per-process medians. The host's speed varies between
# leases (bench/gpu/README.md), so figures compare within one lease.
#
# Usage: bash bench/gpu/repeat.sh [BUNDLE] [MODELS] [ROUNDS]
#   BUNDLE  as compare.sh's (default .devrun); models not in it are exported as compare.sh does
#   MODELS  comma-separated (default: compare.sh's ten); ROUNDS (default 3)
#   env: ITERATIONS (300), WARMUP (10)
# Writes $OUT/repeat.txt (round, model, median ms per line) and prints the table.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:-.devrun}
models=${2:-resnet18,mobilenet_v2,mobilenet_v3_small,squeezenet1_1,convnext_atto,vit_tiny,bert_mini,vae_decoder_small,shufflenet_v2,efficientnet_b0}
rounds=${3:-3}
out=${OUT:-./gpu-out}
exported=/tmp/hsched-exported-models
mkdir -p "$out"
IFS=, read -ra wanted <<<"$models"
missing=()
for m in "${wanted[@]}"; do
  [[ -f $bundle/$m/model.onnx || -f $exported/$m/model.onnx ]] || missing+=("$m")
done
if ((${#missing[@]})); then
  python3 "$here/torch_baseline.py" "$(IFS=,; echo "${missing[*]}")" --export "$exported" \
    >/dev/null 2>&1
fi
for r in $(seq "$rounds"); do
  for m in "${wanted[@]}"; do
    model=$bundle/$m/model.onnx
    [[ -f $model ]] || model=$exported/$m/model.onnx
    ms=$(timeout 120 bash "$bundle/run.sh" "$bundle/hsched" run "$model" --devices gpu --json \
      --iterations "${ITERATIONS:-300}" --warmup "${WARMUP:-10}" 2>/dev/null |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["latency_ms"]["median"])' 2>/dev/null)
    echo "$r $m ${ms:-failed}"
  done
done | tee "$out/repeat.txt"
python3 - "$out/repeat.txt" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, model, ms = line.split()
    if ms != "failed":
        runs[model].append(float(ms))
print("| model | hsched-gpu ms, median of the processes' medians | processes |")
print("|---|---:|---:|")
for model, values in runs.items():
    print(f"| {model} | {statistics.median(values):.3f} | {len(values)} |")
PY

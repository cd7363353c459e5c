#!/usr/bin/env bash
# hsched-gpu against PyTorch CUDA fp32 (TF32 off), eager and CUDA graph replay, for each model,
# and hsched's fp32 GEMM against torch.mm, run on the GPU machine in one command.
# How to bundle and call it: bench/gpu/README.md.
#
# Usage: bash bench/gpu/compare.sh [BUNDLE] [MODELS]
#   BUNDLE  folder made by device-bundle.sh with hsched, hsched_gemm_bench, run.sh and model
#           folders <name>/model.onnx (default .devrun)
#   MODELS  comma-separated (default: the eight shared models, shufflenet_v2, efficientnet_b0)
#   A model without BUNDLE/<name>/model.onnx is exported there by torch_baseline.py --export
#   (same architecture and exporter settings, random weights; the table says so), because the
#   eight shared files (135 MiB) exceed the tool's 64 MiB carry. EXPORT_MISSING=0 skips them.
#   env: ITERATIONS (50), WARMUP (5), GEMM_SIZE (4096), GEMM_ROUNDS (20), SKIP_HSCHED_MODELS=1
#        (validate the rest without the model runs), HSCHED_TIMEOUT_S (180 per model run)
# Writes to $OUT (default ./gpu-out): raw.jsonl (every result, one JSON object a line, tagged
# "source": torch | hsched | gemm_bench), log.txt (stderr of every step), table.md (also printed).
# Three files: the device tool returns at most 8. A step that fails is recorded, never fatal.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:-.devrun}
out=${OUT:-./gpu-out}
iterations=${ITERATIONS:-50}
warmup=${WARMUP:-5}
gemm_size=${GEMM_SIZE:-4096}
mkdir -p "$out"
raw=$out/raw.jsonl log=$out/log.txt
check_dir=$(mktemp -d)  # outputs compared with ONNX Runtime: kept out of $OUT (few files come back)
: >"$raw"; : >"$log"

all_models=resnet18,mobilenet_v2,mobilenet_v3_small,squeezenet1_1,convnext_atto,vit_tiny
all_models+=,bert_mini,vae_decoder_small,shufflenet_v2,efficientnet_b0
IFS=, read -ra wanted <<<"${2:-$all_models}"
exported=/tmp/hsched-exported-models
declare -A model_path
models=() missing=()
for m in "${wanted[@]}"; do
  if [[ -f $bundle/$m/model.onnx ]]; then
    model_path[$m]=$bundle/$m/model.onnx; models+=("$m")
  elif [[ ${EXPORT_MISSING:-1} != 0 ]]; then
    model_path[$m]=$exported/$m/model.onnx; models+=("$m"); missing+=("$m")
  else
    echo "skipping $m: no $bundle/$m/model.onnx" | tee -a "$log"
  fi
done
echo "models: ${models[*]:-none}; exported here: ${missing[*]:-none}; out $out" | tee -a "$log"

# Tags what a step printed on stdin with "source" (and "name" where missing): the whole text when
# it is one JSON object (pretty-printed reports), else each line that is one; any other non-empty
# line becomes {"error": line}. Writes one JSON object a line.
tag() {
  python3 -c '
import json, sys
source, name = sys.argv[1], sys.argv[2]
text = sys.stdin.read()
def parse(s):
    try:
        obj = json.loads(s)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None
whole = parse(text)
objs = [whole] if whole else [parse(l) or {"error": l.strip()} for l in text.splitlines() if l.strip()]
for obj in objs:
    obj.setdefault("name", name); obj["source"] = source
    print(json.dumps(obj))' "$1" "$2"
}

if ((${#missing[@]})); then
  echo "== torch_baseline.py --export" >>"$log"
  python3 "$here/torch_baseline.py" "$(IFS=,; echo "${missing[*]}")" --export "$exported" \
    2>>"$log" | tag export "" >>"$raw"
  # hsched's own view of each exported graph: table.py compares it with the shared file's.
  for m in "${missing[@]}"; do
    timeout 60 bash "$bundle/run.sh" "$bundle/hsched" info "${model_path[$m]}" --json 2>>"$log" |
      python3 -c 'import json, sys; d = json.load(sys.stdin)
print(json.dumps({"nodes": d["nodes"], "ops": d["ops"]}))' 2>>"$log" | tag export_info "$m" >>"$raw"
  done
fi

# PyTorch first, in one process for all models and the GEMM: each process start (import torch,
# CUDA context) costs seconds of device time, and the timings do not depend on it.
names=$(IFS=,; echo "${models[*]}")
echo "== torch_baseline.py ${names:+$names,}gemm" >>"$log"
python3 "$here/torch_baseline.py" "${names:+$names,}gemm" --iterations "$iterations" \
  --warmup "$warmup" --gemm-size "$gemm_size" 2>>"$log" | tag torch "" >>"$raw"

# hsched's GEMM through the op layer, then each model; run.sh unpacks the bundled libraries.
echo "== hsched_gemm_bench $gemm_size^3" >>"$log"
timeout 300 bash "$bundle/run.sh" "$bundle/hsched_gemm_bench" "$gemm_size" "$gemm_size" \
  "$gemm_size" "${GEMM_ROUNDS:-20}" 2>>"$log" | tag gemm_bench gemm >>"$raw"

for m in "${models[@]}"; do
  [[ ${SKIP_HSCHED_MODELS:-0} == 1 ]] && break
  echo "== hsched run $m" >>"$log"
  err=$(mktemp)
  # With the model's shared inputs in the bundle (BUNDLE/inputs/<name>/input_K.pb), the outputs
  # are checked against ONNX Runtime CPU on the same model and inputs.
  io=()
  if [[ -f $bundle/inputs/$m/input_0.pb ]]; then
    io=(--inputs "$bundle/inputs/$m" --outputs "$check_dir/$m/hsched")
  fi
  report=$(timeout "${HSCHED_TIMEOUT_S:-180}" bash "$bundle/run.sh" "$bundle/hsched" run \
    "${model_path[$m]}" --devices gpu --json --iterations "$iterations" --warmup "$warmup" \
    ${PROFILE:+--profile} "${io[@]}" 2>"$err")
  rc=$?
  if ((${#io[@]})) && [[ $rc -eq 0 ]]; then
    python3 "$here/ort_reference.py" "${model_path[$m]}" "$bundle/inputs/$m" \
      "$check_dir/$m/ort" 2>>"$log" &&
      python3 "$bundle/compare_outputs.py" "$check_dir/$m/ort" "$check_dir/$m/hsched" 2>&1 |
      tail -n 1 | python3 -c 'import json,sys; print(json.dumps({"check": sys.stdin.read().strip()}))' |
      tag check "$m" >>"$raw"
  fi
  cat "$err" >>"$log"
  if [[ $rc -eq 0 ]] && python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$report" \
      2>/dev/null; then
    tag hsched "$m" <<<"$report" >>"$raw"
  else
    why=$(grep -v '^\s*$' "$err" | tail -n 3 | tr '\n' ' ')
    [[ $rc -eq 124 ]] && why="timed out after ${HSCHED_TIMEOUT_S:-180} s; $why"
    python3 -c 'import json,sys; print(json.dumps({"error": sys.argv[1]}))' \
      "exit $rc: ${why:-no message}" | tag hsched "$m" >>"$raw"
  fi
  rm -f "$err"
done

python3 "$here/table.py" "$raw" | tee "$out/table.md"

#!/bin/bash
# On the GPU machine (bench/gpu/README.md): export the models the bundle lacks, calibrate the CPU
# and the GPU (or take CALIBRATION, a profile calibrated before), then bench/bench_plans.py over
# every model. Environment: GPU_ID (the GPU's device id there, default gpu0), ROUNDS (3), POLICY (the plan's
# policy, default bench_plans.py's), CALIBRATION. Results under $OUT.
set -x
out=${OUT:-/tmp/out}
mkdir -p /tmp/models
for m in squeezenet1_1 mobilenet_v3_small vae_decoder_small; do ln -sfn "$PWD/.devrun/$m" /tmp/models/$m; done
python3 bench/gpu/torch_baseline.py resnet18,mobilenet_v2,convnext_atto,vit_tiny,bert_mini --export /tmp/models > $out/export.txt 2>&1
ls /tmp/models/*/ >> $out/export.txt
bash .devrun/run.sh .devrun/hsched devices > $out/devices.txt 2>&1
cat $out/devices.txt
[[ -n $CALIBRATION ]] && cp "$CALIBRATION" $out/h100.yaml || time bash .devrun/run.sh .devrun/hsched calibrate --devices ${GPU_ID:-gpu0} -o $out/h100.yaml > $out/calibrate.txt 2> $out/calibrate.err
tail -3 $out/calibrate.txt
bash .devrun/run.sh python3 bench/bench_plans.py --hsched .devrun/hsched --models /tmp/models --target $out/h100.yaml --devices cpu0,${GPU_ID:-gpu0} ${POLICY:+--policy $POLICY} --rounds ${ROUNDS:-3} --iterations 10 --warmup 3 --json $out/bench.json > $out/bench.txt 2>&1
tail -45 $out/bench.txt

#!/usr/bin/env python3
"""A model through the Python package and through `hsched run`, side by side, under load.

    PYTHONPATH=build/release/python python3 bench/python_vs_cli.py [--model vit_tiny]
        [--rounds 5] [--iterations 50] [--threads 2] [--no-load]

A CPU-bound process runs beside the measurements (one busy Python loop: "the other core" of a
2-core machine) unless --no-load. Each round times the CLI (`hsched run --policy cpu-only
--json`, median latency) and a fresh Python interpreter (`import hsched`, compile, warm up, median
of `run()` calls), alternating; prints per-round medians and the median over rounds with the
Python/CLI ratio. The Python process gets no environment the CLI does not: whatever the package
sets for itself is what is measured.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

PY_RUN = r"""
import sys, time, statistics, numpy as np, hsched
from onnx import load_tensor, numpy_helper
folder, iterations, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = hsched.load(folder + "/model.onnx")
exe = model.compile(model.plan(policy="cpu-only"), threads=threads)
x = numpy_helper.to_array(load_tensor(folder + "/test_data_set_0/input_0.pb"))
feed = {model.inputs[0]: x}
for _ in range(5):
    exe.run(feed)
times = []
for _ in range(iterations):
    start = time.perf_counter()
    exe.run(feed)
    times.append((time.perf_counter() - start) * 1e3)
print(statistics.median(times))
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="vit_tiny")
    parser.add_argument("--models-dir", default=os.environ.get(
        "HSCHED_MODELS_DIR", str(ROOT.parent / "shared" / "models")))
    parser.add_argument("--hsched", default=str(ROOT / "build" / "release" / "cli" / "hsched"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-load", action="store_true")
    args = parser.parse_args()
    folder = pathlib.Path(args.models_dir) / args.model
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    load = None if args.no_load else subprocess.Popen([sys.executable, "-c", "while True: pass"])
    cli, py = [], []
    try:
        for r in range(args.rounds):
            out = subprocess.run([args.hsched, "run", str(folder / "model.onnx"), "--policy",
                                  "cpu-only", "--threads", str(args.threads), "--iterations",
                                  str(args.iterations), "--warmup", "5", "--json"],
                                 env=env, check=True, capture_output=True, text=True).stdout
            cli.append(json.loads(out)["latency_ms"]["median"])
            out = subprocess.run([sys.executable, "-c", PY_RUN, str(folder),
                                  str(args.iterations), str(args.threads)],
                                 env=env, check=True, capture_output=True, text=True).stdout
            py.append(float(out))
            print(f"round {r + 1}: cli {cli[-1]:.2f} ms, python {py[-1]:.2f} ms", flush=True)
    finally:
        if load is not None:
            load.kill()
    c, p = statistics.median(cli), statistics.median(py)
    print(f"{args.model} ({'under load' if load else 'no load'}, {args.threads} threads): "
          f"cli {c:.2f} ms, python {p:.2f} ms, python/cli {p / c:.3f}")


if __name__ == "__main__":
    main()

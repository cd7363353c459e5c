#!/usr/bin/env python3
"""hsched on the GPU in fp32, fp16 storage and int8 (ONNX Runtime's QDQ models), same machine,
alternating rounds: a markdown table of medians and their ratios to fp32.

Run on the GPU machine (bench/gpu/README.md, "Precisions"):
    python3 bench/gpu/precisions.py --bundle .devrun --models resnet18,vit_tiny --rounds 3

For each model: BUNDLE/<name>/model.onnx (else the torch_baseline.py export of the same
architecture, made here) runs under `--devices gpu` in fp32 and `--precision fp16`;
BUNDLE/<name>_int8/model.onnx (the shared QDQ file) under `--devices gpu`. Each round runs every
(model, precision) once with `--iterations N --warmup 5`; the figure is the median over rounds of
hsched's own median. Also reported: how many of each run's nodes ran on the GPU and, where the
INT8 file's folder has its test_data_set_0, how many output quantization steps the GPU's outputs
on that input are from ONNX Runtime's int8 reference there.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTED = "/tmp/hsched-exported-models"
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "differential"))


def hsched_run(bundle, model, precision, iterations, timeout_s, extra=()):
    cmd = ["bash", os.path.join(bundle, "run.sh"), os.path.join(bundle, "hsched"), "run", model,
           "--devices", "gpu", "--json", "--iterations", str(iterations), "--warmup", "5"]
    if precision == "fp16":
        cmd += ["--precision", "fp16"]
    cmd += list(extra)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s} s"}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]}
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return {"error": "no JSON report"}
    gpus = {d["id"] for d in report.get("devices", []) if d.get("kind") == "gpu"}
    partitions = report.get("partitions", [])
    return {"median_ms": (report.get("latency_ms") or {}).get("median"),
            "gpu_nodes": sum(p["nodes"] for p in partitions if p["device"] in gpus),
            "nodes": sum(p["nodes"] for p in partitions), "partitions": len(partitions)}


def int8_steps(bundle, model_dir, timeout_s):
    """Steps of the GPU's outputs on model_dir's test_data_set_0 from ONNX Runtime's int8 outputs
    there (None without them), and whether the top class agrees."""
    import numpy as np
    from qdq_graphs import read_tensor, steps_apart
    inputs = os.path.join(model_dir, "test_data_set_0")
    if not os.path.exists(os.path.join(inputs, "output_0.pb")):
        return None
    got = os.path.join(model_dir, "gpu-outputs")
    shutil.rmtree(got, ignore_errors=True)
    result = hsched_run(bundle, os.path.join(model_dir, "model.onnx"), "int8", 1, timeout_s,
                        ["--inputs", inputs, "--outputs", got, "--compile-timeout-ms", "600000"])
    if "error" in result:
        return result
    steps, lines = steps_apart(model_dir, "gpu-outputs")
    want = read_tensor(os.path.join(inputs, "output_0.pb"))
    top1 = read_tensor(os.path.join(got, "output_0.pb"))
    same_top = bool(want.ndim == 2 and (want.argmax(-1) == top1.argmax(-1)).all())
    return {"steps": steps, "lines": lines, "top1_same": same_top if want.ndim == 2 else None,
            "gpu_nodes": result.get("gpu_nodes"), "nodes": result.get("nodes"),
            "cosine": float(np.dot(want.ravel(), top1.ravel()) / max(
                1e-30, np.linalg.norm(want) * np.linalg.norm(top1)))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", default=".devrun")
    parser.add_argument("--models", default="resnet18,mobilenet_v2,mobilenet_v3_small,"
                        "squeezenet1_1,convnext_atto,vit_tiny,bert_mini,vae_decoder_small")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--timeout", type=int, default=180, help="seconds per hsched run")
    parser.add_argument("--raw", help="also write every result here, one JSON object a line")
    args = parser.parse_args()
    models = args.models.split(",")

    fp32_path = {}
    missing = []
    for m in models:
        shared = os.path.join(args.bundle, m, "model.onnx")
        fp32_path[m] = shared if os.path.exists(shared) else os.path.join(EXPORTED, m, "model.onnx")
        if not os.path.exists(fp32_path[m]):
            missing.append(m)
    if missing:
        subprocess.run([sys.executable, os.path.join(HERE, "torch_baseline.py"), ",".join(missing),
                        "--export", EXPORTED], check=False, stdout=subprocess.DEVNULL)

    raw = open(args.raw, "w") if args.raw else None
    checks = {}
    for m in models:
        checks[m] = int8_steps(args.bundle, os.path.join(args.bundle, m + "_int8"), args.timeout)
        if checks[m] is not None:
            print(json.dumps({"model": m, "check": checks[m]}), file=sys.stderr)
            if raw:
                raw.write(json.dumps({"model": m, "check": checks[m]}) + "\n")

    runs = {}  # (model, precision) -> list of results
    for r in range(args.rounds):
        for m in models:
            for precision in ("fp32", "fp16", "int8"):
                path = (os.path.join(args.bundle, m + "_int8", "model.onnx") if precision == "int8"
                        else fp32_path[m])
                if not os.path.exists(path):
                    result = {"error": "no " + path}
                else:
                    result = hsched_run(args.bundle, path, precision, args.iterations, args.timeout)
                result.update({"model": m, "precision": precision, "round": r})
                runs.setdefault((m, precision), []).append(result)
                if raw:
                    raw.write(json.dumps(result) + "\n")
                    raw.flush()
                print(json.dumps(result), file=sys.stderr)

    def median(m, precision):
        values = [x["median_ms"] for x in runs[(m, precision)] if x.get("median_ms")]
        return statistics.median(values) if values else None

    def cell(m, precision):
        ms = median(m, precision)
        if ms is None:
            errors = [x.get("error") for x in runs[(m, precision)] if x.get("error")]
            return "failed: " + (errors[0] if errors else "no figure")
        base = median(m, "fp32")
        last = runs[(m, precision)][-1]
        share = ""
        if last.get("gpu_nodes") is not None and last.get("nodes"):
            share = f", {last['gpu_nodes']}/{last['nodes']} nodes on the GPU"
        ratio = f" ({ms / base:.2f}x)" if base and precision != "fp32" else ""
        return f"{ms:.3f}{ratio}{share}"

    def check_cell(m):
        check = checks[m]
        if check is None:
            return "no reference"
        if "error" in check:
            return "failed: " + check["error"]
        top = {True: ", top class the same", False: ", TOP CLASS DIFFERS", None: ""}
        return (f"{check['steps']:.2f} steps, cosine {check['cosine']:.5f}"
                f"{top[check['top1_same']]}, {check['gpu_nodes']}/{check['nodes']} on the GPU")

    print("| model | fp32 ms | fp16 storage ms (x fp32) | int8 QDQ ms (x fp32) "
          "| int8 against ONNX Runtime's int8 |")
    print("|---|---|---|---|---|")
    for m in models:
        print(f"| {m} | {cell(m, 'fp32')} | {cell(m, 'fp16')} | {cell(m, 'int8')} "
              f"| {check_cell(m)} |")


if __name__ == "__main__":
    main()

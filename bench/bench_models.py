#!/usr/bin/env python3
"""hsched's CPU backend against ONNX Runtime on every shared model.

Alternating rounds (ORT, hsched, ORT, hsched, ...): each round runs each tool in a fresh process
with warm-up runs and then timed runs; a tool's figure is the median of its round medians, and
the spread of round medians is printed as the noise seen. Peak RSS is each process's own; for ORT
the RSS of an idle node process is subtracted.

    python3 bench/bench_models.py [--hsched build/release/cli/hsched] [--models ../shared/models]
                                  [--threads 2] [--rounds 5] [--iterations 20] [--warmup 3]
                                  [--precision fp32|bf16|int8 | --int8 ../shared/models-int8]
                                  [--json results.json] [MODEL ...]

--precision bf16 runs hsched with `--devices cpu --precision bf16` (convolutions and matmuls in
bf16) against ONNX Runtime's fp32 on the same file; --precision int8 likewise with the fp32 model's
convolutions and matmuls dynamically quantized to int8.

--int8 DIR (../shared/models-int8) runs each model's INT8 file DIR/MODEL_int8/model.onnx on both
tools and, in the same rounds, ONNX Runtime on the fp32 original: hsched int8 against ORT int8
(`ratio`) and against ORT fp32 (`vs fp32`).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "convnext_atto",
          "vit_tiny", "bert_mini", "vae_decoder_small"]


def run_json(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd[:3])}...: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def idle_node_rss():
    out = subprocess.run(["node", "-e", "console.log(process.resourceUsage().maxRSS * 1024)"],
                         capture_output=True, text=True, check=True).stdout
    return int(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hsched", default=os.path.join(HERE, "..", "build", "release", "cli", "hsched"))
    ap.add_argument("--models", default=os.environ.get("HSCHED_MODELS_DIR",
                                                       os.path.join(HERE, "..", "..", "shared", "models")))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "int8"],
                    help="hsched's --precision (ONNX Runtime runs the file as it is)")
    ap.add_argument("--int8", metavar="DIR",
                    help="time the INT8 files DIR/MODEL_int8/model.onnx, and ORT on the fp32 originals")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("names", nargs="*", default=MODELS)
    args = ap.parse_args()
    if not os.path.exists(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        sys.exit("bench: run `npm install --ignore-scripts --prefix bench` first (see bench/README.md)")

    idle_rss = idle_node_rss()
    rows = []
    for name in args.names:
        original = os.path.join(args.models, name, "model.onnx")
        model = os.path.join(args.int8, f"{name}_int8", "model.onnx") if args.int8 else original
        missing = [m for m in {model, original} if not os.path.exists(m)]
        if missing:
            print(f"{name}: skipped (no {missing[0]})")
            continue
        info = run_json([args.hsched, "info", model, "--json"])
        spec = json.dumps(info["inputs"])
        ort_medians, hs_medians, ort_rss, hs_rss, fp32_medians = [], [], [], [], []
        for _ in range(args.rounds):
            ort = run_json(["node", os.path.join(HERE, "ort_runner.js"), model, spec,
                            str(args.threads), str(args.warmup), str(args.iterations)])
            ort_medians.append(statistics.median(ort["times_ms"]))
            ort_rss.append(ort["peak_rss_bytes"] - idle_rss)
            if args.int8:
                fp32 = run_json(["node", os.path.join(HERE, "ort_runner.js"), original, spec,
                                 str(args.threads), str(args.warmup), str(args.iterations)])
                fp32_medians.append(statistics.median(fp32["times_ms"]))
            hs = run_json([args.hsched, "run", model, "--devices", "cpu", "--precision", args.precision,
                           "--threads", str(args.threads),
                           "--warmup", str(args.warmup), "--iterations", str(args.iterations), "--json"])
            hs_medians.append(hs["latency_ms"]["median"])
            hs_rss.append(hs["peak_rss_bytes"])
        row = {
            "model": name,
            "ort_ms": statistics.median(ort_medians),
            "hsched_ms": statistics.median(hs_medians),
            "ort_spread": (max(ort_medians) - min(ort_medians)) / statistics.median(ort_medians),
            "hsched_spread": (max(hs_medians) - min(hs_medians)) / statistics.median(hs_medians),
            "ort_rss_mb": statistics.median(ort_rss) / 2**20,
            "hsched_rss_mb": statistics.median(hs_rss) / 2**20,
        }
        row["ratio"] = row["hsched_ms"] / row["ort_ms"]
        if args.int8:
            row["ort_fp32_ms"] = statistics.median(fp32_medians)
            row["ratio_fp32"] = row["hsched_ms"] / row["ort_fp32_ms"]
        rows.append(row)
        print(f"{name}: hsched {row['hsched_ms']:.2f} ms, ORT {row['ort_ms']:.2f} ms, "
              f"ratio {row['ratio']:.2f}", flush=True)

    print()
    print(f"hsched {'int8' if args.int8 else args.precision}, threads {args.threads}, "
          f"{args.rounds} alternating rounds x "
          f"{args.iterations} runs "
          f"({args.warmup} warm-up); median of round medians, spread = (max-min)/median of rounds")
    fp32_head = f"{'ORT fp32':>10}{'vs fp32':>9}" if args.int8 else ""
    print(f"{'model':<20}{'ORT ms':>10}{'spread':>8}{'hsched ms':>11}{'spread':>8}{'ratio':>7}"
          f"{'ORT RSS MB':>12}{'hsched RSS MB':>15}{fp32_head}")
    for r in rows:
        fp32_cells = f"{r['ort_fp32_ms']:>10.2f}{r['ratio_fp32']:>9.2f}" if args.int8 else ""
        print(f"{r['model']:<20}{r['ort_ms']:>10.2f}{r['ort_spread']:>8.0%}{r['hsched_ms']:>11.2f}"
              f"{r['hsched_spread']:>8.0%}{r['ratio']:>7.2f}{r['ort_rss_mb']:>12.0f}{r['hsched_rss_mb']:>15.0f}"
              f"{fp32_cells}")
    for key, what in [("ratio", "hsched/ORT"), ("ratio_fp32", "hsched int8/ORT fp32")]:
        if rows and key in rows[0]:
            geo = math.exp(sum(math.log(r[key]) for r in rows) / len(rows))
            print(f"geometric mean {what}: {geo:.2f}; worst: {max(r[key] for r in rows):.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"threads": args.threads, "rounds": args.rounds,
                       "precision": "int8" if args.int8 else args.precision,
                       "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()

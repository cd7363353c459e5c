#!/usr/bin/env python3
"""Where a prediction goes wrong: each node's predicted ms (`hsched plan --json`) against its
step's measured ms (`hsched run --profile --json`), summed per op type, for one device alone.

Nodes that run without a step of their own (fused, folded, aliased) are predicted 0 and have no
step; a fused chain's step carries the time of the whole chain and its head's prediction.
Measured step times come from the profiled run (one clock read per step), so their sum is a little
above an unprofiled run's latency: read the shares, not the absolute sum.

    python3 bench/node_errors.py --target calibration.yaml --device cpu0 [--iterations 20] MODEL...
"""
import argparse
import collections
import os

from bench_models import run_json

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    root = os.path.dirname(HERE)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hsched", default=os.path.join(root, "build/release/cli/hsched"))
    parser.add_argument("--models", default=os.path.join(root, "../shared/models"))
    parser.add_argument("--target", required=True)
    parser.add_argument("--device", default="cpu0")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=0, help="also print the N worst nodes")
    parser.add_argument("model", nargs="+")
    args = parser.parse_args()

    for name in args.model:
        model = os.path.join(args.models, name, "model.onnx")
        common = [model, "--target", args.target, "--devices", args.device, "--json"]
        plan = run_json([args.hsched, "plan", *common])
        run = run_json([args.hsched, "run", *common, "--profile", "--threads", str(args.threads),
                           "--iterations", str(args.iterations), "--warmup", "3"])
        steps = run["profile"]["steps"]
        measured = {step["node"]: step["ms"] for step in steps}
        enqueue = {step["node"]: step["enqueue_ms"] for step in steps if "enqueue_ms" in step}
        per_op = collections.defaultdict(lambda: [0.0, 0.0, 0, 0.0])
        rows = []
        for node in plan["nodes"]:
            predicted = node["predicted_ms"] or 0.0
            got = measured.pop(node["name"], 0.0)
            entry = per_op[node["op"]]
            entry[0] += predicted
            entry[1] += got
            entry[2] += 1
            entry[3] += enqueue.get(node["name"], 0.0)
            rows.append((predicted - got, node["name"], node["op"], predicted, got))
        for node, ms in measured.items():  # steps no plan node names (should be none)
            per_op["(step " + node + ")"][1] += ms
        total_p = sum(e[0] for e in per_op.values())
        total_m = sum(e[1] for e in per_op.values())
        print(f"{name}: predicted {total_p:.3f} ms, steps measured {total_m:.3f} ms, "
              f"run median {run['latency_ms']['median']:.3f} ms")
        # An OpenCL step's host share (its enqueue) is printed where the run reports it.
        for op, (p, m, n, e) in sorted(per_op.items(), key=lambda kv: -abs(kv[1][0] - kv[1][1])):
            host = f"  enqueue {e:8.3f}" if enqueue else ""
            print(f"  {op:24s} {n:4d}  predicted {p:8.3f}  measured {m:8.3f}  diff {p - m:+8.3f}"
                  f"{host}")
        rows.sort(key=lambda r: -abs(r[0]))
        for diff, node, op, p, m in rows[:args.nodes]:
            print(f"    {node:40s} {op:16s} {p:8.3f} {m:8.3f} {diff:+8.3f}")


if __name__ == "__main__":
    main()

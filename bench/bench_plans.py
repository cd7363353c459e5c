#!/usr/bin/env python3
"""Every shared model on each device alone and with the scheduled plan: predicted against
measured ms, per partition and per model, and the plan's measured time over the fastest single
device's (issue 8).

Configurations per model: `DEV alone` for each device compared (`hsched run --devices DEV`; the
host CPU as `--devices cpu`, the CPU taking what a device cannot) and `plan` (`--policy POLICY`,
restricted to the compared devices when --devices is given). --target is passed to every run.
Inputs: the model's test_data_set_0 folder when there is one. A plan that is one of the
single-device plans (same partitions, devices and predicted ms, seen in the warm-up) is that
configuration: it is measured once, its ratio is 1 by identity, and its row counts once in the
accuracy figures (measuring one thing twice measures only the machine's noise).

Protocol: one untimed warm-up run of each configuration (a configuration that fails there is
reported and left out), then alternating rounds: each round runs every configuration of every
model once, in an order rotated by one each round, each in a fresh process with --warmup W
--iterations N, so that a figure's rounds are spread over the whole bench (as calibration's are)
and a slow minute of a shared machine moves one round of each figure, not every round of one. A
configuration's figure is the median of its round medians (latency_ms.median of each run); the
spread printed beside it is (max - min) / median of the round medians. Per partition: the median
over rounds of partitions[].measured_ms, matched by index. Predicted: plan.predicted_run_ms (one
steady-state run, compile excluded) and partitions[].predicted_ms.
error = (predicted - measured) / measured.

Where --target is a calibrated profile (a file with a probe), `hsched calibrate --check` times
each compared device's probe before the rounds and after them, and its lines are printed: how far
the machine's microbenchmarks moved since the calibration (now/then, median and range). It is
context for the figures, not a correction: models move by their own amounts (docs/calibration.md).

    python3 bench/bench_plans.py [--hsched build/release/cli/hsched] [--models ../shared/models]
                                 [--target FILE] [--policy throughput] [--devices cpu0,ocl0]
                                 [--precision fp32|fp16] [--threads 2] [--rounds 5]
                                 [--iterations 10] [--warmup 10] [--tolerance 0.15]
                                 [--no-check] [--json results.json] [MODEL ...]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "convnext_atto",
          "vit_tiny", "bert_mini", "vae_decoder_small"]
RATIO_LIMIT = 1.05  # issue 8: the plan may measure at most 1.05x the fastest single device
# A device whose probes moved more than this since its calibration is named in the summary
# (bench/gpu/calibrate_and_bench.sh calibrates the CPU again past the same figure).
CHECK_LIMIT = 0.1


class RunError(Exception):
    pass


def run_text(cmd, timeout):
    """A command's stdout; RunError with its last stderr line when it fails or times out."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise RunError(f"timed out after {timeout} s") from e
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise RunError(lines[-1] if lines else f"exit status {proc.returncode}")
    return proc.stdout


def run_json(cmd, timeout):
    return json.loads(run_text(cmd, timeout))


def spread(values):
    mid = statistics.median(values)
    return (max(values) - min(values)) / mid if mid > 0 else 0.0


def error(predicted, measured):
    return (predicted - measured) / measured if measured > 0 else float("inf")


def list_devices(args):
    cmd = [args.hsched, "devices", "--json"] + (["--target", args.target] if args.target else [])
    try:
        listing = run_json(cmd, args.timeout)["devices"]
    except RunError as e:
        sys.exit(f"bench: {' '.join(cmd)}: {e}")
    if args.devices:
        wanted = [d for d in args.devices.split(",") if d]
        known = {d["id"]: d for d in listing}
        unknown = [d for d in wanted if d not in known]
        if unknown:
            sys.exit(f"bench: --devices: unknown {','.join(unknown)} (have {','.join(known)})")
        return [known[d] for d in wanted]
    present = [d for d in listing if d.get("present", True)]
    for d in listing:
        if d not in present:
            print(f"{d['id']}: skipped (not present on this machine)")
    if not present:
        sys.exit("bench: no device of the target is present here; pass --devices to choose")
    return present


def speed_check(args, devices):
    """Per device id, now/then of its probe (`hsched calibrate --check`), its lines printed; {}
    when there is nothing to check (no calibrated file, --no-check) or the check fails (said
    why)."""
    if args.no_check or not args.target or not os.path.isfile(args.target):
        return {}
    cmd = [args.hsched, "calibrate", "--check", args.target, "--threads", str(args.threads),
           "--devices", ",".join(d["id"] for d in devices)]
    try:
        out = run_text(cmd, args.timeout)
    except RunError as e:
        print(f"speed check: {e}", flush=True)
        return {}
    ratios = {}
    for line in out.splitlines():
        match = re.match(r"^(\S+): now/then ([0-9.]+)", line)
        if match:
            ratios[match.group(1)] = float(match.group(2))
            print(f"speed check: {line}", flush=True)
    return ratios


def configurations(args, devices):
    """(name, extra hsched run flags) for each configuration of one model."""
    common = ["--target", args.target] if args.target else []
    configs = []
    for d in devices:
        # `cpu` selects the host CPU and keeps it fp32 under --precision (devices_policy, include/hsched/config.h).
        selector = "cpu" if d.get("api") == "host" else d["id"]
        flags = ["--devices", selector]
        if args.precision:
            flags += ["--precision", args.precision]
        configs.append((f"{d['id']} alone", common + flags))
    plan = common + ["--policy", args.policy]
    if args.devices:
        plan += ["--devices", ",".join(d["id"] for d in devices)]
    configs.append(("plan", plan))
    return configs


def predicted_of(report):
    return report["plan"]["predicted_run_ms"], "plan.predicted_run_ms"


def summarise_config(name, flags, reports):
    """One configuration's figures from its per-round reports."""
    medians = [r["latency_ms"]["median"] for r in reports]
    predicted, predicted_key = predicted_of(reports[-1])
    measured = statistics.median(medians)
    row = {"config": name, "flags": flags, "round_medians_ms": medians, "measured_ms": measured,
           "spread": spread(medians), "predicted_ms": predicted, "predicted_key": predicted_key,
           "error": error(predicted, measured),
           "plan_measured_ms": statistics.median(r["plan"]["measured_ms"] for r in reports),
           "partition_count": len(reports[-1]["partitions"]), "partitions": [], "note": ""}
    layouts = {tuple((p["device"], p["nodes"]) for p in r["partitions"]) for r in reports}
    if len(layouts) != 1:
        row["note"] = (f"partitions differ between rounds (counts "
                       f"{sorted({len(l) for l in layouts})}); per-partition rows left out")
        return row
    for index, part in enumerate(reports[-1]["partitions"]):
        rounds = [r["partitions"][index]["measured_ms"] for r in reports]
        measured_part = statistics.median(rounds)
        row["partitions"].append({
            "id": part["id"], "device": part["device"], "nodes": part["nodes"],
            "predicted_ms": part["predicted_ms"], "measured_ms": measured_part,
            "spread": spread(rounds), "error": error(part["predicted_ms"], measured_part)})
    return row


def model_runs(args, name, configs):
    """(model, config, flags, command) of one model's configurations, or None when absent. A
    folder of INT8 files (../shared/models-int8) names each model NAME_int8: that one is taken."""
    model_dir = os.path.join(args.models, name)
    if not os.path.isdir(model_dir) and os.path.isdir(model_dir + "_int8"):
        model_dir += "_int8"
    model = os.path.join(model_dir, "model.onnx")
    if not os.path.exists(model):
        print(f"{name}: skipped (no {model})")
        return None
    base = [args.hsched, "run", model, "--json", "--threads", str(args.threads)]
    inputs = os.path.join(model_dir, "test_data_set_0")
    if os.path.isdir(inputs):
        base += ["--inputs", inputs]
    return [(name, config, flags, base + flags) for config, flags in configs]


def layout(report):
    """A plan's fingerprint: each partition's device, node count and predicted ms."""
    return tuple((p["device"], p["nodes"], round(p["predicted_ms"], 6))
                 for p in report["partitions"])


def measure(args, runs):
    """Every run's warm-up, then alternating rounds over all of them: each round runs every
    (model, configuration) once, in an order rotated by one each round, so that each figure's
    rounds are spread over the whole bench, as calibration's are. A plan that is one of the
    model's single-device plans (same partitions, devices and predictions) is that configuration:
    it is measured once, under the single device's name. Returns per (model, config) the reports
    of its rounds, the failures, and per model the single-device configuration its plan is."""
    timed = ["--warmup", str(args.warmup), "--iterations", str(args.iterations)]
    live, failed, layouts = [], [], {}
    for run in runs:
        name, config, flags, cmd = run
        # Warm-up: caches (OpenCL programs, files) filled once, and a broken config found early.
        try:
            layouts[(name, config)] = layout(
                run_json(cmd + ["--warmup", "0", "--iterations", "1"], args.timeout))
            live.append(run)
        except RunError as e:
            failed.append({"model": name, "config": config, "flags": flags, "error": str(e)})
            print(f"{name}: {config}: failed, left out: {e}", flush=True)
    same_as = {}
    for name, config, _, _ in live:
        plan = layouts.get((name, "plan"))
        if config != "plan" and plan is not None and layouts[(name, config)] == plan:
            same_as.setdefault(name, config)
    live = [run for run in live if not (run[1] == "plan" and run[0] in same_as)]
    reports = {(name, config): [] for name, config, _, _ in live}
    for r in range(args.rounds):
        print(f"round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)
        order = live[r % len(live):] + live[:r % len(live)] if live else []
        for name, config, flags, cmd in order:
            if (name, config) not in reports:
                continue
            try:
                reports[(name, config)].append(run_json(cmd + timed, args.timeout))
            except RunError as e:
                failed.append({"model": name, "config": config, "flags": flags,
                               "error": f"round {r}: {e}"})
                print(f"{name}: {config}: failed in round {r}, left out: {e}", flush=True)
                del reports[(name, config)]
    return reports, failed, same_as


def model_result(name, configs, reports, failed, same_as):
    """`same_as`: the single-device configuration the plan is, or None. Its row then repeats
    that configuration's figures under "plan", marked `same_as` (not counted twice)."""
    rows = []
    for config, flags in configs:
        source = same_as if config == "plan" and same_as else config
        if (name, source) in reports:
            row = summarise_config(config, flags, reports[(name, source)])
            if source != config:
                row["same_as"] = source
                row["note"] = f"the same plan as {source}: measured once, counted once"
            rows.append(row)
    alone = [row for row in rows if row["config"] != "plan"]
    plan = next((row for row in rows if row["config"] == "plan"), None)
    result = {"model": name, "configs": rows,
              "failed": [f for f in failed if f["model"] == name], "ratio": None,
              "fastest": None, "ratio_spreads": None, "plan_same_as": same_as}
    if alone and plan:
        fastest = min(alone, key=lambda row: row["measured_ms"])
        result["fastest"] = fastest["config"]
        result["ratio"] = plan["measured_ms"] / fastest["measured_ms"]
        result["ratio_spreads"] = [plan["spread"], fastest["spread"]]
    return result


def pct(value):
    return f"{value:+.0%}" if abs(value) < 100 else f"{value:+.1e}"


def print_model(result):
    print(f"\n{result['model']}")
    def figures(r):
        return (f"{r['predicted_ms']:>14.3f}{r['measured_ms']:>13.3f}{r['spread']:>8.0%}"
                f"{pct(r['error']):>9}")

    head = f"{'predicted ms':>14}{'measured ms':>13}{'spread':>8}{'error':>9}"
    print(f"  {'config':<16}{'parts':>6}{head}")
    for row in result["configs"]:
        print(f"  {row['config']:<16}{row['partition_count']:>6}{figures(row)}")
    for row in result["configs"]:
        if row["note"]:
            print(f"  {row['config']}: {row['note']}")
        elif row["partition_count"] > 1 or row["config"] == "plan":
            print(f"  {row['config']} partitions:")
            print(f"    {'id':>4} {'device':<10}{'nodes':>6}{head}")
            for p in row["partitions"]:
                print(f"    {p['id']:>4} {p['device']:<10}{p['nodes']:>6}{figures(p)}")
    for f in result["failed"]:
        print(f"  {f['config']}: failed: {f['error']}")
    if result["ratio"] is not None:
        flag = "  > 1.05" if result["ratio"] > RATIO_LIMIT else ""
        plan_spread, fastest_spread = result["ratio_spreads"]
        same = f"; the plan is {result['plan_same_as']}" if result["plan_same_as"] else ""
        print(f"  plan / fastest single device ({result['fastest']}): {result['ratio']:.2f}{flag} "
              f"(spreads: plan {plan_spread:.0%}, {result['fastest']} {fastest_spread:.0%}{same})")
    else:
        print("  plan / fastest single device: n/a (a configuration failed)")


def print_accuracy(label, items, tolerance, worst):
    if not items:
        print(f"{label}: none measured")
        return
    within = sum(1 for _, e in items if abs(e) <= tolerance)
    print(f"{label}: {within}/{len(items)} ({within / len(items):.0%}) with |error| <= "
          f"{tolerance:.0%}; worst:")
    for what, e in sorted(items, key=lambda item: -abs(item[1]))[:worst]:
        print(f"    {pct(e):>9}  {what}")


def print_drift(results, tolerance):
    """Per device alone: the median error over the models, and how many runs are within tolerance
    of it. Errors that all move together are the machine's speed against the calibration's (a
    phase of a shared host), not the shape of the model; this tells the two apart."""
    by_config = {}
    for result in results:
        for row in result["configs"]:
            if row["config"].endswith(" alone") and row.get("error") is not None:
                by_config.setdefault(row["config"], []).append(row["error"])
    drift = {}
    if by_config:
        print(f"  device alone     median error  runs within {tolerance:.0%} of that median")
    for config, errors in sorted(by_config.items()):
        median = statistics.median(errors)
        rebased = [(1 + e) / (1 + median) - 1 for e in errors]
        near = sum(1 for e in rebased if abs(e) <= tolerance)
        print(f"  {config:<16}{pct(median):>13}  {near}/{len(errors)}")
        drift[config] = {"median_error": median, "within_of_median": near, "runs": len(errors)}
    return drift


def print_summary(args, results, checks):
    """The accuracy and plan figures over every model; `checks`: speed_check's ratios before the
    rounds, a device that moved more than CHECK_LIMIT since its calibration named with them."""
    runs, parts = [], []
    for result in results:
        for row in result["configs"]:
            if row.get("same_as"):
                continue  # that configuration's own row counts it
            runs.append((f"{result['model']} {row['config']}", row["error"]))
            for p in row["partitions"]:
                parts.append((f"{result['model']} {row['config']} partition {p['id']} "
                              f"({p['device']}, {p['nodes']} nodes)", p["error"]))
    print("\nsummary")
    print_accuracy("partitions", parts, args.tolerance, args.worst)
    print_accuracy("whole-model runs", runs, args.tolerance, args.worst)
    drift = print_drift(results, args.tolerance)
    moved = {d: r for d, r in checks.items() if abs(r - 1) > CHECK_LIMIT}
    for device, ratio in sorted(moved.items()):
        print(f"  {device} ran at {ratio:.2f}x its calibrated time at the speed check: these errors "
              f"carry that drift; calibrate it again (hsched calibrate --devices {device} --fresh "
              f"-o {args.target})")
    print(f"  {'model':<20}{'plan / fastest':>16}  fastest")
    for result in results:
        if result["ratio"] is None:
            print(f"  {result['model']:<20}{'n/a':>16}")
            continue
        flag = "  > 1.05" if result["ratio"] > RATIO_LIMIT else ""
        print(f"  {result['model']:<20}{result['ratio']:>16.2f}  {result['fastest']}{flag}")
    slow = [r["model"] for r in results if r["ratio"] is not None and r["ratio"] > RATIO_LIMIT]
    print(f"plan slower than 1.05x the fastest single device: {', '.join(slow) or 'none'}")
    return {"partitions_within": sum(1 for _, e in parts if abs(e) <= args.tolerance),
            "partitions": len(parts),
            "runs_within": sum(1 for _, e in runs if abs(e) <= args.tolerance),
            "runs": len(runs), "slower_than_limit": slow, "drift": drift,
            "moved_since_calibration": sorted(moved)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hsched", default=os.path.normpath(
        os.path.join(HERE, "..", "build", "release", "cli", "hsched")))
    ap.add_argument("--models", default=os.environ.get(
        "HSCHED_MODELS_DIR", os.path.normpath(os.path.join(HERE, "..", "..", "shared", "models"))))
    ap.add_argument("--target", help="target profile (name or YAML, e.g. from `hsched calibrate`)")
    # The times compared are steady-state runs, so the plan is made for them: `throughput` is
    # `latency` with the compile amortised over 100,000 runs instead of 100.
    ap.add_argument("--policy", default="throughput",
                    help="policy of the plan run (configs/policies; default throughput)")
    ap.add_argument("--devices", help="device ids to compare, comma-separated (default: every "
                                      "present device of `hsched devices --json`)")
    ap.add_argument("--precision", choices=["fp32", "fp16"], help="for the device-alone runs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=10)
    # The prediction is a steady-state run: squeezenet1_1 on this 2-core CPU measured 3.4-4.0 ms
    # after 3 untimed runs and 3.2-3.4 ms after 10 (eight processes each).
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--tolerance", type=float, default=0.15, help="|error| counted as accurate")
    ap.add_argument("--worst", type=int, default=5, help="worst predictions listed in the summary")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per hsched process")
    ap.add_argument("--no-check", action="store_true",
                    help="skip `hsched calibrate --check` of a calibrated --target")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("names", nargs="*", default=MODELS)
    args = ap.parse_args()
    if args.rounds < 1 or args.iterations < 1 or args.warmup < 0:
        sys.exit("bench: --rounds and --iterations must be >= 1, --warmup >= 0")

    devices = list_devices(args)
    configs = configurations(args, devices)
    print(f"devices {','.join(d['id'] for d in devices)}; policy {args.policy}; target "
          f"{args.target or 'this-machine'}; threads {args.threads}; {args.rounds} alternating "
          f"rounds x {args.iterations} runs ({args.warmup} warm-up) after one warm-up run each; "
          f"median of round medians, spread = (max-min)/median of rounds; "
          f"error = (predicted-measured)/measured", flush=True)
    names, runs = [], []
    for name in args.names:
        model = model_runs(args, name, configs)
        if model is not None:
            names.append(name)
            runs += model
    before = speed_check(args, devices)
    reports, failed, same_as = measure(args, runs)
    after = speed_check(args, devices)
    results = [model_result(name, configs, reports, failed, same_as.get(name)) for name in names]
    for result in results:
        print_model(result)
    if not results:
        sys.exit("bench: no model measured")
    summary = print_summary(args, results, before)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"devices": [d["id"] for d in devices], "policy": args.policy,
                       "target": args.target or "this-machine", "threads": args.threads,
                       "rounds": args.rounds, "iterations": args.iterations,
                       "warmup": args.warmup, "tolerance": args.tolerance,
                       "speed_checks": {"before": before, "after": after},
                       "models": results, "summary": summary}, f, indent=2)


if __name__ == "__main__":
    main()

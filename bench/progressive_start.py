#!/usr/bin/env python3
"""Progressive start against the CPU alone: the first request's latency (compile + first run, from
`hsched run --json`) with an empty program cache and a planted build delay on the accelerator,
in alternating rounds; the median of each and the ratio to the CPU-only first request.

    /usr/bin/python3 bench/progressive_start.py --model ../shared/models/squeezenet1_1/model.onnx \\
        --delay-s 120 --rounds 5

The OpenCL device's build sleeps through HSCHED_OPENCL_TEST_BUILD_DELAY_MS, the simulated NPU's
through HSCHED_ZE_SIM_FAULTS=build_delay_s (ZE_ENABLE_ALT_DRIVERS must name the simulated driver
for the NPU runs; without it they are skipped). Each run gets a fresh HSCHED_CACHE_DIR.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def first_request_ms(hsched, model, extra, env):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, HSCHED_CACHE_DIR=cache, **env)
        done = subprocess.run([hsched, "run", model, "--iterations", "1", "--warmup", "0",
                               "--json"] + extra, capture_output=True, text=True, env=env,
                              timeout=600, check=True)
    report = json.loads(done.stdout)
    return report["compile_ms"] + report["first_run_ms"], report.get("progressive")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hsched", default=os.path.join(ROOT, "build/release/cli/hsched"))
    parser.add_argument("--model", required=True)
    parser.add_argument("--delay-s", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cases = {
        "cpu only": (["--devices", "cpu"], {}),
        "opencl, progressive": (["--devices", "opencl", "--progressive"],
                                {"HSCHED_OPENCL_TEST_BUILD_DELAY_MS": str(args.delay_s * 1000)}),
    }
    if os.environ.get("ZE_ENABLE_ALT_DRIVERS"):
        cases["npu (simulated), progressive"] = (
            ["--policy", "npu-offload", "--progressive"],
            {"HSCHED_ZE_SIM_FAULTS": f"build_delay_s={args.delay_s}"})
    times = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, (extra, env) in cases.items():
            ms, progressive = first_request_ms(args.hsched, args.model, extra, env)
            if progressive is not None and progressive["plan_ready_ms"] >= 0:
                raise SystemExit(f"{name}: the plan was ready before the first request")
            times[name].append(ms)
    base = statistics.median(times["cpu only"])
    print(f"first request (compile + first run), median of {args.rounds} alternating rounds, "
          f"build delay {args.delay_s} s, {os.path.basename(os.path.dirname(args.model))}:")
    for name, values in times.items():
        ms = statistics.median(values)
        print(f"  {name}: {ms:.1f} ms ({ms / base:.2f}x the CPU alone; "
              f"runs {', '.join(f'{v:.0f}' for v in values)})")


if __name__ == "__main__":
    main()

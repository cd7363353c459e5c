#!/usr/bin/python3
"""Writes docs/conformance.md from node_suite.py's --json results (one file per device run).

    /usr/bin/python3 tests/onnx_node/conformance_md.py cpu.json opencl.json npu.json > docs/conformance.md
"""
import collections
import json
import re
import sys

REASON_PATTERNS = [
    # (pattern over hsched's message, the reason as the table groups it)
    (r"has no kernel for op '([^']+)'", r"no kernel for \1"),
    (r"opset (\d+) is not supported \(([^)]*)\)", r"opset \1 (hsched reads \2)"),
    (r"has dtype (\w+), which hsched does not support", r"dtype \1"),
    (r"is not a tensor \(sequences, maps and optionals", "sequence, map or optional values"),
    (r"imports no opset of the default ONNX domain", "no default-domain opset (other domains)"),
    (r"has no static shape", "output shape depends on input values"),
    (r"\.pb: holds \w+ \S+ but input '([^']+)' is", r"test data: input '\1' holds another shape than the model declares"),
    (r"input must be a constant", "an input that must be constant is computed"),
    (r"node '[^']*' \((\w+)\): (.*)", r"\1: \2"),
]


def reason_group(detail):
    for pattern, group in REASON_PATTERNS:
        match = re.search(pattern, detail)
        if match:
            text = match.expand(group)
            return re.sub(r"'[^']*'", "'...'", text)[:120]
    return detail[:120]


def main(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            runs.append(json.load(f))
    out = []
    out.append("# ONNX node tests\n")
    out.append("ONNX's backend node tests (922 one-op models with inputs and expected outputs, "
               "generated from\nONNX 1.12 by `../shared/tools/onnx-node-tests.sh`) run through "
               "`hsched run` on each device kind\nof this machine: the CPU, the OpenCL device "
               "(PoCL) and the simulated NPU (fp16; no NPU exists\nhere). Outputs are compared as "
               "ONNX's runner compares them (rtol 1e-3, atol 1e-7; fp16: rtol 1e-2,\natol 1e-3). "
               "The CPU runs what a device refuses, so a device's own share is the tests that ran a\n"
               "partition there, and among those the tests that passed with every node there. CI\n"
               "runs all three (`scripts/test.sh`, phase `onnx-node`); a test listed in\n"
               "`tests/onnx_node/passing-*.txt` may never fail again, nor one listed in\n"
               "`tests/onnx_node/on-device-*.txt` run a node off its device.\n")
    if any(run["devices"] == "gpu" for run in runs):
        out.append("The `gpu` row is the same suite on an NVIDIA H200 through NVIDIA's OpenCL "
                   "driver (`--devices gpu`,\nrun on the GPU machine with a bundle of the release "
                   "build: `../shared/tools/README.md`).\n")
    out.append("Regenerate (from a release build, with the result files of "
               "`tests/onnx_node/node_suite.py --json`):\n")
    out.append("    /usr/bin/python3 tests/onnx_node/conformance_md.py cpu.json opencl.json "
               "npu.json [gpu.json] > docs/conformance.md\n")
    out.append("## Results\n")
    out.append("| devices | precision | pass | refused | mismatch (explained) | crash | hang | "
               "ran on the device | of those, pass | pass, every node on the device |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    counts_cpu_pass = sum(1 for r in runs[0]["tests"].values() if r["status"] == "pass")
    for run in runs:
        tests = run["tests"]
        counts = collections.Counter(r["status"] for r in tests.values())
        explained = sum(1 for r in tests.values() if r.get("explained"))
        claimed = [r for r in tests.values() if r.get("claimed")]
        own = "-" if run["devices"] == "cpu" else str(len(claimed))
        own_pass = ("-" if run["devices"] == "cpu"
                    else str(sum(1 for r in claimed if r["status"] == "pass")))
        whole = ("-" if run["devices"] == "cpu" else
                 f"{sum(1 for r in claimed if r['status'] == 'pass' and r.get('whole'))} "
                 f"({100 * sum(1 for r in claimed if r['status'] == 'pass' and r.get('whole')) / max(1, counts_cpu_pass):.0f}% of the CPU's passes)")
        out.append(f"| {run['devices']} | {run.get('precision', 'fp32')} | {counts['pass']} | "
                   f"{counts['refused']} | {counts['mismatch']} ({explained}) | {counts['crash']} | "
                   f"{counts['hang']} | {own} | {own_pass} | {whole} |")
    out.append("")

    cpu = runs[0]["tests"]
    groups = collections.defaultdict(list)
    for name, result in sorted(cpu.items()):
        if result["status"] == "refused":
            groups[reason_group(result["detail"])].append(name)
    out.append(f"## Refused on the {runs[0]['devices']}, by reason\n")
    out.append("Every refusal is one line naming the node and why; grouped here by that reason.\n")
    out.append("| tests | reason | for example |")
    out.append("|---|---|---|")
    for reason, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        example = ", ".join(f"`{n}`" for n in names[:2])
        out.append(f"| {len(names)} | {reason.replace('|', '/')} | {example} |")
    out.append("")

    out.append("## Explained mismatches\n")
    out.append("| test | devices | why |")
    out.append("|---|---|---|")
    seen = collections.defaultdict(list)
    reasons = {}
    for run in runs:
        for name, result in sorted(run["tests"].items()):
            if result.get("explained"):
                seen[name].append(f"{run['devices']} {run.get('precision', 'fp32')}")
                reasons[name] = result["explained"]
    for name in sorted(seen):
        out.append(f"| `{name}` | {', '.join(seen[name])} | {reasons[name]} |")
    out.append("")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Markdown table of bench/gpu/compare.sh's raw results.

Usage: python3 table.py RAW_JSONL > table.md
RAW_JSONL: one JSON object a line, each {"source": "torch" | "hsched" | "gemm_bench" | "check",
"name", ...}
as compare.sh writes them: torch_baseline.py's objects, `hsched run --json` reports (or
{"error"}), hsched_gemm_bench's object (or {"error"}). Ratios = hsched ms / PyTorch ms, eager and
CUDA graph replay (lower is better; the goal: <= 1 against graph replay). GEMM % = hsched TFLOPS /
PyTorch TFLOPS (goal >= 50%). Needs only the standard library.
"""
import json
import sys

MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "convnext_atto",
          "vit_tiny", "bert_mini", "vae_decoder_small", "shufflenet_v2", "efficientnet_b0"]
# `hsched info --json` of ../shared/models/<name>/model.onnx: (nodes, ops).
SHARED_GRAPHS = {
    "resnet18": (49,
        {"Add": 8,
         "Conv": 20,
         "Flatten": 1,
         "Gemm": 1,
         "GlobalAveragePool": 1,
         "MaxPool": 1,
         "Relu": 17}),
    "mobilenet_v2": (100,
        {"Add": 10, "Clip": 35, "Conv": 52, "Flatten": 1, "Gemm": 1, "GlobalAveragePool": 1}),
    "mobilenet_v3_small": (122,
        {"Add": 6,
         "Conv": 52,
         "Flatten": 1,
         "Gemm": 2,
         "GlobalAveragePool": 10,
         "HardSigmoid": 9,
         "HardSwish": 19,
         "Mul": 9,
         "Relu": 14}),
    "squeezenet1_1": (65,
        {"Concat": 8, "Conv": 26, "Flatten": 1, "GlobalAveragePool": 1, "MaxPool": 3, "Relu": 26}),
    "convnext_atto": (178,
        {"Add": 24,
         "Conv": 40,
         "Div": 12,
         "Erf": 12,
         "Flatten": 1,
         "Gemm": 1,
         "GlobalAveragePool": 1,
         "LayerNormalization": 17,
         "Mul": 36,
         "Transpose": 34}),
    "vit_tiny": (380,
        {"Add": 85,
         "Concat": 1,
         "Conv": 1,
         "Div": 12,
         "Erf": 12,
         "Gather": 1,
         "Gemm": 1,
         "LayerNormalization": 25,
         "MatMul": 72,
         "Mul": 48,
         "Reshape": 25,
         "Softmax": 12,
         "Split": 12,
         "Squeeze": 36,
         "Transpose": 37}),
    "bert_mini": (168,
        {"Add": 42,
         "And": 1,
         "Cast": 2,
         "Div": 4,
         "Erf": 4,
         "Expand": 2,
         "Flatten": 1,
         "Gather": 4,
         "GatherElements": 1,
         "IsNaN": 4,
         "LayerNormalization": 9,
         "MatMul": 32,
         "Mul": 16,
         "Reshape": 18,
         "Softmax": 4,
         "Transpose": 16,
         "Where": 8}),
    "vae_decoder_small": (83,
        {"Add": 13,
         "Conv": 13,
         "InstanceNormalization": 9,
         "Mul": 18,
         "Reshape": 18,
         "Resize": 3,
         "Sigmoid": 9}),
}
GRAPH_GOAL = 1.0  # the most hsched ms / PyTorch CUDA graph replay ms the goal allows
GEMM_GOAL = 0.5


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def cell(text):
    """A table cell: one line, no pipes, short."""
    text = " ".join(str(text).split()).replace("|", "/")
    return text if len(text) <= 160 else text[:157] + "..."


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows[(obj.get("source"), obj.get("name"))] = obj
    return rows


def export_notes(rows, name):
    """Says whether a model exported on the GPU machine has the shared file's graph."""
    if ("export", name) not in rows:
        return []
    export = rows[("export", name)]
    if "error" in export:
        return ["export failed: " + export["error"]]
    info = rows.get(("export_info", name), {})
    expected = SHARED_GRAPHS.get(name)
    if "ops" not in info or expected is None:
        return ["exported on device (graph not compared)"]
    if (info["nodes"], info["ops"]) == expected:
        return [f"exported on device: same graph as the shared file ({info['nodes']} nodes)"]
    diff = {op: (info["ops"].get(op, 0), expected[1].get(op, 0))
            for op in set(info["ops"]) | set(expected[1])
            if info["ops"].get(op, 0) != expected[1].get(op, 0)}
    return [f"exported on device: graph DIFFERS from the shared file, {info['nodes']} vs "
            f"{expected[0]} nodes, op (here, shared): {diff}"]


def model_rows(rows):
    names = [n for n in MODELS if ("torch", n) in rows or ("hsched", n) in rows]
    names += sorted({n for (s, n) in rows if s in ("torch", "hsched") and n not in names
                     and n != "gemm"})
    lines = ["| model | hsched-gpu median ms | PyTorch eager ms | ratio | PyTorch CUDA graph ms | "
             "ratio to graph | hsched first run ms | hsched compile ms | fallbacks | "
             "PyTorch eager ms with copies | note |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name in names:
        torch = rows.get(("torch", name), {"error": "not run"})
        hsched = rows.get(("hsched", name), {"error": "not run"})
        torch_ms = torch.get("torch_ms")
        hsched_ms = (hsched.get("latency_ms") or {}).get("median")
        ratio = hsched_ms / torch_ms if hsched_ms and torch_ms else None
        graph_ms = torch.get("torch_graph_ms")
        graph_ratio = hsched_ms / graph_ms if hsched_ms and graph_ms else None
        notes = []
        if "error" in hsched:
            notes.append("hsched: " + hsched["error"])
        if "error" in torch:
            notes.append("torch: " + torch["error"])
        if graph_ratio is not None:
            met = "met" if graph_ratio <= GRAPH_GOAL else "NOT met"
            notes.append(f"goal <= {GRAPH_GOAL:g}x CUDA graph: {met}")
        if "error" not in hsched and hsched.get("devices") is not None:
            ids = [d.get("id", "?") if isinstance(d, dict) else str(d) for d in hsched["devices"]]
            notes.append("hsched devices: " + ",".join(ids))
        check = rows.get(("check", name))
        if check is not None:
            notes.append("outputs vs ONNX Runtime CPU (1e-4 + 1e-3*|b|): " +
                         check.get("check", check.get("error", "?")))
        notes += export_notes(rows, name)
        fallbacks = (hsched.get("plan") or {}).get("fallbacks")
        lines.append("| " + " | ".join([
            name, fmt(hsched_ms), fmt(torch_ms), fmt(ratio, 2) + ("x" if ratio else ""),
            fmt(graph_ms), fmt(graph_ratio, 2) + ("x" if graph_ratio else ""),
            fmt(hsched.get("first_run_ms"), 1), fmt(hsched.get("compile_ms"), 1),
            "-" if fallbacks is None else str(fallbacks), fmt(torch.get("torch_io_ms")),
            cell("; ".join(notes))]) + " |")
    return lines


def gemm_rows(rows):
    ours = rows.get(("gemm_bench", "gemm"), {"error": "not run"})
    torch = rows.get(("torch", "gemm"), {"error": "not run"})
    size = "x".join(str(torch.get(d, ours.get(d, "?"))) for d in ("m", "n", "k"))
    ours_tf, torch_tf = ours.get("tflops"), torch.get("tflops")
    share = ours_tf / torch_tf if ours_tf and torch_tf else None
    notes = []
    for who, obj in (("hsched", ours), ("torch", torch)):
        if "error" in obj:
            notes.append(f"{who}: {obj['error']}")
    if share is not None:
        notes.append(f"goal >= {GEMM_GOAL:.0%}: {'met' if share >= GEMM_GOAL else 'NOT met'}")
    if "first_call_ms" in ours:
        notes.append(f"hsched first call {ours['first_call_ms']:.0f} ms")
    return ["| fp32 GEMM | hsched ms | hsched TFLOPS | PyTorch ms | PyTorch TFLOPS | hsched/PyTorch"
            " | note |", "|---|---:|---:|---:|---:|---:|---|",
            "| " + " | ".join([size, fmt(ours.get("median_ms")), fmt(ours_tf, 1),
                               fmt(torch.get("median_ms")), fmt(torch_tf, 1),
                               "-" if share is None else f"{share:.0%}",
                               cell("; ".join(notes))]) + " |"]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: table.py RAW_JSONL")
    rows = load(sys.argv[1])
    torch_any = next((o for (s, _), o in rows.items() if s == "torch" and "gpu" in o), {})
    ours = rows.get(("gemm_bench", "gemm"), {})
    print(f"GPU: {torch_any.get('gpu', '?')}; PyTorch {torch_any.get('torch', '?')} CUDA fp32 "
          f"(eager and CUDA graph replay), TF32 off; hsched OpenCL device: {ours.get('device', '?')} "
          f"({ours.get('platform', '?')}, driver {ours.get('driver', '?')}).")
    print("Medians of per-run times, each run synchronized; ratio = hsched / PyTorch.\n")
    print("\n".join(model_rows(rows)))
    print()
    print("\n".join(gemm_rows(rows)))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""ONNX Runtime's quantized and fused operators of its com.microsoft domain, one small model
each, run by `hsched run --devices DEVICES` and by ONNX Runtime's own kernels
(ort_reference.js), outputs compared: 8-bit outputs within --steps quantization steps (default
1: ONNX Runtime's QLinearSoftmax uses a lookup table of exponentials), float outputs within
--rtol of the largest value (default 1e-5; the simulated NPU computes in fp16: 2e-3).

    /usr/bin/python3 tests/differential/ms_quantized_ops.py [--devices cpu] [--precision fp32]
        [--hsched BIN] [--out DIR] [--steps N] [--rtol R] [--reference node|python]

hsched reads these ops as their standard definitions (graph/microsoft_ops.h). ONNX Runtime
has no CPU kernel for QLinearReduceMean: that case is reported as ort-refused, not compared.
Prints a line per case and exits 1 when a case mismatches or hsched refuses it.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_graphs  # noqa: E402
from diff_test import OrtReference, read_tensor, use_simulated_npu  # noqa: E402

MS = "com.microsoft"


def u8(values):
    return np.array(values, dtype=np.uint8)


def f32(values):
    return np.array(values, dtype=np.float32)


def tensor_info(name, shape, dtype=T.UINT8):
    return helper.make_tensor_value_info(name, dtype, shape)


def cases():
    """(name, nodes, initializers, inputs, outputs, feeds, opset) of every case, seeded."""
    rng = np.random.default_rng(5)
    q = [numpy_helper.from_array(a, n) for n, a in [
        ("sa", f32(0.037)), ("za", u8(121)), ("sb", f32(0.021)), ("zb", u8(97)),
        ("sy", f32(0.043)), ("zy", u8(130))]]
    a = rng.integers(0, 256, [2, 3, 4, 5]).astype(np.uint8)
    b = rng.integers(0, 256, [2, 3, 4, 5]).astype(np.uint8)
    shape = [2, 3, 4, 5]
    binary = ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"]
    out = []
    for op in ["QLinearAdd", "QLinearMul"]:
        out.append((op, [helper.make_node(op, binary, ["y"], domain=MS)], q,
                    [tensor_info("a", shape), tensor_info("b", shape)], [tensor_info("y", shape)],
                    [("a", a), ("b", b)], 17))
    out.append(("QLinearAdd_broadcast", [helper.make_node("QLinearAdd", binary, ["y"], domain=MS)],
                q, [tensor_info("a", shape), tensor_info("b", [5])], [tensor_info("y", shape)],
                [("a", a), ("b", b[0, 0, 0])], 17))
    unary = [
        ("QLinearSigmoid", {}, shape, 17),
        ("QLinearLeakyRelu", {"alpha": 0.13}, shape, 17),
        ("QLinearSoftmax", {"opset": 13, "axis": -1}, shape, 17),
        ("QLinearSoftmax", {"opset": 11, "axis": 1}, shape, 12),
        ("QLinearGlobalAveragePool", {}, [2, 3, 1, 1], 17),
        ("QLinearAveragePool", {"kernel_shape": [2, 2], "strides": [2, 1], "pads": [0, 1, 1, 0],
                                "count_include_pad": 1}, [2, 3, 2, 5], 17),
        ("QLinearAveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, shape, 17),
        ("QLinearReduceMean", {"axes": [1, 3], "keepdims": 1}, [2, 1, 4, 1], 17),
    ]
    for i, (op, attrs, y_shape, opset) in enumerate(unary):
        out.append((f"{op}_{i}", [helper.make_node(op, ["a", "sa", "za", "sy", "zy"], ["y"],
                                                   domain=MS, **attrs)],
                    q, [tensor_info("a", shape)], [tensor_info("y", y_shape)], [("a", a)], opset))
    out.append(("QLinearConcat", [helper.make_node("QLinearConcat",
                                                   ["sy", "zy", "a", "sa", "za", "b", "sb", "zb"],
                                                   ["y"], domain=MS, axis=2)],
                q, [tensor_info("a", shape), tensor_info("b", shape)],
                [tensor_info("y", [2, 3, 8, 5])], [("a", a), ("b", b)], 17))
    # QGemm: u8 A [4, 6], s8 B [5, 6] transposed with per-column scales, int32 C, alpha.
    w = rng.integers(-128, 128, [5, 6]).astype(np.int8)
    ws = f32(rng.uniform(0.005, 0.02, [5]))
    gemm = [numpy_helper.from_array(v, n) for n, v in [
        ("sa", f32(0.037)), ("za", u8(121)), ("w", w), ("ws", ws), ("wz", np.zeros([5], np.int8)),
        ("bias", rng.integers(-2000, 2000, [5]).astype(np.int32)), ("sy", f32(0.09)),
        ("zy", u8(128))]]
    ga = rng.integers(0, 256, [4, 6]).astype(np.uint8)
    for name, extra, y_type in [("QGemm_float", [], T.FLOAT), ("QGemm_quantized", ["sy", "zy"],
                                                                T.UINT8)]:
        out.append((name, [helper.make_node("QGemm", ["a", "sa", "za", "w", "ws", "wz", "bias"] +
                                            extra, ["y"], domain=MS, transB=1, alpha=0.75)],
                    gemm, [tensor_info("a", [4, 6])], [tensor_info("y", [4, 5], y_type)],
                    [("a", ga)], 17))
    w2 = rng.integers(-128, 128, [6, 5]).astype(np.int8)
    matmul = [numpy_helper.from_array(v, n) for n, v in [
        ("sa", f32(0.037)), ("za", u8(121)), ("w", w2), ("ws", ws),
        ("bias", f32(rng.normal(size=[5])))]]
    out.append(("MatMulIntegerToFloat", [helper.make_node(
        "MatMulIntegerToFloat", ["a", "w", "sa", "ws", "za", "", "bias"], ["y"], domain=MS)],
        matmul, [tensor_info("a", [4, 6])], [tensor_info("y", [4, 5], T.FLOAT)], [("a", ga)], 17))
    out.append(("DynamicQuantizeMatMul", [helper.make_node(
        "DynamicQuantizeMatMul", ["a", "w", "ws", "", "bias"], ["y"], domain=MS)],
        matmul, [tensor_info("a", [4, 6], T.FLOAT)], [tensor_info("y", [4, 5], T.FLOAT)],
        [("a", rng.normal(size=[4, 6]).astype(np.float32))], 17))
    return out + fused_cases(rng)


def fused_cases(rng):
    """The float fusions ONNX Runtime's graph optimizer saves (FusedConv, FusedGemm, FusedMatMul,
    the GELUs, SkipLayerNormalization), one case each (several activations for FusedConv)."""
    def f(*shape):
        return rng.normal(size=shape).astype(np.float32)

    def init(**arrays):
        return [numpy_helper.from_array(v, n) for n, v in arrays.items()]

    x, w, bias, z = f(1, 3, 6, 6), f(4, 3, 3, 3), f(4), f(1, 4, 6, 6)
    out = []
    for i, (activation, params) in enumerate([("Relu", []), ("LeakyRelu", [0.2]),
                                             ("HardSigmoid", [0.3, 0.4]), ("Clip", [-0.5, 1.5]),
                                             ("Sigmoid", []), ("Tanh", [])]):
        attrs = {"activation": activation, "kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
        if params:
            attrs["activation_params"] = params
        inputs = ["x", "w", "b"] + (["z"] if i == 0 else [])
        out.append((f"FusedConv_{activation}", [helper.make_node(
            "FusedConv", inputs, ["y"], domain=MS, **attrs)], init(w=w, b=bias, z=z),
            [tensor_info("x", [1, 3, 6, 6], T.FLOAT)], [tensor_info("y", [1, 4, 6, 6], T.FLOAT)],
            [("x", x)], 17))
    out.append(("FusedGemm", [helper.make_node(
        "FusedGemm", ["a", "w", "c"], ["y"], domain=MS, transB=1, alpha=0.5, beta=2.0,
        activation="LeakyRelu", activation_alpha=0.1)], init(w=f(5, 6), c=f(5)),
        [tensor_info("a", [4, 6], T.FLOAT)], [tensor_info("y", [4, 5], T.FLOAT)],
        [("a", f(4, 6))], 17))
    out.append(("FusedMatMul", [helper.make_node(
        "FusedMatMul", ["a", "b"], ["y"], domain=MS, alpha=0.125)], [],
        [tensor_info("a", [2, 3, 4], T.FLOAT), tensor_info("b", [2, 4, 5], T.FLOAT)],
        [tensor_info("y", [2, 3, 5], T.FLOAT)], [("a", f(2, 3, 4)), ("b", f(2, 4, 5))], 17))
    out.append(("FusedMatMul_transposed", [
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("FusedMatMul", ["r", "b"], ["y"], domain=MS, alpha=0.25, transA=1,
                         transB=1)], [],
        [tensor_info("a", [2, 4, 3], T.FLOAT), tensor_info("b", [2, 5, 4], T.FLOAT)],
        [tensor_info("y", [2, 3, 5], T.FLOAT)], [("a", f(2, 4, 3)), ("b", f(2, 5, 4))], 17))
    v, vb = f(2, 3, 8) * 2, f(8)
    for op, inputs, attrs in [("Gelu", ["x"], {}), ("BiasGelu", ["x", "vb"], {}),
                              ("FastGelu", ["x", "vb"], {}), ("FastGelu", ["x"], {}),
                              ("QuickGelu", ["x"], {"alpha": 1.702}),
                              ("QuickGelu", ["x"], {"alpha": 1.0})]:
        out.append((f"{op}_{len(inputs)}_{attrs.get('alpha', '')}", [helper.make_node(
            op, inputs, ["y"], domain=MS, **attrs)], init(vb=vb),
            [tensor_info("x", [2, 3, 8], T.FLOAT)], [tensor_info("y", [2, 3, 8], T.FLOAT)],
            [("x", v)], 17))
    g, beta = f(8), f(8)
    for name, inputs, outputs in [("SkipLayerNormalization", ["x", "s", "g", "beta", "vb"],
                                   ["y", "", "", "sum"]),
                                  ("SkipLayerNormalization_plain", ["x", "s", "g"], ["y"])]:
        out.append((name, [helper.make_node("SkipLayerNormalization", inputs, outputs,
                                            domain=MS, epsilon=1e-5)],
                    init(g=g, beta=beta, vb=vb),
                    [tensor_info("x", [2, 3, 8], T.FLOAT), tensor_info("s", [2, 3, 8], T.FLOAT)],
                    [tensor_info(o, [2, 3, 8], T.FLOAT) for o in outputs if o],
                    [("x", f(2, 3, 8)), ("s", f(2, 3, 8))], 17))
    return out


def write_case(case_dir, nodes, inits, inputs, outputs, feeds, opset):
    graph = helper.make_graph(nodes, os.path.basename(case_dir), inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    gen_graphs.write_case(case_dir, model, feeds)


def ort_reference(dirs, name_of_run, reference="node", level="disabled"):
    """ONNX Runtime's outputs of each case folder of `dirs`, written beside its inputs by one
    reference process (diff_test.OrtReference) at graph optimization `level`: its error a case
    (None: it ran), in order."""
    try:
        errors = OrtReference.run(dirs, reference, level)
    except RuntimeError as e:
        sys.exit(f"{name_of_run}: {e}")
    return [errors[d] for d in dirs]


def run_hsched(args, case_dir, extra=(), out="hsched"):
    """`hsched run` of case_dir's model on its inputs (on args.devices in args.precision, or
    under args.policy where the caller has one), outputs to case_dir/out, its report as JSON on
    stdout; the inputs are the accuracy checks' sample inputs too. No compile deadline: a cold compile (PoCL's of a new program takes tens of
    seconds) would hand the case to the CPU and test nothing of the device."""
    placement = (["--policy", args.policy] if getattr(args, "policy", None) else
                 ["--devices", args.devices, "--precision", args.precision])
    return subprocess.run([args.hsched, "run", os.path.join(case_dir, "model.onnx"), *placement,
                           "--inputs", os.path.join(case_dir, "test_data_set_0"), "--outputs",
                           os.path.join(case_dir, out), "--iterations", "1", "--warmup", "0",
                           "--compile-timeout-ms", str(24 * 3600 * 1000), "--json", *extra],
                          capture_output=True, text=True, timeout=args.timeout)


def ran_on(run):
    """The devices that ran nodes in a successful run_hsched, as its line says them."""
    try:
        partitions = json.loads(run.stdout)["partitions"]
    except (ValueError, KeyError):
        return "no report"
    devices = sorted({p["device"] for p in partitions if p["nodes"] > 0})
    return "on " + "+".join(devices) if devices else "no nodes"


def compare(case_list, args, name_of_run):
    """Writes `case_list` ((name, nodes, initializers, inputs, outputs, feeds, opset) each) under
    args.out, runs ONNX Runtime and `hsched run` on each, prints a line a case and returns how
    many mismatched or were refused by hsched."""
    use_simulated_npu(args.devices, args.hsched)
    shutil.rmtree(args.out, ignore_errors=True)
    dirs = []
    for name, *parts in case_list:
        dirs.append(os.path.join(args.out, name))
        write_case(dirs[-1], *parts)
    failed = 0
    for case_dir, error in zip(dirs, ort_reference(dirs, name_of_run, args.reference,
                                                   args.ort_level)):
        name = os.path.basename(case_dir)
        if error is not None:
            print(f"{name}: ort-refused ({error[:120]})")
            continue
        out_dir = os.path.join(case_dir, "hsched")
        run = run_hsched(args, case_dir)
        if run.returncode != 0:
            print(f"{name}: FAILED: hsched exit {run.returncode}: {run.stderr.strip()[:200]}")
            failed += 1
            continue
        want = read_tensor(os.path.join(case_dir, "test_data_set_0", "output_0.pb"))
        got = read_tensor(os.path.join(out_dir, "output_0.pb"))
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        if want.dtype == np.float32:
            bound = args.rtol * max(1.0, float(np.abs(want).max()))
            unit = ""
        else:
            bound = args.steps
            unit = " steps"
        worst = float(diff.max()) if diff.size else 0.0
        ok = got.shape == want.shape and got.dtype == want.dtype and worst <= bound
        failed += not ok
        print(f"{name}: {'ok' if ok else 'FAILED'} ({ran_on(run)}): largest difference "
              f"{worst:g}{unit}, {int((diff > 0).sum())} of {diff.size} values differ")
    return failed


def arguments(description, out):
    """The command line of a comparison against ONNX Runtime (compare's `args`)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--devices", default="cpu")
    parser.add_argument("--precision", default="fp32", help="as hsched run's (int8 for the NPU)")
    parser.add_argument("--hsched", default=os.path.join(ROOT, "build", "release", "cli",
                                                         "hsched"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", out))
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per hsched run")
    parser.add_argument("--reference", default="node", choices=sorted(OrtReference.COMMANDS),
                        help="ONNX Runtime through node (onnxruntime-node) or its Python package")
    parser.add_argument("--ort-level", default="disabled",
                        choices=["disabled", "basic", "extended", "all"],
                        help="ONNX Runtime's graph optimization level for the reference")
    return parser


def main():
    args = arguments(__doc__.splitlines()[0], "ms-quantized-ops").parse_args()
    sys.exit(1 if compare(cases(), args, "ms_quantized_ops") else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The QDQ groups hsched runs with ONNX Runtime's QOperator arithmetic (DequantizeLinear ->
Add / Mul / Softmax -> QuantizeLinear of one 8-bit type, and the com.microsoft QLinearAdd,
QLinearMul and QLinearSoftmax ops), compared byte for byte with ONNX Runtime with its graph
optimizations at `extended` (which runs the groups as those ops).

    /usr/bin/python3 tests/differential/qlinear_exact.py [--devices cpu] [--hsched BIN]
        [--out DIR] [--steps N] [--reference node|python]

Cases: Add and Mul of every pair of bytes (u8 and i8, random scales and zero points), the second
operand also one value, a row repeating along the first or a constant, in both operand orders;
Softmax over rows of 3 to 1000 random bytes with the output scales quantizers write (1/255,
1/256) and a calibrated one; MatMul by int8 weights and of two activations, Conv (u8). Default --steps 0: every byte equal. Prints a line per case and exits 1 when one
differs or hsched refuses it.
"""
import os
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ms_quantized_ops  # noqa: E402
from ms_quantized_ops import MS  # noqa: E402


def types(signed):
    return (T.INT8, np.int8, -128) if signed else (T.UINT8, np.uint8, 0)


def scalar(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def binary_cases(rng):
    out = []
    for signed in (False, True):
        dtype, np_type, low = types(signed)
        for op in ("Add", "Mul"):
            for form in ("pairs", "one", "row"):
                for swapped in (False, True):
                    a = (np.arange(65536) // 256 + low).astype(np_type).reshape(256, 256)
                    b = (np.arange(65536) % 256 + low).astype(np_type).reshape(256, 256)
                    if form == "one":
                        b = np.array([rng.integers(0, 256) + low], dtype=np_type)
                    elif form == "row":
                        b = (rng.permutation(256) + low).astype(np_type)
                    sa, sb = rng.uniform(0.002, 0.08, 2)
                    za, zb, zy = (int(v) + low for v in rng.integers(0, 256, 3))
                    span = sa * sb * 128 * 128 if op == "Mul" else (sa + sb) * 128
                    sy = span * rng.uniform(0.3, 1.5) / 255
                    inits = [scalar("sa", sa), scalar("za", za, np_type), scalar("sb", sb),
                             scalar("zb", zb, np_type), scalar("sy", sy), scalar("zy", zy, np_type)]
                    operands = ["bd", "ad"] if swapped else ["ad", "bd"]
                    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["ad"]),
                             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["bd"]),
                             helper.make_node(op, operands, ["v"]),
                             helper.make_node("QuantizeLinear", ["v", "sy", "zy"], ["y"])]
                    name = f"qdq-{op}-{'i8' if signed else 'u8'}-{form}{'-ba' if swapped else ''}"
                    inputs = [helper.make_tensor_value_info("a", dtype, list(a.shape)),
                              helper.make_tensor_value_info("b", dtype, list(b.shape))]
                    outputs = [helper.make_tensor_value_info("y", dtype, list(a.shape))]
                    out.append((name, nodes, inits, inputs, outputs, [("a", a), ("b", b)], 17))
                    if form == "pairs" and not swapped:  # the QOperator op itself
                        node = helper.make_node("QLinear" + op, ["a", "sa", "za", "b", "sb", "zb",
                                                                 "sy", "zy"], ["y"], domain=MS)
                        out.append((name.replace("qdq-", "ms-"), [node], inits, inputs, outputs,
                                    [("a", a), ("b", b)], 17))
    return out


def softmax_cases(rng):
    out = []
    for k, size in enumerate([3, 7, 64, 197, 1000, 128]):
        signed = k % 2 == 1
        dtype, np_type, low = types(signed)
        x = (rng.integers(0, 256, [64, size]) + low).astype(np_type)
        x[0] = low  # a row of equal values, and one of the largest
        x[1] = 255 + low
        sx = rng.uniform(0.005, 0.2)
        zx = int(rng.integers(0, 256)) + low
        for sy in (1 / 255, 1 / 256, rng.uniform(0.002, 0.01)):
            inits = [scalar("sx", sx), scalar("zx", zx, np_type), scalar("sy", sy),
                     scalar("zy", low, np_type)]
            nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xd"]),
                     helper.make_node("Softmax", ["xd"], ["p"], axis=-1),
                     helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["y"])]
            name = f"qdq-Softmax-{'i8' if signed else 'u8'}-{size}-sy{1 / sy:.0f}"
            inputs = [helper.make_tensor_value_info("x", dtype, list(x.shape))]
            outputs = [helper.make_tensor_value_info("y", dtype, list(x.shape))]
            out.append((name, nodes, inits, inputs, outputs, [("x", x)], 17))
            if sy == 1 / 256:
                node = helper.make_node("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], ["y"],
                                        domain=MS, axis=-1, opset=13)
                out.append((name.replace("qdq-", "ms-"), [node], inits, inputs, outputs,
                            [("x", x)], 17))
    return out


def constant_operand_cases(rng):
    """An Add whose second operand is a constant's DequantizeLinear (a position embedding)."""
    out = []
    for signed in (False, True):
        dtype, np_type, low = types(signed)
        a = (rng.integers(0, 256, [4, 197, 64]) + low).astype(np_type)
        c = (rng.integers(0, 256, [1, 197, 64]) + low).astype(np_type)
        sa, sc = rng.uniform(0.01, 0.05, 2)
        za, zc, zy = (int(v) + low for v in rng.integers(0, 256, 3))
        sy = (sa + sc) * 128 * rng.uniform(0.5, 1.2) / 255
        inits = [scalar("sa", sa), scalar("za", za, np_type), scalar("sc", sc),
                 scalar("zc", zc, np_type), scalar("sy", sy), scalar("zy", zy, np_type),
                 numpy_helper.from_array(c, "c")]
        nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["ad"]),
                 helper.make_node("DequantizeLinear", ["c", "sc", "zc"], ["cd"]),
                 helper.make_node("Add", ["ad", "cd"], ["v"]),
                 helper.make_node("QuantizeLinear", ["v", "sy", "zy"], ["y"])]
        out.append((f"qdq-Add-{'i8' if signed else 'u8'}-constant", nodes, inits,
                    [helper.make_tensor_value_info("a", dtype, list(a.shape))],
                    [helper.make_tensor_value_info("y", dtype, list(a.shape))], [("a", a)], 17))
    return out


def matmul_cases(rng):
    """MatMul of an activation by int8 weights (a Linear, its scale per column) and of two
    activations (attention's products), and a Conv: their sums exact, then the requantization.
    u8 activations: ONNX Runtime's CPU runs these ops of int8 activations as the float graph."""
    out = []
    for signed in (False,):
        dtype, np_type, low = types(signed)
        tag = "i8" if signed else "u8"
        a = (rng.integers(0, 256, [2, 197, 64]) + low).astype(np_type)
        b = (rng.integers(0, 256, [2, 64, 197]) + low).astype(np_type)
        w = rng.integers(-127, 128, [64, 96]).astype(np.int8)
        sa, sb = rng.uniform(0.01, 0.05, 2)
        za, zb, zy = (int(v) + low for v in rng.integers(0, 256, 3))
        sw = rng.uniform(0.002, 0.01, 96).astype(np.float32)
        base = [scalar("sa", sa), scalar("za", za, np_type), scalar("zy", zy, np_type)]
        linear = base + [numpy_helper.from_array(w, "w"), numpy_helper.from_array(sw, "sw"),
                         numpy_helper.from_array(np.zeros(96, np.int8), "zw"),
                         scalar("sy", sa * 0.006 * 64 * 40 / 255)]
        nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["ad"]),
                 helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=1),
                 helper.make_node("MatMul", ["ad", "wd"], ["v"]),
                 helper.make_node("QuantizeLinear", ["v", "sy", "zy"], ["y"])]
        out.append((f"qdq-MatMul-{tag}-weights", nodes, linear,
                    [helper.make_tensor_value_info("a", dtype, list(a.shape))],
                    [helper.make_tensor_value_info("y", dtype, [2, 197, 96])], [("a", a)], 17))
        pair = base + [scalar("sb", sb), scalar("zb", zb, np_type),
                       scalar("sy", sa * sb * 64 * 60 / 255)]
        nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["ad"]),
                 helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["bd"]),
                 helper.make_node("MatMul", ["ad", "bd"], ["v"]),
                 helper.make_node("QuantizeLinear", ["v", "sy", "zy"], ["y"])]
        out.append((f"qdq-MatMul-{tag}-activations", nodes, pair,
                    [helper.make_tensor_value_info("a", dtype, list(a.shape)),
                     helper.make_tensor_value_info("b", dtype, list(b.shape))],
                    [helper.make_tensor_value_info("y", dtype, [2, 197, 197])],
                    [("a", a), ("b", b)], 17))
        x = (rng.integers(0, 256, [1, 16, 20, 20]) + low).astype(np_type)
        k = rng.integers(-127, 128, [24, 16, 3, 3]).astype(np.int8)
        sk = rng.uniform(0.002, 0.01, 24).astype(np.float32)
        bias = rng.integers(-2000, 2000, 24).astype(np.int32)
        conv = base + [numpy_helper.from_array(k, "k"), numpy_helper.from_array(sk, "sk"),
                       numpy_helper.from_array(np.zeros(24, np.int8), "zk"),
                       numpy_helper.from_array(bias, "bias"),
                       numpy_helper.from_array((sa * sk).astype(np.float32), "sbias"),
                       scalar("sy", sa * 0.006 * 144 * 30 / 255)]
        nodes = [helper.make_node("DequantizeLinear", ["x", "sa", "za"], ["xd"]),
                 helper.make_node("DequantizeLinear", ["k", "sk", "zk"], ["kd"], axis=0),
                 helper.make_node("DequantizeLinear", ["bias", "sbias"], ["bd"], axis=0),
                 helper.make_node("Conv", ["xd", "kd", "bd"], ["v"], pads=[1, 1, 1, 1]),
                 helper.make_node("QuantizeLinear", ["v", "sy", "zy"], ["y"])]
        out.append((f"qdq-Conv-{tag}", nodes, conv,
                    [helper.make_tensor_value_info("x", dtype, list(x.shape))],
                    [helper.make_tensor_value_info("y", dtype, [1, 24, 20, 20])], [("x", x)], 17))
    return out


def main():
    parser = ms_quantized_ops.arguments(__doc__.splitlines()[0], "qlinear-exact")
    parser.set_defaults(steps=0, ort_level="extended")
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    cases = binary_cases(rng) + softmax_cases(rng) + constant_operand_cases(rng) + matmul_cases(rng)
    sys.exit(1 if ms_quantized_ops.compare(cases, args, "qlinear_exact") else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Random chains of elementwise ops on one 8-bit tensor in the QDQ format (the pattern hsched runs
as one table lookup on the CPU and one kernel on OpenCL), run by `hsched run --devices DEVICES`
and by ONNX Runtime with its graph optimizations at --ort-level (default extended: its Add and Mul
of 8-bit operands as QLinearAdd and QLinearMul, as hsched's tables compute them), outputs compared
within --steps quantization steps (default 1: a float op of either may round a tie the other way).

    /usr/bin/python3 tests/differential/qdq_chains.py [--count 60] [--seed 1] [--devices cpu]
        [--hsched BIN] [--out DIR] [--steps N] [--ort-level LEVEL]

Each case: u8 or i8 x [4, 64] holding every byte, its DequantizeLinear, then 2 to 6 ops (an
activation of the value before, or Add, Sub, Mul, Div of it and x, a constant or a constant
through its own QuantizeLinear and DequantizeLinear, either side), a QuantizeLinear and
DequantizeLinear after an op at random (u8 or i8), the last QuantizeLinear into u8 or i8; scales
fitted to each value's range on x, so little saturates. Prints a line per case and exits 1 when
one mismatches or is refused.
"""
import os
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ms_quantized_ops  # noqa: E402

SHAPE = [4, 64]
# Activations as numpy computes them, to fit the scales (not to check the results).
UNARY = {
    "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "Tanh": np.tanh,
    "Relu": lambda v: np.maximum(v, 0),
    "HardSigmoid": lambda v: np.clip(0.2 * v + 0.5, 0, 1),
    "HardSwish": lambda v: v * np.clip(v / 6 + 0.5, 0, 1),
    "Softsign": lambda v: v / (1 + np.abs(v)),
    "Erf": lambda v: np.vectorize(__import__("math").erf)(v),
}
BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


def fitted(values, dtype):
    """Scale and zero point covering `values` (and 0) in `dtype`'s 256 steps."""
    lo, hi = min(float(values.min()), 0.0), max(float(values.max()), 0.0)
    scale = max(hi - lo, 1e-3) / 255
    zero = int(round(-lo / scale)) + (-128 if dtype == T.INT8 else 0)
    return np.float32(scale), zero


def case(rng, index):
    """One random chain: (name, nodes, initializers, inputs, outputs, feeds, opset)."""
    nodes, inits = [], []
    names = iter(f"v{i}" for i in range(100))

    def constant(value, dtype=T.FLOAT):
        name = next(names)
        array = np.array(value, dtype=np.float32 if dtype == T.FLOAT else
                         (np.uint8 if dtype == T.UINT8 else np.int8))
        inits.append(numpy_helper.from_array(array, name))
        return name

    def quantize(value_name, values, dtype):
        """Q then DQ of `value_name`: the requantized name and values."""
        scale, zero = fitted(values, dtype)
        s, z = constant(scale), constant(zero, dtype)
        q, d = next(names), next(names)
        nodes.append(helper.make_node("QuantizeLinear", [value_name, s, z], [q]))
        nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [d]))
        lo, hi = (0, 255) if dtype == T.UINT8 else (-128, 127)
        stored = np.clip(np.round(values / scale) + zero, lo, hi)
        return d, ((stored - zero) * scale).astype(np.float32)

    def any_type():
        return T.UINT8 if rng.random() < 0.5 else T.INT8

    x_type = any_type()
    x_bytes = rng.permutation(256).reshape(SHAPE) - (128 if x_type == T.INT8 else 0)
    x_bytes = x_bytes.astype(np.int8 if x_type == T.INT8 else np.uint8)
    x_scale = np.float32(rng.uniform(0.01, 0.05))
    x_zero = int(rng.integers(60, 200)) - (128 if x_type == T.INT8 else 0)
    xs, xz = constant(x_scale), constant(x_zero, x_type)
    nodes.append(helper.make_node("DequantizeLinear", ["x", xs, xz], ["xd"]))
    x = ((x_bytes.astype(np.float32) - x_zero) * x_scale).astype(np.float32)
    current, values = "xd", x
    ops = int(rng.integers(2, 7))
    for i in range(ops):
        out = next(names)
        if rng.random() < 0.5:
            op = str(rng.choice(list(UNARY)))
            nodes.append(helper.make_node(op, [current], [out]))
            values = UNARY[op](values).astype(np.float32)
        else:
            op = str(rng.choice(list(BINARY)))
            kind = rng.integers(0, 3)
            if kind == 0:
                other, other_values = "xd", x
            else:
                c = np.float32(rng.uniform(0.5, 2.0) * rng.choice([-1, 1]))
                other, other_values = constant(c), c
                if kind == 2:  # a constant through its own QuantizeLinear and DequantizeLinear
                    other, other_values = quantize(other, np.array([c], dtype=np.float32),
                                                   any_type())
                    other_values = other_values[0]
            # A divisor kept away from 0: x's dequantized values cross it.
            if op == "Div" and kind == 0:
                op = "Mul"
            operands = [current, other] if rng.random() < 0.5 or op == "Div" else [other, current]
            nodes.append(helper.make_node(op, operands, [out]))
            first = values if operands[0] == current else other_values
            second = other_values if operands[0] == current else values
            values = BINARY[op](first, second).astype(np.float32)
        current = out
        if i + 1 < ops and rng.random() < 0.6:
            current, values = quantize(current, values, any_type())
    y_type = any_type()
    ys, yz = fitted(values, y_type)
    nodes.append(helper.make_node("QuantizeLinear", [current, constant(ys), constant(yz, y_type)],
                                  ["y"]))
    inputs = [helper.make_tensor_value_info("x", x_type, SHAPE)]
    outputs = [helper.make_tensor_value_info("y", y_type, SHAPE)]
    return (f"chain-{index:03d}-{ops}ops", nodes, inits, inputs, outputs, [("x", x_bytes)], 17)


def main():
    parser = ms_quantized_ops.arguments(__doc__.splitlines()[0], "qdq-chains")
    parser.set_defaults(ort_level="extended")
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    cases = [case(rng, i) for i in range(args.count)]
    sys.exit(1 if ms_quantized_ops.compare(cases, args, "qdq_chains") else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Random float graphs (gen_graphs.py) quantized into the QDQ format as ONNX Runtime's
`quantize_static` writes it, run by `hsched run --devices DEVICES` and by ONNX Runtime with its
graph optimizations at --ort-level (ort_reference.js; default extended, which runs the QDQ groups
as its QOperator ops, as hsched computes them), outputs compared in quantization steps.

    /usr/bin/python3 tests/differential/qdq_graphs.py [--count 40] [--seed 1] [--devices cpu]
        [--policy POLICY] [--hsched BIN] [--out DIR] [--steps N] [--menu all|transformer] [--first I]
        [--split-every K] [--qoperator SHARE] [--reference node|python] [--ort-level LEVEL]

Each case: a graph of gen_graphs.py drawn from the blocks quantized models are made of (Conv
blocks, MatMul, Gemm, attention, LayerNormalization, Softmax, pools, elementwise ops, moves),
calibrated by ONNX Runtime on its own test input (every float tensor's range), then quantized:
- every float tensor an op of QUANTIZED makes or reads gets a QuantizeLinear -> DequantizeLinear
  pair (asymmetric, the range widened to 0; uint8, in a third of the cases int8 as ONNX
  Runtime's QInt8 activations), read by all its readers; a move's output (MOVES) takes its
  input's parameters, as ONNX Runtime's quantizer gives it;
- a constant MatMul, Conv or Gemm weight becomes int8, symmetric, a scale per output channel
  (now and then one per tensor); a Conv's or Gemm's bias int32 at the input's scale times the
  weight's; a float constant of an arithmetic op, a normalization or a Concat 8-bit as the
  activations, with its own range;
- a graph output is the DequantizeLinear of its pair (a float), compared in steps of its scale;
- with --qoperator SHARE, that share of the Convs, MatMuls, Gemms, Adds, Muls, Sigmoids,
  LeakyRelus, pools and Concats between DequantizeLinears and a QuantizeLinear becomes its
  QOperator form (QLinearConv, QLinearMatMul, ONNX Runtime's QGemm, QLinearAdd...), as its
  QOperator format writes it.
The comparison is for fp32 storage: fp16 storage (--precision fp16, the simulated NPU) rounds
the dequantized values between the pairs, which steps of the output's scale do not allow for.
A case fails when an output differs from ONNX Runtime's by more than --steps (default 2: a value
rounding a tie the other way moves what reads it) or hsched refuses or crashes on it. Prints a line
per case and exits 1 on a failure.
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_graphs  # noqa: E402
import graph_builders as gb  # noqa: E402
import ms_quantized_ops  # noqa: E402
import nn_builders as nb  # noqa: E402
from diff_test import read_tensor, use_simulated_npu  # noqa: E402
from ms_quantized_ops import MS  # noqa: E402

# The blocks quantized models are made of, and how often each is drawn.
MENU = [(gb.unary, 3), (gb.gelu, 2), (gb.clip, 1), (gb.binary, 6), (gb.reshape, 3),
        (gb.transpose, 3), (gb.flatten, 1), (gb.squeeze_unsqueeze, 2), (gb.concat, 2),
        (gb.split, 2), (gb.gather, 1), (nb.softmax, 2), (nb.matmul, 4), (nb.gemm, 2),
        (nb.conv_block, 4), (nb.pool, 2), (nb.layer_norm, 3), (nb.instance_norm, 1),
        (nb.attention, 2), (nb.vit_attention, 2), (nb.se_block, 1), (nb.fire, 1),
        (nb.shuffle_unit, 1), (nb.pad, 1), (nb.resize, 1)]
# Transformer blocks alone (--menu transformer): the QDQ fusions of attention, Linears,
# LayerNormalization and GELU.
TRANSFORMER_MENU = [(nb.matmul, 4), (nb.gemm, 1), (nb.layer_norm, 4), (nb.attention, 4),
                    (nb.vit_attention, 4), (gb.gelu, 3), (gb.binary, 4), (nb.softmax, 1),
                    (gb.reshape, 1), (gb.transpose, 1), (gb.split, 1), (gb.unary, 1)]
QUANTIZED = {"Conv", "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Relu", "Clip", "LeakyRelu",
             "Sigmoid", "Tanh", "Erf", "HardSigmoid", "HardSwish", "Softmax", "LogSoftmax",
             "LayerNormalization", "InstanceNormalization", "AveragePool", "MaxPool",
             "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "Concat", "Resize", "Pad",
             "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Split", "Gather",
             "Slice"}
MOVES = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Split", "Gather", "Slice",
         "MaxPool", "GlobalMaxPool", "Pad"}
# Ops whose other float constants are quantized too (the rest keep Resize's scales, Clip's
# bounds, Pad's value as they are).
CONSTANTS = {"Add", "Sub", "Mul", "Div", "LayerNormalization", "InstanceNormalization", "Concat"}
WEIGHTS = {"Conv": 0, "Gemm": None, "MatMul": -1}  # the weight's output-channel axis (Gemm: transB)


def float_values(model):
    """Names of the float tensors the nodes make and the graph's float inputs."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(inferred.graph.value_info) + list(inferred.graph.input) +
             list(inferred.graph.output)}
    made = [o for n in model.graph.node for o in n.output if o]
    return {name for name in made + [i.name for i in model.graph.input]
            if types.get(name) == T.FLOAT}


def write_probe(model, inputs, case_dir, floats):
    """Writes `model` with every float tensor of `floats` as an output, for ONNX Runtime to
    calibrate it on `inputs`; returns that model."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    outputs = {o.name for o in probe.graph.output}
    inner = sorted(floats - outputs - {i.name for i in probe.graph.input})
    probe.graph.output.extend(helper.make_tensor_value_info(n, T.FLOAT, None) for n in inner)
    gen_graphs.write_case(case_dir, probe, inputs)
    return probe


def calibration_ranges(probe, inputs, case_dir, floats):
    """(min, max) of each float tensor on the case's input, from ONNX Runtime's run of
    write_probe's model."""
    ranges = {name: (float(array.min()), float(array.max())) if array.size else (0.0, 0.0)
              for name, array in inputs if name in floats}
    data = os.path.join(case_dir, "test_data_set_0")
    for k, out in enumerate(probe.graph.output):
        array = read_tensor(os.path.join(data, f"output_{k}.pb"))
        if out.name in floats and array.size and np.isfinite(array).all():
            ranges[out.name] = (float(array.min()), float(array.max()))
    return ranges


def fitted(lo, hi):
    """uint8 scale and zero point covering [lo, hi] widened to 0, and a little more, unevenly:
    a range symmetric about 0 (Atan of inputs -3 and 3) would put its ends exactly half a step
    off the grid, where one ulp of the op decides the rounding."""
    lo, hi = min(lo, 0.0) * 1.0137, max(hi, 0.0) * 1.0291
    scale = max(hi - lo, 1e-2) / 255  # a range of float noise (a LayerNorm over one value) wider
    return np.float32(scale), int(np.clip(round(-lo / scale), 0, 255))


class Quantizer:
    """Rewrites one model into the QDQ format (see the module's text)."""

    def __init__(self, model, ranges, rng):
        self.model, self.ranges, self.rng = model, ranges, rng
        self.inits = {i.name: i for i in model.graph.initializer}
        self.nodes, self.new_inits = [], []
        self.params = {}  # tensor -> (scale, zero)
        self.dequantized = {}  # tensor -> its DequantizeLinear's output
        self.count = 0
        self.signed = rng.random() < 1 / 3  # int8 activations, else uint8

    def fresh(self, base):
        self.count += 1
        return f"{base}_q{self.count}"

    def constant(self, array, base):
        name = self.fresh(base)
        self.new_inits.append(numpy_helper.from_array(array, name))
        return name

    def stored(self, unsigned):
        """Values of [0, 255] in the activations' type."""
        unsigned = np.asarray(unsigned)
        return (unsigned - 128).astype(np.int8) if self.signed else unsigned.astype(np.uint8)

    def pair(self, tensor, params):
        """Q -> DQ of `tensor` with `params`; every reader then reads the DQ output."""
        scale, zero = params
        s = self.constant(np.array(scale, np.float32), tensor + "_scale")
        z = self.constant(self.stored(zero), tensor + "_zero")
        q, d = self.fresh(tensor + "_Q"), self.fresh(tensor + "_DQ")
        self.nodes.append(helper.make_node("QuantizeLinear", [tensor, s, z], [q]))
        self.nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [d]))
        self.params[tensor], self.dequantized[tensor] = params, d
        return d

    def activation(self, tensor, params=None):
        if tensor in self.dequantized:
            return self.dequantized[tensor]
        if params is None:
            if tensor not in self.ranges:
                return tensor
            params = fitted(*self.ranges[tensor])
        return self.pair(tensor, params)

    def weight(self, node, init):
        """int8 symmetric weight of `node` (per output channel now and then not), dequantized."""
        w = numpy_helper.to_array(init).astype(np.float32)
        axis = WEIGHTS[node.op_type] % w.ndim if WEIGHTS[node.op_type] is not None else None
        if axis is None:
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            axis = 0 if trans_b else 1
        per_channel = w.ndim >= 2 and self.rng.random() < 0.8
        if per_channel:
            reduce = tuple(i for i in range(w.ndim) if i != axis)
            scale = np.maximum(np.abs(w).max(axis=reduce), 1e-6) / 127
            shape = [1] * w.ndim
            shape[axis] = -1
            q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
        else:
            scale = np.array(max(float(np.abs(w).max()), 1e-6) / 127, np.float32)
            q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        scale = scale.astype(np.float32)
        inputs = [self.constant(q, init.name), self.constant(scale, init.name + "_scale"),
                  self.constant(np.zeros(scale.shape, np.int8), init.name + "_zero")]
        out = self.fresh(init.name + "_DQ")
        attrs = {"axis": axis} if per_channel else {}
        self.nodes.append(helper.make_node("DequantizeLinear", inputs, [out], **attrs))
        return out, scale

    def bias(self, init, x_scale, w_scale):
        b = numpy_helper.to_array(init).astype(np.float64)
        scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        if b.ndim != 1 or np.any(scale == 0) or scale.size not in (1, b.size):
            return init.name
        q = np.round(b / scale.astype(np.float64))
        if np.abs(q).max(initial=0) >= 2**31:
            return init.name
        out = self.fresh(init.name + "_DQ")
        inputs = [self.constant(q.astype(np.int32), init.name),
                  self.constant(scale, init.name + "_scale"),
                  self.constant(np.zeros(scale.shape, np.int32), init.name + "_zero")]
        attrs = {"axis": 0} if scale.size > 1 else {}
        self.nodes.append(helper.make_node("DequantizeLinear", inputs, [out], **attrs))
        return out

    def float_constant(self, init):
        array = numpy_helper.to_array(init).astype(np.float32)
        if array.size == 0:
            return init.name
        scale, zero = fitted(float(array.min()), float(array.max()))
        q = self.stored(np.clip(np.round(array / scale) + zero, 0, 255))
        out = self.fresh(init.name + "_DQ")
        inputs = [self.constant(q, init.name), self.constant(np.array(scale), init.name + "_s"),
                  self.constant(self.stored(zero), init.name + "_z")]
        self.nodes.append(helper.make_node("DequantizeLinear", inputs, [out]))
        return out

    def node(self, node):
        """`node` reading quantized inputs, its float outputs quantized."""
        if node.op_type not in QUANTIZED or node.domain:
            self.nodes.append(self.reading_dequantized(node))
            return
        inputs = list(node.input)
        w_scale = None
        for k, name in enumerate(inputs):
            init = self.inits.get(name)
            floats = init is not None and init.data_type == T.FLOAT
            if k == 1 and floats and node.op_type in WEIGHTS:
                inputs[k], w_scale = self.weight(node, init)
            elif k == 2 and floats and node.op_type in ("Conv", "Gemm") and w_scale is not None:
                inputs[k] = self.bias(init, self.params.get(node.input[0], (1.0, 0))[0], w_scale)
            elif floats and node.op_type in CONSTANTS:
                inputs[k] = self.float_constant(init)
            elif name in self.ranges:
                inputs[k] = self.activation(name)
        copy = helper.make_node(node.op_type, inputs, list(node.output), name=node.name)
        copy.attribute.extend(node.attribute)
        self.nodes.append(copy)
        params = self.params.get(node.input[0]) if node.op_type in MOVES else None
        for out in node.output:
            if out in self.ranges and node.op_type in ("AveragePool", "GlobalAveragePool"):
                # A mean of integers on its input's grid lands on exact ties, which ONNX Runtime's
                # QLinearAveragePool rounds otherwise than QuantizeLinear: another grid.
                lo, hi = self.ranges[out]
                params = fitted(lo, hi * 1.0173)
            if out in self.ranges and node.op_type == "Softmax":
                # ONNX Runtime's quantizer fixes a Softmax output's range to [0, 1].
                params = (np.float32(1 / 255), 0)
            if out in self.ranges:
                self.activation(out, params)

    def reading_dequantized(self, node):
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        for k, name in enumerate(copy.input):
            copy.input[k] = self.dequantized.get(name, name)
        return copy

    def rename(self, old, new):
        """Tensor `old` is `new` in every node from now on."""
        for n in self.nodes:
            for names in (n.input, n.output):
                for k, name in enumerate(names):
                    if name == old:
                        names[k] = new

    def quantized(self):
        graph = self.model.graph
        for name in [i.name for i in graph.input]:
            if name in self.ranges and any(
                    name in n.input and n.op_type in QUANTIZED for n in graph.node):
                self.activation(name)
        for node in graph.node:
            self.node(node)
        # A graph output is its pair's DequantizeLinear, under the output's name.
        outputs = []
        for out in graph.output:
            if out.name not in self.dequantized:
                outputs.append(out)
                continue
            self.rename(out.name, self.fresh(out.name))
            self.rename(self.dequantized[out.name], out.name)
            outputs.append(out)
        used = {i for n in self.nodes for i in n.input}
        inits = [i for i in graph.initializer if i.name in used] + self.new_inits
        model = helper.make_model(
            helper.make_graph(self.nodes, "qdq", list(graph.input), outputs, inits),
            opset_imports=list(self.model.opset_import))
        model.ir_version = 8
        return model


# The QOperator form of an op between DequantizeLinears and a QuantizeLinear (--qoperator): the
# operator, its domain, and whether its output's scale and zero point come first (QLinearConcat).
QOPERATORS = {"Conv": ("QLinearConv", "", False), "MatMul": ("QLinearMatMul", "", False),
              "Add": ("QLinearAdd", MS, False), "Mul": ("QLinearMul", MS, False),
              "Sigmoid": ("QLinearSigmoid", MS, False),
              "LeakyRelu": ("QLinearLeakyRelu", MS, False),
              "GlobalAveragePool": ("QLinearGlobalAveragePool", MS, False),
              "AveragePool": ("QLinearAveragePool", MS, False),
              "Concat": ("QLinearConcat", MS, True), "Gemm": ("QGemm", MS, False)}


def to_qoperator(model, rng, share):
    """`model` with about `share` of the ops QOPERATORS names, where they read DequantizeLinears
    and only a QuantizeLinear reads them, in their QOperator form (ONNX's QLinearConv and
    QLinearMatMul, ONNX Runtime's com.microsoft ops), as its quantizer's QOperator format and
    its saved optimized models write them; the rest stays in the QDQ form."""
    graph = model.graph
    nodes = list(graph.node)
    made = {o: n for n in nodes for o in n.output}
    readers = {}
    for n in nodes:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outputs = {o.name for o in graph.output}
    inits = {i.name: i for i in graph.initializer}
    rewritten, dropped = {}, set()
    for n in nodes:
        if n.op_type not in QOPERATORS or n.domain or rng.random() >= share:
            continue
        out = n.output[0]
        q = readers.get(out, [None])[0]
        if (len(n.output) != 1 or len(readers.get(out, [])) != 1 or out in outputs or
                q.op_type != "QuantizeLinear"):
            continue
        dqs = [made.get(i) for i in n.input]
        if any(d is None or d.op_type != "DequantizeLinear" for d in dqs):
            continue
        weight = n.op_type in ("Conv", "MatMul", "Gemm")
        if n.op_type == "Gemm" and any(a.name in ("alpha", "beta") and a.f != 1.0
                                       for a in n.attribute):
            continue  # (QGemm's C is at alpha * a_scale * b_scale; it has no beta)
        per_tensor = [numpy_helper.to_array(inits[d.input[1]]).size == 1 if d.input[1] in inits
                      else False for d in dqs]
        if not all(per_tensor[:1 if weight else len(dqs)]):
            continue
        if weight and len(dqs) > 2 and (dqs[2].input[0] not in inits or
                                         inits[dqs[2].input[0]].data_type != T.INT32):
            continue  # (a product's bias: int32 at the input's and weight's scales)
        op, domain, output_first = QOPERATORS[n.op_type]
        quantized = [name for d in dqs[:2 if weight else len(dqs)] for name in d.input[:3]]
        if n.op_type == "MatMul" and not per_tensor[1]:
            # Per column in ONNX's N-D form [1, N], the one ONNX Runtime's QLinearMatMul takes.
            if len(inits[dqs[1].input[0]].dims) != 2:
                continue
            for k in (4, 5):
                column = numpy_helper.to_array(inits[quantized[k]])
                row = numpy_helper.from_array(column.reshape(1, -1), quantized[k] + "_row")
                graph.initializer.append(row)
                inits[row.name] = row
                quantized[k] = row.name
        if output_first:
            inputs = list(q.input[1:3]) + quantized
        elif n.op_type == "Gemm":  # C (int32) before the output's parameters
            inputs = quantized + ([d.input[0] for d in dqs[2:]] or [""]) + list(q.input[1:3])
            node_attrs = [a for a in n.attribute if a.name in ("alpha", "transA", "transB")]
        else:
            inputs = quantized + list(q.input[1:3]) + [d.input[0] for d in dqs[2:] if weight]
        node = helper.make_node(op, inputs, list(q.output), name=n.name, domain=domain)
        node.attribute.extend(node_attrs if n.op_type == "Gemm" else n.attribute)
        if domain == MS and n.op_type in ("GlobalAveragePool", "AveragePool"):
            node.attribute.append(helper.make_attribute("channels_last", 0))
        rewritten[id(n)] = node
        dropped.add(id(q))
    kept = [rewritten.get(id(n), n) for n in nodes if id(n) not in dropped]
    read = {i for n in kept for i in n.input} | outputs
    kept = [n for n in kept if n.op_type != "DequantizeLinear" or n.output[0] in read]
    del graph.node[:]
    graph.node.extend(kept)
    if any(n.domain == MS for n in kept):
        model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


def output_scales(model):
    """Scale of each graph output made by a DequantizeLinear (None for the others)."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    made = {o: n for n in model.graph.node for o in n.output}
    scales = []
    for out in model.graph.output:
        node = made.get(out.name)
        ok = node is not None and node.op_type == "DequantizeLinear"
        scales.append(float(inits[node.input[1]]) if ok else None)
    return scales


def make_cases(args):
    """Writes the QDQ cases of args.seed (args.qoperator of their ops in the QOperator form) under
    args.out, all calibrated by one ONNX Runtime process; their folders, less those ONNX Runtime
    could not calibrate."""
    cases = []
    for index in range(args.first, args.first + args.count):
        model, inputs = gen_graphs.generate(args.seed, index)
        rng = np.random.default_rng([args.seed, index, 1])
        # Off gen_graphs' exact values (multiples of 1/2), whose means and sums on a quantization
        # grid land on exact rounding ties.
        inputs = [(name, (a + rng.uniform(-0.01, 0.01, a.shape)).astype(np.float32)
                   if a.dtype == np.float32 else a) for name, a in inputs]
        case_dir = os.path.join(args.out, f"case_{index:05d}")
        floats = float_values(model)
        probe = write_probe(model, inputs, case_dir + "-calibration", floats)
        cases.append((case_dir, model, inputs, rng, floats, probe))
    calibrated = ms_quantized_ops.ort_reference([c[0] + "-calibration" for c in cases],
                                                "qdq_graphs calibration", args.reference)
    dirs = []
    for (case_dir, model, inputs, rng, floats, probe), error in zip(cases, calibrated):
        if error is not None:
            print(f"{os.path.basename(case_dir)}: ort-refused (calibration)")
            continue
        ranges = calibration_ranges(probe, inputs, case_dir + "-calibration", floats)
        quantized = Quantizer(model, ranges, rng).quantized()
        if args.qoperator > 0:
            quantized = to_qoperator(quantized, rng, args.qoperator)
        gen_graphs.write_case(case_dir, quantized, inputs)
        dirs.append(case_dir)
    return dirs


def steps_apart(case_dir, got_dir="hsched"):
    """The largest difference of the outputs in case_dir/got_dir (hsched's) from ONNX Runtime's,
    in steps of each output's scale (a float output: in 1e-3 of its largest value), and a line on
    each output."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    worst, lines = 0.0, []
    for k, scale in enumerate(output_scales(model)):
        want = read_tensor(os.path.join(case_dir, "test_data_set_0", f"output_{k}.pb"))
        got = read_tensor(os.path.join(case_dir, got_dir, f"output_{k}.pb"))
        if got.shape != want.shape or got.dtype != want.dtype:
            worst = float("inf")
            lines.append(f"output {k}: {got.dtype}{got.shape} against {want.dtype}{want.shape}")
            continue
        diff = np.atleast_1d(np.abs(got.astype(np.float64) - want.astype(np.float64)))
        if want.dtype.kind == "f":
            diff[np.atleast_1d(np.isnan(got) & np.isnan(want))] = 0
        unit = scale if scale else max(1e-4, 1e-3 * float(np.abs(want).max(initial=0)))
        steps = float(diff.max(initial=0)) / unit
        worst = max(worst, steps if not np.isnan(steps) else float("inf"))
        lines.append(f"output {k}: {steps:.2f}{' steps' if scale else ' (float, 1e-3)'}, "
                     f"{int((diff > 0).sum())} of {diff.size} differ")
    return worst, lines


def main():
    parser = ms_quantized_ops.arguments(__doc__.splitlines()[0], "qdq-graphs")
    parser.set_defaults(ort_level="extended")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--menu", choices=["all", "transformer"], default="all")
    parser.add_argument("--split-every", type=int, default=0,
                        help="as hsched run's: partitions of K nodes, devices in turn")
    parser.add_argument("--qoperator", type=float, default=0.0,
                        help="share of the ops QOPERATORS names in their QOperator form")
    parser.add_argument("--policy", help="run under this policy (a name or file; the simulated "
                        "NPU loaded) instead of --devices and --precision")
    parser.set_defaults(steps=2)
    args = parser.parse_args()
    use_simulated_npu("npu" if args.policy else args.devices, args.hsched)
    gen_graphs.MENU = TRANSFORMER_MENU if args.menu == "transformer" else MENU
    shutil.rmtree(args.out, ignore_errors=True)
    dirs = make_cases(args)
    extra = ["--split-every", str(args.split_every)] if args.split_every else []
    failed = 0
    references = ms_quantized_ops.ort_reference(dirs, "qdq_graphs", args.reference,
                                                args.ort_level)
    for case_dir, error in zip(dirs, references):
        name = os.path.basename(case_dir)
        if error is not None:
            print(f"{name}: ort-refused ({error[:120]})")
            continue
        run = ms_quantized_ops.run_hsched(args, case_dir, extra)
        if run.returncode != 0:
            failed += 1
            print(f"{name}: FAILED: hsched exit {run.returncode}: {run.stderr.strip()[:200]}")
            continue
        worst, lines = steps_apart(case_dir)
        ok = worst <= args.steps + 1e-3  # (a step computed in floats)
        failed += not ok
        print(f"{name}: {'ok' if ok else 'FAILED'} ({ms_quantized_ops.ran_on(run)}): "
              f"{'; '.join(lines)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

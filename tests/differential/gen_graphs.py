#!/usr/bin/python3
"""Random small ONNX models with seeded inputs, for differential testing against ONNX Runtime.

    /usr/bin/python3 tests/differential/gen_graphs.py --count N [--seed S] --out DIR [--check]

Case I of seed S is DIR/case_IIIII/model.onnx with its inputs in test_data_set_0/input_K.pb (the
layout of ONNX's node tests). A case depends only on (S, I): the same pair gives the same bytes.
Each model is opset 13 or 17 and chains 1 to 8 blocks (now and then up to 16) drawn from
graph_builders.py and nn_builders.py (elementwise ops with broadcasts, layout ops, reductions,
MatMul/Gemm, Conv blocks, squeeze-and-excitation and fire modules, pools, normalizations,
attention, Pad, Resize, comparisons, Cast).
Every tensor holds at most MAX_ELEMENTS elements; a few have a dim of 0.

Float inputs are exactly representable in fp16 (so an fp16 device sees the same inputs); values
marked exact (small multiples of 1/8) are the only ones fed to Floor, comparisons and casts to
integers, where a rounding difference of one ulp would flip a result.

--check runs onnx.checker and ONNX's shape inference on every model and fails when an inferred
output shape differs from the one the generator tracked.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_builders as gb  # noqa: E402  (the op menu; it needs GraphBuilder's interface only)
import nn_builders as nb  # noqa: E402

MAX_ELEMENTS = 20000
OPSETS = (13, 17)
NP_TYPE = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64,
           TensorProto.INT32: np.int32, TensorProto.BOOL: np.bool_,
           TensorProto.FLOAT16: np.float16}


# The op menu: block and weight (how often it is drawn).
MENU = [(gb.unary, 6), (gb.safe_unary, 2), (gb.rounding, 2), (gb.gelu, 2), (gb.clip, 1),
        (gb.binary, 8), (gb.variadic, 1), (gb.reshape, 3), (gb.transpose, 3), (gb.flatten, 1),
        (gb.squeeze_unsqueeze, 2), (gb.concat, 2), (gb.split, 2), (gb.slice_, 3), (gb.gather, 2),
        (gb.expand_tile, 1), (nb.reduce, 3), (nb.arg_reduce, 2), (nb.softmax, 2),
        (nb.matmul, 3), (nb.gemm, 2), (nb.conv_block, 3), (nb.pool, 2), (nb.layer_norm, 2),
        (nb.instance_norm, 1), (nb.group_norm, 1), (nb.attention, 1), (nb.vit_attention, 1),
        (nb.se_block, 1), (nb.fire, 1), (nb.shuffle_unit, 1), (nb.pad, 2),
        (nb.resize, 2), (nb.where, 3), (nb.cast, 3), (nb.space_depth, 1), (gb.shape_ops, 2)]


def add_block(g):
    weights = np.array([w for _, w in MENU], dtype=np.float64)
    block = MENU[int(g.rng.choice(len(MENU), p=weights / weights.sum()))][0]
    return block(g)


class Value:
    """A tensor of the graph: its shape as the generator tracks it, dtype, a rough bound on its
    magnitude (`scale`, to keep Exp and fp16 in range) and whether it is `exact` (a small
    multiple of 1/8, equal in every implementation)."""

    def __init__(self, name, shape, dtype, scale, exact, produced):
        self.name, self.shape, self.dtype = name, tuple(int(d) for d in shape), dtype
        self.scale, self.exact, self.produced = float(scale), exact, produced

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def rank(self):
        return len(self.shape)


class GraphBuilder:
    """Nodes, initializers and inputs of one model under construction."""

    def __init__(self, rng, opset):
        self.rng, self.opset = rng, opset
        self.nodes, self.initializers, self.inputs = [], [], []  # inputs: (name, array)
        self.values = {}
        self.consumed = set()
        self.input_names = set()
        self.counter = 0

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def chance(self, p):
        return self.rng.random() < p

    def choice(self, items):
        return items[int(self.rng.integers(len(items)))]

    def randint(self, low, high):
        """An int in [low, high], both included."""
        return int(self.rng.integers(low, high + 1))

    # Tensors -------------------------------------------------------------------------------

    def random_floats(self, shape, low=-1.0, high=1.0):
        a = self.rng.uniform(low, high, size=shape)
        return a.astype(np.float16).astype(np.float32)

    def discrete_floats(self, shape, low=-3, high=3):
        return (self.rng.integers(low * 2, high * 2 + 1, size=shape) / 2.0).astype(np.float32)

    def input(self, shape, exact=None, low=-1.0, high=1.0):
        """A new float graph input; exact inputs hold multiples of 1/2 in [-3, 3]."""
        exact = self.chance(0.35) if exact is None else exact
        array = (self.discrete_floats(shape) if exact else
                 self.random_floats(shape, low, high))
        return self.input_array(array, exact=exact, scale=3.0 if exact else max(abs(low), high))

    def input_array(self, array, exact=True, scale=1.0):
        name = self.fresh("in")
        self.inputs.append((name, array))
        self.input_names.add(name)
        dtype = tensor_type(array.dtype)
        self.values[name] = Value(name, array.shape, dtype, scale, exact, produced=False)
        return self.values[name]

    def const(self, array, exact=None, scale=None):
        array = np.asarray(array)
        name = self.fresh("c")
        self.initializers.append(numpy_helper.from_array(array, name))
        dtype = tensor_type(array.dtype)
        if scale is None:
            scale = float(np.abs(array).max()) if array.size and dtype != TensorProto.BOOL else 1.0
        self.values[name] = Value(name, array.shape, dtype, scale, bool(exact), produced=False)
        return self.values[name]

    def ints(self, values):
        return self.const(np.array(values, dtype=np.int64), exact=True)

    def floats(self, values):
        return self.const(np.array(values, dtype=np.float32))

    def weight(self, shape, fan_in):
        bound = 1.0 / np.sqrt(max(1, fan_in))
        return self.const(self.random_floats(shape, -bound, bound) if bound > 0.05 else
                          self.rng.uniform(-bound, bound, size=shape).astype(np.float32),
                          scale=bound)

    # Nodes ---------------------------------------------------------------------------------

    def op(self, op_type, inputs, shape, dtype=TensorProto.FLOAT, scale=1.0, exact=False,
           **attrs):
        """Appends one node with one output; returns the output's Value."""
        return self.op_multi(op_type, inputs, [shape], dtype, scale, exact, **attrs)[0]

    def op_multi(self, op_type, inputs, shapes, dtype=TensorProto.FLOAT, scale=1.0, exact=False,
                 **attrs):
        names = [v if isinstance(v, str) else v.name for v in inputs]
        for shape in shapes:
            if int(np.prod(shape, dtype=np.int64)) > MAX_ELEMENTS:
                raise TooLarge()
        outputs = [self.fresh(op_type.lower()[:6] + "_") for _ in shapes]
        self.nodes.append(helper.make_node(op_type, names, outputs, name=self.fresh("n_"),
                                           **attrs))
        self.consumed.update(n for n in names if n)
        result = []
        for name, shape in zip(outputs, shapes):
            self.values[name] = Value(name, shape, dtype, scale, exact, produced=True)
            result.append(self.values[name])
        return result

    def pick(self, accept=lambda v: True, dtypes=(TensorProto.FLOAT,)):
        """A value of `dtypes` produced so far (recent ones likelier) that `accept` takes, else
        None."""
        candidates = [v for v in self.values.values()
                      if v.dtype in dtypes and (v.produced or v.name in self.input_names)
                      and accept(v)]
        if not candidates:
            return None
        weights = np.arange(1, len(candidates) + 1, dtype=np.float64) ** 2
        return candidates[int(self.rng.choice(len(candidates), p=weights / weights.sum()))]

    def source(self, accept=lambda v: True, make_shape=None, exact=None,
               dtypes=(TensorProto.FLOAT,), allow_empty=False):
        """An existing value of `dtypes` that `accept` takes, or a new float input of a random
        shape; one with no elements only if `allow_empty`."""
        wanted = accept
        accept = lambda v: (allow_empty or v.size > 0) and wanted(v)  # noqa: E731
        if not self.chance(0.15):
            v = self.pick(accept, dtypes)
            if v is not None:
                return v
        for _ in range(20):
            shape = make_shape() if make_shape else self.random_shape()
            v = Value("", shape, TensorProto.FLOAT, 1.0, False, False)
            if accept(v):
                return self.input(shape, exact=exact)
        return None

    def random_shape(self, min_rank=1, max_rank=4, max_elements=2048):
        """Mostly small dims; now and then a SIMD tail (9, 17, 31, 33), rank 5 or a dim of 0."""
        while True:
            rank = self.randint(min_rank, max_rank + (1 if self.chance(0.1) else 0))
            shape = [self.choice([1, 2, 3, 4, 5, 6, 7, 8, 3, 4, 16, 9, 17, 31, 33])
                     for _ in range(rank)]
            if self.chance(0.05):
                shape[self.randint(0, rank - 1)] = 0
            if int(np.prod(shape)) <= max_elements:
                return tuple(shape)

    # The model -----------------------------------------------------------------------------

    def model(self):
        produced = [v for v in self.values.values() if v.produced]
        outputs = [v for v in produced if v.name not in self.consumed]
        if produced[-1] not in outputs:
            outputs.append(produced[-1])
        if self.chance(0.2):  # an intermediate that is also consumed: a value read twice
            inner = [v for v in produced if v not in outputs]
            if inner:
                outputs.append(self.choice(inner))
        graph = helper.make_graph(
            self.nodes, "differential",
            [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape)
             for n, a in self.inputs],
            [helper.make_tensor_value_info(v.name, v.dtype, v.shape) for v in outputs],
            self.initializers)
        model = helper.make_model(graph, producer_name="hsched-differential",
                                  opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        return model


def tensor_type(dtype):
    return {v: k for k, v in NP_TYPE.items()}[np.dtype(dtype).type]


class TooLarge(Exception):
    """A block would make a tensor over MAX_ELEMENTS; the block is dropped."""


def generate(seed, index):
    """(model, [(input name, array)]) of case `index` of `seed`."""
    rng = np.random.default_rng([seed, index])
    opset = OPSETS[int(rng.integers(len(OPSETS)))]
    for _ in range(100):
        g = GraphBuilder(rng, opset)
        blocks = int(rng.integers(1, 9 if rng.random() < 0.8 else 17))
        added = 0
        for _ in range(blocks * 4):
            if added == blocks:
                break
            state = (len(g.nodes), len(g.initializers), len(g.inputs), dict(g.values),
                     set(g.consumed))
            try:
                if add_block(g):
                    added += 1
                    continue
            except (TooLarge, gb.BlockDropped):
                pass
            # A dropped block leaves nothing behind.
            del g.nodes[state[0]:], g.initializers[state[1]:], g.inputs[state[2]:]
            g.values, g.consumed = state[3], state[4]
        if g.nodes:
            return g.model(), list(g.inputs)
    raise RuntimeError(f"seed {seed} case {index}: no graph")


def write_case(case_dir, model, inputs):
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for k, (name, array) in enumerate(inputs):
        with open(os.path.join(data_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())


def check_model(model):
    """None when the checker passes and inferred output shapes match the tracked ones."""
    try:
        onnx.checker.check_model(model)
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as e:  # noqa: BLE001  (the checker raises several kinds)
        return str(e).splitlines()[0]
    known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in model.graph.output:
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in out.type.tensor_type.shape.dim]
        got = known.get(out.name)
        if got is None or not got.type.tensor_type.HasField("shape"):
            continue
        got_dims = [d.dim_value if d.HasField("dim_value") else None
                    for d in got.type.tensor_type.shape.dim]
        if None not in got_dims and got_dims != dims:
            return f"output {out.name}: tracked {dims}, inferred {got_dims}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="index of the first case")
    parser.add_argument("--out", required=True)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    failures = 0
    for index in range(args.first, args.first + args.count):
        model, inputs = generate(args.seed, index)
        if args.check:
            problem = check_model(model)
            if problem:
                failures += 1
                print(f"case_{index:05d}: {problem}")
        write_case(os.path.join(args.out, f"case_{index:05d}"), model, inputs)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

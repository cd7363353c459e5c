#!/usr/bin/python3
"""Writes the seed corpus of run_fuzzer: small ONNX models that import, plan and run (seed-*), and
reproducers of crash classes found in the run path (repro-*).

Run with Debian's python3 (python3-onnx, python3-numpy): /usr/bin/python3 tests/fuzz/make_run_corpus.py
The output is deterministic and checked in (tests/fuzz/run_corpus/, a few KB in all); rerun it
only to change the seeds. A reproducer that still crashes is written to tests/fuzz/pending/
instead (PENDING below; pending/README.md says what each one does): CI does not replay that
folder. When its crash is fixed, remove its name from PENDING, rerun, and commit the move.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "run_corpus")
PENDING_DIR = os.path.join(HERE, "pending")

# Reproducers that crash today (see pending/README.md); the rest go to run_corpus/.
PENDING = {
}

F = TensorProto.FLOAT


def weights(name, shape, seed):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(graph, opset=13, functions=None):
    opsets = [helper.make_opsetid("", opset)]
    if functions:
        opsets.append(helper.make_opsetid("local", 1))
    m = helper.make_model(graph, opset_imports=opsets, producer_name="hsched-run-fuzz-seed",
                          functions=functions or [])
    m.ir_version = 8
    return m


def graph(nodes, name, inputs, outputs, inits=()):
    return helper.make_graph(nodes, name, inputs, outputs, list(inits))


# ------------------------------------------------------------------------------------------------
# Valid seeds: each imports, plans and runs.

def conv_relu():
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    ]
    return model(graph(nodes, "conv_relu", [vi("x", F, [1, 3, 8, 8])], [vi("y", F, [1, 4, 4, 4])],
                       [weights("w", [4, 3, 3, 3], 1), weights("b", [4], 2)]))


def gemm_softmax():
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"], name="fc", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax", axis=1),
    ]
    return model(graph(nodes, "gemm_softmax", [vi("x", F, [2, 16])], [vi("y", F, [2, 8])],
                       [weights("w", [8, 16], 3), weights("b", [8], 4)]))


def matmul_add():
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
        helper.make_node("Add", ["m", "b"], ["y"], name="add"),
    ]
    return model(graph(nodes, "matmul_add", [vi("x", F, ["N", 4, 8])], [vi("y", F, ["N", 4, 6])],
                       [weights("w", [8, 6], 5), weights("b", [6], 6)]))


def split_concat():
    nodes = [
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="split", axis=1),
        helper.make_node("Sigmoid", ["a"], ["sa"], name="sigmoid"),
        helper.make_node("Tanh", ["b"], ["tb"], name="tanh"),
        helper.make_node("Concat", ["tb", "sa"], ["y"], name="concat", axis=1),
    ]
    return model(graph(nodes, "split_concat", [vi("x", F, [1, 6, 4])], [vi("y", F, [1, 6, 4])],
                       [i64("sizes", [2, 4])]))


def qdq_conv():
    """QuantizeLinear -> DequantizeLinear on the activation, int8 weights dequantized, Conv."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quant_x"),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dequant_x"),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], name="dequant_w"),
        helper.make_node("Conv", ["xd", "wd"], ["y"], name="conv", kernel_shape=[1, 1]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.02, dtype=np.float32), "xs"),
        numpy_helper.from_array(np.array(128, dtype=np.uint8), "xz"),
        numpy_helper.from_array(
            np.arange(-6, 6, dtype=np.int8).reshape([4, 3, 1, 1]), "wq"),
        numpy_helper.from_array(np.array(0.05, dtype=np.float32), "ws"),
        numpy_helper.from_array(np.array(0, dtype=np.int8), "wz"),
    ]
    return model(graph(nodes, "qdq_conv", [vi("x", F, [1, 3, 4, 4])], [vi("y", F, [1, 4, 4, 4])],
                       inits))


def qdq_gelu():
    """A GELU as ONNX Runtime's quantizer writes it: each op between its own Q/DQ pair, x read
    twice, the 1 and the 0.5 through their own Q/DQ (one table lookup on the CPU)."""
    def requantized(name, scale):
        return [helper.make_node("QuantizeLinear", [name, scale, "z"], [name + "_q"]),
                helper.make_node("DequantizeLinear", [name + "_q", scale, "z"], [name + "_d"])]
    nodes = (requantized("x", "s") + requantized("one", "unit") + requantized("half", "unit") + [
        helper.make_node("Div", ["x_d", "sqrt2"], ["scaled"]),
        helper.make_node("Erf", ["scaled"], ["erf"])] + requantized("erf", "s") + [
        helper.make_node("Add", ["erf_d", "one_d"], ["plus"])] + requantized("plus", "unit") + [
        helper.make_node("Mul", ["x_d", "plus_d"], ["times_x"])] + requantized("times_x", "s") + [
        helper.make_node("Mul", ["times_x_d", "half_d"], ["gelu"])] + requantized("gelu", "s") + [
        helper.make_node("Identity", ["gelu_d"], ["y"])])
    inits = [numpy_helper.from_array(np.array(v, dtype=np.float32), n) for n, v in
             [("s", 0.05), ("unit", 1 / 255), ("sqrt2", 1.4142135), ("one", 1.0), ("half", 0.5)]]
    inits.append(numpy_helper.from_array(np.array(0, dtype=np.uint8), "z"))
    return model(graph(nodes, "qdq_gelu", [vi("x", F, [2, 8])], [vi("y", F, [2, 8])], inits))


def ms_qoperator():
    """ONNX Runtime's com.microsoft quantized ops: QLinearAdd, QLinearSigmoid, QLinearConcat, QGemm."""
    ms = "com.microsoft"
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="quant_x"),
        helper.make_node("QLinearAdd", ["xq", "s", "z", "xq", "s", "z", "s2", "z"], ["a"],
                         name="qadd", domain=ms),
        helper.make_node("QLinearSigmoid", ["a", "s2", "z", "s", "z"], ["b"], name="qsigmoid",
                         domain=ms),
        helper.make_node("QLinearConcat", ["s", "z", "a", "s2", "z", "b", "s", "z"], ["c"],
                         name="qconcat", axis=1, domain=ms),
        helper.make_node("QGemm", ["c", "s", "z", "wq", "ws", "wz", "bias", "s", "z"], ["g"],
                         name="qgemm", transB=1, domain=ms),
        helper.make_node("DequantizeLinear", ["g", "s", "z"], ["y"], name="dequant_y"),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.02, dtype=np.float32), "s"),
        numpy_helper.from_array(np.array(0.04, dtype=np.float32), "s2"),
        numpy_helper.from_array(np.array(128, dtype=np.uint8), "z"),
        numpy_helper.from_array(np.arange(-12, 12, dtype=np.int8).reshape([3, 8]), "wq"),
        numpy_helper.from_array(np.array([0.01, 0.02, 0.03], dtype=np.float32), "ws"),
        numpy_helper.from_array(np.zeros([3], dtype=np.int8), "wz"),
        numpy_helper.from_array(np.array([100, -50, 7], dtype=np.int32), "bias"),
    ]
    m = model(graph(nodes, "ms_qoperator", [vi("x", F, [2, 4])], [vi("y", F, [2, 3])], inits))
    m.opset_import.append(helper.make_opsetid(ms, 1))
    return m


def ms_fused():
    """ONNX Runtime's com.microsoft float fusions: FusedConv, Gelu, SkipLayerNormalization,
    FusedMatMul (as its optimizer saves a model)."""
    ms = "com.microsoft"
    nodes = [
        helper.make_node("FusedConv", ["x", "w", "b"], ["c"], name="fused_conv", domain=ms,
                         activation="LeakyRelu", activation_params=[0.1], kernel_shape=[1, 1]),
        helper.make_node("Reshape", ["c", "shape"], ["r"], name="reshape"),
        helper.make_node("Gelu", ["r"], ["g"], name="gelu", domain=ms),
        helper.make_node("SkipLayerNormalization", ["g", "r", "gamma"], ["n"], name="skip_norm",
                         domain=ms, epsilon=1e-5),
        helper.make_node("FusedMatMul", ["n", "m"], ["y"], name="fused_matmul", domain=ms,
                         alpha=0.5),
    ]
    inits = [
        numpy_helper.from_array(np.linspace(-1, 1, 8, dtype=np.float32).reshape([4, 2, 1, 1]),
                                "w"),
        numpy_helper.from_array(np.array([0.1, -0.1, 0.2, 0], dtype=np.float32), "b"),
        numpy_helper.from_array(np.array([1, 4, 4], dtype=np.int64), "shape"),
        numpy_helper.from_array(np.ones([4], dtype=np.float32), "gamma"),
        numpy_helper.from_array(np.eye(4, 3, dtype=np.float32), "m"),
    ]
    m = model(graph(nodes, "ms_fused", [vi("x", F, [1, 2, 2, 2])], [vi("y", F, [1, 4, 3])],
                    inits), opset=17)
    m.opset_import.append(helper.make_opsetid(ms, 1))
    return m


def local_function():
    """A model-local function (domain "local") called twice."""
    fn = helper.make_function(
        "local", "AddRelu", ["a", "b"], ["out"],
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["out"])],
        [helper.make_opsetid("", 13)])
    nodes = [
        helper.make_node("AddRelu", ["x", "bias"], ["h"], name="call1", domain="local"),
        helper.make_node("AddRelu", ["h", "x"], ["y"], name="call2", domain="local"),
    ]
    return model(graph(nodes, "local_function", [vi("x", F, [2, 3])], [vi("y", F, [2, 3])],
                       [weights("bias", [2, 3], 7)]), functions=[fn])


def if_branches():
    then_g = graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")], "then", [],
                   [vi("t", F, [2, 4])])
    else_g = graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")], "else", [],
                   [vi("e", F, [2, 4])])
    nodes = [
        helper.make_node("If", ["cond"], ["r"], name="if", then_branch=then_g, else_branch=else_g),
        helper.make_node("Mul", ["r", "x"], ["y"], name="mul"),
    ]
    # hsched runs an If whose condition folds at load time (it inlines the branch taken).
    cond = numpy_helper.from_array(np.array(True), "cond")
    return model(graph(nodes, "if_branches", [vi("x", F, [2, 4])], [vi("y", F, [2, 4])], [cond]))


def if_runtime_condition():
    # The condition depends on x's values: both branches run and Where selects.
    then_g = graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")], "then", [],
                   [vi("t", F, [2, 4])])
    else_g = graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")], "else", [],
                   [vi("e", F, [2, 4])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["total"], name="total", keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["cond"], name="positive"),
        helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
    ]
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    return model(graph(nodes, "if_runtime", [vi("x", F, [2, 4])], [vi("y", F, [2, 4])], [zero]))


def loop_constant_trips():
    # Unrolled at import: 3 trips, a carried sum and a stacked scan output.
    body = graph([
        helper.make_node("Identity", ["c"], ["c_out"], name="keep_going"),
        helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="add"),
        helper.make_node("Cast", ["i"], ["i_f"], name="cast", to=F),
        helper.make_node("Mul", ["acc_out", "i_f"], ["row"], name="scale"),
    ], "body", [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []),
                vi("acc_in", F, [2, 4])],
        [vi("c_out", TensorProto.BOOL, []), vi("acc_out", F, [2, 4]), vi("row", F, [2, 4])])
    nodes = [helper.make_node("Loop", ["trips", "", "x"], ["acc", "rows"], name="loop", body=body)]
    return model(graph(nodes, "loop", [vi("x", F, [2, 4])],
                       [vi("acc", F, [2, 4]), vi("rows", F, [3, 2, 4])], [i64("trips", 3)]))


def scan_reversed():
    # Unrolled at import: a running sum over the 4 columns of x, read from the last, the doubled
    # sums stacked along axis 1 in reverse.
    body = graph([
        helper.make_node("Add", ["s_in", "e"], ["s_out"], name="add"),
        helper.make_node("Add", ["s_out", "s_out"], ["doubled"], name="double"),
    ], "body", [vi("s_in", F, [2]), vi("e", F, [2])], [vi("s_out", F, [2]), vi("doubled", F, [2])])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s", "sums"], name="scan", body=body,
                              num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                              scan_output_axes=[1], scan_output_directions=[1])]
    return model(graph(nodes, "scan", [vi("s0", F, [2]), vi("x", F, [2, 4])],
                       [vi("s", F, [2]), vi("sums", F, [2, 4])]))


def opset18_forms():
    # Read through the opset-17 forms: ReduceMean's axes input, Split's num_outputs.
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes"], ["m"], name="mean", keepdims=1),
        helper.make_node("Sub", ["x", "m"], ["d"], name="center"),
        helper.make_node("Split", ["d"], ["a", "b"], name="split", axis=1, num_outputs=2),
        helper.make_node("Add", ["a", "b"], ["y"], name="add"),
    ]
    return model(graph(nodes, "opset18", [vi("x", F, [2, 4])], [vi("y", F, [2, 2])],
                       [i64("axes", [1])]), opset=18)


def opset20_forms():
    # Read through the opset-17 forms: Gelu as its formula, AveragePool's dilations of 1.
    nodes = [
        helper.make_node("Gelu", ["x"], ["g"], name="gelu"),
        helper.make_node("AveragePool", ["g"], ["p"], name="pool", kernel_shape=[2, 2],
                         dilations=[1, 1]),
        helper.make_node("Gelu", ["p"], ["y"], name="gelu_tanh", approximate="tanh"),
    ]
    return model(graph(nodes, "opset20", [vi("x", F, [1, 2, 4, 4])], [vi("y", F, [1, 2, 3, 3])]),
                 opset=20)


def qdq_norms():
    """A QDQ model's normalizations as ONNX Runtime's quantizer writes them (one kernel each on the
    CPU's 8-bit data): ConvNeXt's Transpose -> LayerNormalization -> Transpose and PyTorch's
    GroupNorm (Reshape -> InstanceNormalization -> Reshape -> Mul -> Add), each op between its
    own Q/DQ pair."""
    def requantized(name, scale):
        return [helper.make_node("QuantizeLinear", [name, scale, "z"], [name + "_q"]),
                helper.make_node("DequantizeLinear", [name + "_q", scale, "z"], [name + "_d"])]
    nodes = (requantized("x", "s") + [
        helper.make_node("Transpose", ["x_d"], ["t"], perm=[0, 2, 3, 1])] + requantized("t", "s") + [
        helper.make_node("LayerNormalization", ["t_d", "ln_s", "ln_b"], ["n"], axis=-1)] +
        requantized("n", "s2") + [
        helper.make_node("Transpose", ["n_d"], ["u"], perm=[0, 3, 1, 2])] + requantized("u", "s2") + [
        helper.make_node("Reshape", ["u_d", "grouped"], ["g"])] + requantized("g", "s2") + [
        helper.make_node("InstanceNormalization", ["g_d", "in_s", "in_b"], ["i"])] +
        requantized("i", "s") + [
        helper.make_node("Reshape", ["i_d", "shape"], ["r"])] + requantized("r", "s") + [
        helper.make_node("Mul", ["r_d", "gamma"], ["m"])] + requantized("m", "s2") + [
        helper.make_node("Add", ["m_d", "beta"], ["a"])] + requantized("a", "s") + [
        helper.make_node("Identity", ["a_d"], ["y"])])
    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(np.array(v, dtype=np.float32), n) for n, v in
             [("s", 0.05), ("s2", 0.03)]]
    inits += [numpy_helper.from_array(rng.uniform(0.5, 1.5, shape).astype(np.float32), n)
              for n, shape in [("ln_s", [4]), ("ln_b", [4]), ("in_s", [2]), ("in_b", [2]),
                               ("gamma", [4, 1, 1]), ("beta", [4, 1, 1])]]
    inits += [numpy_helper.from_array(np.array(128, dtype=np.uint8), "z"),
              i64("grouped", [1, 2, -1]), i64("shape", [1, 4, 3, 3])]
    return model(graph(nodes, "qdq_norms", [vi("x", F, [1, 4, 3, 3])], [vi("y", F, [1, 4, 3, 3])],
                       inits), opset=17)


def qdq_attention():
    """A QDQ attention as ONNX Runtime's quantizer writes it: the products of two activations
    (integer products on the CPU), a Softmax whose DequantizeLinear a second reader shares, an Add
    of a constant's DequantizeLinear (QLinearAdd's arithmetic) and a Mul of two activations."""
    def requantized(name, scale, zero="z"):
        return [helper.make_node("QuantizeLinear", [name, scale, zero], [name + "_q"]),
                helper.make_node("DequantizeLinear", [name + "_q", scale, zero], [name + "_d"])]
    nodes = (requantized("q", "s") + requantized("k", "s") + [
        helper.make_node("MatMul", ["q_d", "k_d"], ["scores"])] + requantized("scores", "s2") + [
        helper.make_node("Softmax", ["scores_d"], ["p"], axis=-1),
        helper.make_node("DequantizeLinear", ["bias", "s", "z"], ["bias_d"]),
        helper.make_node("Add", ["scores_d", "bias_d"], ["side"])] +
        requantized("p", "sp", "z0") + requantized("side", "s2") + [
        helper.make_node("MatMul", ["p_d", "side_d"], ["mixed"])] + requantized("mixed", "s") + [
        helper.make_node("Mul", ["mixed_d", "mixed_d"], ["sq"])] + requantized("sq", "s2") + [
        helper.make_node("Identity", ["sq_d"], ["y"])])
    inits = [numpy_helper.from_array(np.array(v, dtype=np.float32), n) for n, v in
             [("s", 0.05), ("s2", 0.09), ("sp", 1 / 255)]]
    inits += [numpy_helper.from_array(np.array(128, dtype=np.uint8), "z"),
              numpy_helper.from_array(np.array(0, dtype=np.uint8), "z0"),
              numpy_helper.from_array(np.arange(100, 104, dtype=np.uint8), "bias")]
    return model(graph(nodes, "qdq_attention", [vi("q", F, [2, 4, 8]), vi("k", F, [2, 8, 4])],
                       [vi("y", F, [2, 4, 4])], inits), opset=17)


def half_model():
    # Stored in float16 (graph/half_models.h): a float16 input, weights and output, ConstantOfShape
    # of a float16 value, and a float32 side path cast to float16 (a rounding kept).
    h = TensorProto.FLOAT16
    w = numpy_helper.from_array(
        np.random.default_rng(7).uniform(-0.5, 0.5, (2, 2, 3, 3)).astype(np.float16), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("ConstantOfShape", ["shape"], ["fill"], name="fill",
                         value=numpy_helper.from_array(np.array([0.5], dtype=np.float16))),
        helper.make_node("Add", ["c", "fill"], ["a"], name="add"),
        helper.make_node("Cast", ["side"], ["side16"], name="to_half", to=h),
        helper.make_node("Mul", ["a", "side16"], ["y"], name="mul"),
    ]
    return model(graph(nodes, "half", [vi("x", h, [1, 2, 4, 4]), vi("side", F, [1, 2, 4, 4])],
                       [vi("y", h, [1, 2, 4, 4])], [w, i64("shape", [1, 2, 4, 4])]))


def valid_seeds():
    return {
        "seed-if-runtime-condition": if_runtime_condition(),
        "seed-loop-constant-trips": loop_constant_trips(),
        "seed-scan-reversed": scan_reversed(),
        "seed-opset18-forms": opset18_forms(),
        "seed-opset20-forms": opset20_forms(),
        "seed-ms-fused": ms_fused(),
        "seed-half-model": half_model(),
        "seed-conv-relu-pool": conv_relu(),
        "seed-gemm-softmax": gemm_softmax(),
        "seed-matmul-add-dynamic-batch": matmul_add(),
        "seed-split-concat": split_concat(),
        "seed-qdq-conv": qdq_conv(),
        "seed-qdq-gelu": qdq_gelu(),
        "seed-qdq-norms": qdq_norms(),
        "seed-qdq-attention": qdq_attention(),
        "seed-ms-qoperator": ms_qoperator(),
        "seed-local-function": local_function(),
        "seed-if": if_branches(),
    }


# ------------------------------------------------------------------------------------------------
# Reproducers of crash classes: each must be refused with a Status (or run), never crash.

def split_negative_sizes():
    """Split of 8 columns into [10, -2]; the second output is not listed."""
    nodes = [helper.make_node("Split", ["x", "sizes"], ["a"], name="split", axis=1)]
    return model(graph(nodes, "split_negative", [vi("x", F, [1, 8])], [vi("a", F, [1, 10])],
                       [i64("sizes", [10, -2])]))


def gemm_inner_mismatch():
    """A [1,64] x B [16,8]: B's inner dim is not A's K."""
    nodes = [helper.make_node("Gemm", ["a", "b"], ["y"], name="gemm")]
    return model(graph(nodes, "gemm_mismatch", [vi("a", F, [1, 64])], [vi("y", F, [1, 8])],
                       [weights("b", [16, 8], 8)]))


def conv_weight_channels():
    """x has 3 channels, the weight says 5."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[3, 3])]
    return model(graph(nodes, "conv_channels", [vi("x", F, [1, 3, 8, 8])], [vi("y", F, [1, 4, 6, 6])],
                       [weights("w", [4, 5, 3, 3], 9)]))


def omitted_first_output():
    """A Split whose first output is omitted ("") while the second is used."""
    nodes = [
        helper.make_node("Split", ["x", "sizes"], ["", "b"], name="split", axis=1),
        helper.make_node("Relu", ["b"], ["y"], name="relu"),
    ]
    return model(graph(nodes, "omitted_first_output", [vi("x", F, [1, 6])], [vi("y", F, [1, 4])],
                       [i64("sizes", [2, 4])]))


def recursive_function():
    """A model-local function that calls itself."""
    fn = helper.make_function(
        "local", "Loop1", ["a"], ["out"],
        [helper.make_node("Loop1", ["a"], ["out"], domain="local")],
        [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)])
    nodes = [helper.make_node("Loop1", ["x"], ["y"], name="call", domain="local")]
    return model(graph(nodes, "recursive_function", [vi("x", F, [2])], [vi("y", F, [2])]),
                 functions=[fn])


def conv_zero_stride_in_function():
    """strides=[1, 0] on a Conv inside a model-local function."""
    fn = helper.make_function(
        "local", "ConvBlock", ["a", "w"], ["out"],
        [helper.make_node("Conv", ["a", "w"], ["out"], kernel_shape=[3, 3], strides=[1, 0])],
        [helper.make_opsetid("", 13)])
    nodes = [helper.make_node("ConvBlock", ["x", "w"], ["y"], name="call", domain="local")]
    return model(graph(nodes, "conv_zero_stride", [vi("x", F, [1, 2, 6, 6])], [vi("y", F, [1, 2, 4, "w"])],
                       [weights("w", [2, 2, 3, 3], 10)]), functions=[fn])


def unsqueeze_huge_axes():
    """Unsqueeze with 10,000 axes (the opset-11 attribute: small on disk), summed to a scalar."""
    nodes = [
        helper.make_node("Unsqueeze", ["x"], ["u"], name="unsqueeze", axes=list(range(10000))),
        helper.make_node("ReduceSum", ["u"], ["y"], name="sum", keepdims=0),
    ]
    return model(graph(nodes, "unsqueeze_huge_axes", [vi("x", F, [2])], [vi("y", F, [])]),
                 opset=11)


def ms_malformed(kind):
    """ONNX Runtime's quantized ops malformed: a QLinearConcat of one input and no triple, a
    QLinearAdd with a 5-value scale for 3 channels; each refused with a Status."""
    ms = "com.microsoft"
    if kind == "concat":
        node = helper.make_node("QLinearConcat", ["s", "z", "x"], ["y"], domain=ms, axis=0)
    else:
        node = helper.make_node("QLinearAdd", ["x", "v", "z", "x", "s", "z", "s", "z"], ["y"],
                                domain=ms)
    inits = [numpy_helper.from_array(np.array(0.1, dtype=np.float32), "s"),
             numpy_helper.from_array(np.array(3, dtype=np.uint8), "z"),
             numpy_helper.from_array(np.arange(5, dtype=np.float32) + 1, "v")]
    m = model(graph([node], "ms_" + kind, [vi("x", TensorProto.UINT8, [2, 3])],
                    [vi("y", TensorProto.UINT8, [2, 3])], inits))
    m.opset_import.append(helper.make_opsetid(ms, 1))
    return m


def reproducers():
    return {
        "repro-split-negative-sizes": split_negative_sizes(),
        "repro-gemm-inner-dim-mismatch": gemm_inner_mismatch(),
        "repro-conv-weight-channels": conv_weight_channels(),
        "repro-omitted-first-output": omitted_first_output(),
        "repro-recursive-function": recursive_function(),
        "repro-conv-zero-stride-in-function": conv_zero_stride_in_function(),
        "repro-unsqueeze-10k-axes": unsqueeze_huge_axes(),
        "repro-ms-qlinearconcat-no-triple": ms_malformed("concat"),
        "repro-ms-qlinearadd-long-scale": ms_malformed("add"),
    }


def main():
    seeds = valid_seeds()
    for m in seeds.values():
        # The valid seeds must be valid for libonnx too (which knows opsets up to 17).
        if m.opset_import[0].version <= 17:
            onnx.checker.check_model(m)
    seeds.update(reproducers())
    unknown = PENDING - seeds.keys()
    if unknown:
        sys.exit(f"PENDING names no reproducer: {sorted(unknown)}")
    os.makedirs(OUT_DIR, exist_ok=True)
    os.makedirs(PENDING_DIR, exist_ok=True)
    # run_fuzzer picks its plan by the input's size modulo 3: each valid seed three times, its
    # producer name padded so that every plan (npu-offload; split + verify; CPU only) gets it.
    for name in list(valid_seeds()):
        base = seeds.pop(name)
        for pad in range(3):
            m = onnx.ModelProto()
            m.CopyFrom(base)
            m.producer_name += "-" * pad
            variant = len(m.SerializeToString(deterministic=True)) % 3
            seeds[f"{name}-plan{variant}"] = m
    total = 0
    for name, m in sorted(seeds.items()):
        data = m.SerializeToString(deterministic=True)
        folder = PENDING_DIR if name in PENDING else OUT_DIR
        other = OUT_DIR if folder == PENDING_DIR else PENDING_DIR
        if os.path.exists(os.path.join(other, name + ".onnx")):
            os.remove(os.path.join(other, name + ".onnx"))
        with open(os.path.join(folder, name + ".onnx"), "wb") as f:
            f.write(data)
        total += len(data)
    print(f"wrote {len(seeds)} models ({len(PENDING)} pending), {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()

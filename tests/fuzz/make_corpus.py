#!/usr/bin/python3
"""Writes the seed corpus of the importer fuzzer: small ONNX models, valid and malformed.

Run with Debian's python3 (python3-onnx, python3-numpy): /usr/bin/python3 tests/fuzz/make_corpus.py
The output is deterministic and checked in (tests/fuzz/corpus/seed-*.onnx, a few KB in all);
rerun it only to change the seeds. Inputs the fuzzer found crashing (crash-*) sit beside them.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def weights(name, shape, seed):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(graph, opset):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="hsched-fuzz-seed")
    m.ir_version = 8 if opset >= 15 else 7  # what onnx 1.12 pairs with these opsets
    return m


def tiny_cnn(opset):
    """Conv -> BatchNorm -> Relu -> MaxPool -> GlobalAveragePool -> Flatten -> Gemm -> Softmax."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c1", "s", "bn_b", "mean", "var"], ["bn1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p1"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=1),
    ]
    inits = [
        weights("w1", [4, 3, 3, 3], 1), weights("b1", [4], 2), weights("s", [4], 3),
        weights("bn_b", [4], 4), weights("mean", [4], 5),
        numpy_helper.from_array(np.ones([4], dtype=np.float32), "var"),
        weights("fc_w", [5, 4], 6), weights("fc_b", [5], 7),
    ]
    graph = helper.make_graph(
        nodes, f"tiny_cnn_opset{opset}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
    return model(graph, opset)


def shape_chain(opset):
    """A dynamic batch dim and a Shape -> Gather -> Concat -> Reshape chain, as exporters write."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"], name="unsqueeze")
        if opset >= 13 else
        helper.make_node("Unsqueeze", ["batch"], ["batch1"], name="unsqueeze", axes=[0]),
        helper.make_node("Concat", ["batch1", "minus_one"], ["new_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["flat"], name="reshape"),
        helper.make_node("MatMul", ["flat", "w"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "bias"], ["y"], name="add"),
    ]
    inits = [i64("zero", 0), i64("minus_one", [-1]), weights("w", [12, 2], 8),
             weights("bias", [2], 9)]
    if opset >= 13:
        inits.append(i64("axes", [0]))
    graph = helper.make_graph(
        nodes, f"shape_chain_opset{opset}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])], inits)
    return model(graph, opset)


def mixed_dtypes(opset):
    """Cast, Where, Equal, ConstantOfShape, Range and Expand over int64/bool/f16 tensors."""
    nodes = [
        helper.make_node("Cast", ["x"], ["x16"], name="cast_f16", to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["x16"], ["x32"], name="cast_f32", to=TensorProto.FLOAT),
        helper.make_node("Range", ["start", "limit", "delta"], ["idx"], name="range"),
        helper.make_node("Equal", ["idx", "two"], ["mask"], name="equal"),
        helper.make_node("ConstantOfShape", ["len"], ["zeros"], name="zeros",
                         value=numpy_helper.from_array(np.zeros([1], dtype=np.float32))),
        helper.make_node("Where", ["mask", "zeros", "x32"], ["masked"], name="where"),
        helper.make_node("Expand", ["masked", "out_shape"], ["y"], name="expand"),
    ]
    inits = [i64("start", 0), i64("limit", 4), i64("delta", 1), i64("two", 2), i64("len", [4]),
             i64("out_shape", [2, 4])]
    graph = helper.make_graph(
        nodes, f"mixed_dtypes_opset{opset}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)
    return model(graph, opset)


def resize_norm(opset):
    """Resize with scales, ReduceMean, LayerNorm-like arithmetic, Transpose and Slice."""
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["up"], name="resize", mode="nearest")
        if opset >= 11 else
        helper.make_node("Upsample", ["x", "scales"], ["up"], name="resize", mode="nearest"),
        helper.make_node("ReduceMean", ["up"], ["mean"], name="mean", axes=[3], keepdims=1),
        helper.make_node("Sub", ["up", "mean"], ["centered"], name="sub"),
        helper.make_node("Mul", ["centered", "centered"], ["sq"], name="square"),
        helper.make_node("Sqrt", ["sq"], ["std"], name="sqrt"),
        helper.make_node("Transpose", ["std"], ["t"], name="transpose", perm=[0, 1, 3, 2]),
    ]
    if opset >= 10:
        nodes.append(helper.make_node("Slice", ["t", "starts", "ends", "slice_axes"], ["y"],
                                      name="slice"))
        extra = [i64("starts", [1]), i64("ends", [3]), i64("slice_axes", [2])]
    else:
        nodes.append(helper.make_node("Slice", ["t"], ["y"], name="slice", starts=[1], ends=[3],
                                      axes=[2]))
        extra = []
    inits = [numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales")] + extra
    graph = helper.make_graph(
        nodes, f"resize_norm_opset{opset}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 6])], inits)
    return model(graph, opset)


def malformed_seeds():
    """Structurally broken models: the importer must refuse each one with a Status."""
    seeds = {}
    # A cycle: a -> b -> a.
    g = helper.make_graph(
        [helper.make_node("Relu", ["b"], ["a"], name="r1"),
         helper.make_node("Relu", ["a"], ["b"], name="r2")],
        "cycle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    seeds["malformed-cycle"] = model(g, 13)
    # An input that nothing produces.
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")],
        "dangling", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    seeds["malformed-dangling-input"] = model(g, 13)
    # An external-data initializer whose path leaves the model's folder.
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2])
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "../../etc/passwd"), ("offset", "0"), ("length", "8")):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "external_escape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [t])
    seeds["malformed-external-path"] = model(g, 13)
    # A declared tensor size that overflows int64.
    big = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 40])
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "overflow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [big])
    seeds["malformed-size-overflow"] = model(g, 13)
    # An unsupported dtype (string) on an input.
    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="id")],
        "bad_dtype", [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [2])])
    seeds["malformed-dtype"] = model(g, 13)
    return seeds


def ir10_seeds():
    """tiny_cnn as IR 10 writes it: node metadata (NodeProto field 9, unknown to onnx 1.12's
    proto, kept as unknown bytes); then one node naming a function overload (field 8), refused."""
    def with_field(node, field, payload):
        tag = bytes([(field << 3) | 2, len(payload)])  # a length-delimited field, short payload
        return onnx.NodeProto.FromString(node.SerializeToString() + tag + payload)
    seeds = {}
    m = tiny_cnn(17)
    m.ir_version = 10
    entry = b"\x0a\x03src\x12\x04conv"  # StringStringEntryProto {key "src", value "conv"}
    nodes = [with_field(n, 9, entry) for n in m.graph.node]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    seeds["ir10-node-metadata"] = m
    overloaded = onnx.ModelProto()
    overloaded.CopyFrom(m)
    overloaded.graph.node[0].CopyFrom(with_field(overloaded.graph.node[0], 8, b"fast"))
    seeds["malformed-ir10-overload"] = overloaded
    return seeds


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    seeds = {}
    for opset in (7, 9, 11, 13, 17):  # 7: upgraded at import by the version converter
        seeds[f"seed-tiny-cnn-opset{opset}"] = tiny_cnn(opset)
    for opset in (11, 13, 17):
        seeds[f"seed-shape-chain-opset{opset}"] = shape_chain(opset)
    seeds["seed-mixed-dtypes-opset13"] = mixed_dtypes(13)
    seeds["seed-resize-norm-opset9"] = resize_norm(9)
    seeds["seed-resize-norm-opset13"] = resize_norm(13)
    for name, m in seeds.items():
        onnx.checker.check_model(m)  # the valid seeds must be valid for libonnx too
    seeds.update({"seed-" + k: v for k, v in malformed_seeds().items()})
    seeds.update({"seed-" + k: v for k, v in ir10_seeds().items()})  # newer than onnx 1.12's checker
    total = 0
    for name, m in sorted(seeds.items()):
        data = m.SerializeToString(deterministic=True)
        with open(os.path.join(OUT_DIR, name + ".onnx"), "wb") as f:
            f.write(data)
        total += len(data)
    print(f"wrote {len(seeds)} seeds, {total} bytes, to {OUT_DIR}", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Models stored in float16 against ONNX Runtime: float32 models converted as onnxconverter-common's
float16 conversion does, run by `hsched run` and by ONNX Runtime on the same file, outputs compared.

    /usr/bin/python3 tests/differential/half_models.py [--models DIR] [--only a,b]
        [--devices cpu] [--precision fp32|fp16] [--hsched BIN] [--reference node|python]
        [--work DIR]

Every model folder of --models (../shared/models by default: MODEL/model.onnx and
MODEL/test_data_set_0/input_K.pb) is converted twice:
- `half`: float16 everywhere, its inputs and outputs too (as `model.half()` exports);
- `keep_io`: float16 inside, float32 inputs and outputs through Casts (onnxconverter-common's
  keep_io_types), so the graph's own Casts to float16 are roundings hsched must keep.
Float initializers, Constant values, ConstantOfShape values and Casts to float become float16,
but for the inputs ONNX types float32 only (Resize's and Upsample's scales). ONNX Runtime's CPU
provider runs such a model through casts around its float kernels (graph optimizations off, one
thread); hsched computes it in float32 between its half interface (graph/half_models.h).
Verdict per model, form and device as diff_test.py's at its fp16 tolerance (rtol 3e-2, atol 3e-2
scaled by the largest expected magnitude); also printed: the largest difference relative to the
largest expected value, and the cosine of hsched's output to the float32 model's reference.
With npu in --devices, the simulated NPU driver beside --hsched unless ZE_ENABLE_ALT_DRIVERS
names one. Exit 1 when any run fails.
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import diff_test  # noqa: E402

FLOAT, FLOAT16 = TensorProto.FLOAT, TensorProto.FLOAT16
# (op, input index) that ONNX types float32 whatever the data's type.
FLOAT32_ONLY = {("Resize", 2), ("Upsample", 1)}
FLOAT16_SMALLEST = 2.0 ** -24  # its smallest subnormal


def to_half(tensor):
    return numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float16), tensor.name)


def convert(model, keep_io):
    """The float16 form of `model` (modified in place and returned)."""
    graph = model.graph
    kept = {name for node in graph.node for k, name in enumerate(node.input)
            if (node.op_type, k) in FLOAT32_ONLY}
    for k, init in enumerate(graph.initializer):
        if init.data_type == FLOAT and init.name not in kept:
            graph.initializer[k].CopyFrom(to_half(init))
    for node in graph.node:
        for attr in node.attribute:
            if attr.name == "to" and node.op_type == "Cast" and attr.i == FLOAT:
                attr.i = FLOAT16
            if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type == FLOAT and \
                    not (node.op_type == "Constant" and node.output[0] in kept):
                attr.t.CopyFrom(to_half(attr.t))
    del graph.value_info[:]
    if keep_io:
        for value in graph.input:
            if value.type.tensor_type.elem_type == FLOAT:
                rename_uses(graph, value.name, value.name + "_half")
                graph.node.insert(0, helper.make_node("Cast", [value.name], [value.name + "_half"],
                                                      to=FLOAT16))
        for value in graph.output:
            if value.type.tensor_type.elem_type == FLOAT:
                rename_uses(graph, value.name, value.name + "_half", outputs_too=True)
                graph.node.append(helper.make_node("Cast", [value.name + "_half"], [value.name],
                                                   to=FLOAT))
    else:
        for value in list(graph.input) + list(graph.output):
            if value.type.tensor_type.elem_type == FLOAT:
                value.type.tensor_type.elem_type = FLOAT16
    return model


def rename_uses(graph, old, new, outputs_too=False):
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name == old:
                node.input[k] = new
        if outputs_too:
            for k, name in enumerate(node.output):
                if name == old:
                    node.output[k] = new


def make_case(source_dir, case_dir, keep_io):
    os.makedirs(os.path.join(case_dir, "test_data_set_0"))
    model = convert(onnx.load(os.path.join(source_dir, "model.onnx")), keep_io)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    data = os.path.join(source_dir, "test_data_set_0")
    for f in sorted(os.listdir(data)):
        if not f.startswith("input_"):
            continue
        tensor = diff_test.read_tensor(os.path.join(data, f))
        if tensor.dtype == np.float32 and not keep_io:
            tensor = tensor.astype(np.float16)
        proto = onnx.TensorProto()
        with open(os.path.join(data, f), "rb") as fh:
            proto.ParseFromString(fh.read())
        with open(os.path.join(case_dir, "test_data_set_0", f), "wb") as fh:
            fh.write(numpy_helper.from_array(tensor, proto.name).SerializeToString())


def closeness(expected, got):
    """(max |got - expected| / max |expected|, cosine) over all elements."""
    e = expected.astype(np.float64).ravel()
    g = got.astype(np.float64).ravel()
    scale = max(np.abs(e).max(), 1e-30)
    cosine = float(e @ g / max(np.linalg.norm(e) * np.linalg.norm(g), 1e-30))
    return float(np.abs(g - e).max() / scale), cosine


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    parser.add_argument("--only", default="", help="comma-separated model folder names")
    parser.add_argument("--devices", default="cpu", help="comma-separated: one run each")
    parser.add_argument("--hsched", default=diff_test.default_hsched())
    parser.add_argument("--reference", default="node",
                        choices=sorted(diff_test.OrtReference.COMMANDS))
    parser.add_argument("--precision", default="fp32", choices=sorted(diff_test.TOLERANCE),
                        help="hsched's (fp16 for the NPU, which computes no fp32)")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--work", help="keep the cases here (default: a temporary folder)")
    args = parser.parse_args()
    args.tolerance = "fp16"
    args.split_every, args.compile_timeout_ms = 0, 0
    diff_test.use_simulated_npu(args.devices, args.hsched)
    work = args.work or tempfile.mkdtemp(prefix="hsched-half-")
    names = sorted(n for n in os.listdir(args.models)
                   if os.path.exists(os.path.join(args.models, n, "model.onnx")) and
                   (not args.only or n in args.only.split(",")))
    cases = []
    for name in names:
        for form in ("half", "keep_io"):
            case_dir = os.path.join(work, f"{name}_{form}")
            shutil.rmtree(case_dir, ignore_errors=True)
            make_case(os.path.join(args.models, name), case_dir, form == "keep_io")
            cases.append((name, form, case_dir))
    errors = diff_test.OrtReference.run([c[2] for c in cases], args.reference)
    failed = 0
    for name, form, case_dir in cases:
        for devices in args.devices.split(","):
            run_args = argparse.Namespace(**{**vars(args), "devices": devices})
            result = run_half(run_args, case_dir, os.path.join(args.models, name),
                              errors[case_dir])
            failed += result["status"] in diff_test.FAILURES
            print(f"{name:20} {form:8} {devices:6} {result['status']:11} {result['detail']}")
    print(f"half_models: {len(cases)} models, {failed} failed")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def run_half(args, case_dir, source_dir, ort_error):
    """diff_test.run_hsched's verdict at fp16 tolerance, with the closeness of the first output to
    ONNX Runtime's on the half model and to the float32 model's reference; where ONNX Runtime
    refused the model (`ort_error`), ort-refused with hsched's closeness to the latter alone."""
    out_dir = os.path.join(case_dir, "hsched-" + args.devices)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    # Where ONNX Runtime refused the model there are no outputs to compare: a "pass".
    verdict = diff_test.run_hsched(args, case_dir, keep=out_dir)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    expected = sorted(f for f in os.listdir(os.path.join(source_dir, "test_data_set_0"))
                      if f.startswith("output_"))
    if verdict["status"] not in ("pass", "mismatch") or \
            not os.path.exists(os.path.join(out_dir, expected[0])):
        return verdict
    fp32 = diff_test.read_tensor(os.path.join(source_dir, "test_data_set_0", expected[0]))
    got = diff_test.read_tensor(os.path.join(out_dir, expected[0]))
    _, cosine = closeness(fp32, got)
    below = " (the float32 outputs are below float16's range)" if \
        got.dtype == np.float16 and np.abs(fp32).max() < FLOAT16_SMALLEST else ""
    if ort_error:
        return {"status": "ort-refused", "detail": f"hsched's cosine to fp32 {cosine:.5f}{below}; "
                                                   f"ONNX Runtime: {ort_error[:100]}"}
    ort = diff_test.read_tensor(os.path.join(data_dir, expected[0]))
    rel, _ = closeness(ort, got)
    _, ort_cosine = closeness(fp32, ort)
    detail = (f"{got.dtype} max diff/max |ort| {rel:.2e}; cosine to fp32 {cosine:.5f} "
              f"(ONNX Runtime's {ort_cosine:.5f}){below}")
    if verdict["status"] == "mismatch":
        detail = verdict["detail"][:150] + "; " + detail
    return {"status": verdict["status"], "detail": detail}


if __name__ == "__main__":
    sys.exit(main())

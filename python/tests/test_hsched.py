"""The Python package against the shared models: load, plan, report, compile, run from NumPy and
match ONNX Runtime's reference outputs; errors as hsched.Error. Model tests skip when the shared
models are absent (HSCHED_MODELS_DIR, default ../shared/models beside the repository)."""
import os
import pathlib
import time

import numpy as np
import pytest

import hsched

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("HSCHED_MODELS_DIR", ROOT.parent / "shared" / "models"))


def tensor(path):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    return numpy_helper.to_array(onnx.load_tensor(str(path)))


def model_dir(name):
    folder = MODELS / name
    if not (folder / "model.onnx").exists():
        pytest.skip(f"no model at {folder}")
    return folder


def test_version_is_the_library_version():
    assert hsched.__version__.count(".") == 2
    assert hsched.__version__.startswith("0.")


def test_devices_list_this_machines_cpu():
    devices = hsched.devices()
    cpu = [d for d in devices if d["id"] == "cpu0"]
    assert len(cpu) == 1
    assert cpu[0]["api"] == "host" and cpu[0]["present"] and "fp32" in cpu[0]["precisions"]
    shipped = hsched.devices("core-ultra-7-155h")
    assert {d["kind"] for d in shipped} == {"cpu", "gpu", "npu"}


def test_resnet18_from_numpy_matches_the_reference():
    folder = model_dir("resnet18")
    model = hsched.load(str(folder / "model.onnx"))
    assert len(model.inputs) == 1 and len(model.outputs) == 1
    plan = model.plan(policy="cpu-only")
    assert plan.partitions == 1
    exe = model.compile(plan, threads=2)
    assert exe.plan.partitions == 1 and exe.plan.report(format="json")["partitions"]
    x = tensor(folder / "test_data_set_0" / "input_0.pb")
    want = tensor(folder / "test_data_set_0" / "output_0.pb")
    out = exe.run({model.inputs[0]: x})
    assert list(out) == model.outputs
    got = out[model.outputs[0]]
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
    # A non-contiguous float64 input is converted, with the same result.
    x64 = np.asfortranarray(x.astype(np.float64))
    np.testing.assert_allclose(exe.run({model.inputs[0]: x64})[model.outputs[0]], got, rtol=1e-6)
    # Requests in a stream: the same outputs, in order.
    stream = exe.run_stream([{model.inputs[0]: x}, {model.inputs[0]: x * 0}])
    assert len(stream) == 2
    np.testing.assert_allclose(stream[0][model.outputs[0]], got, rtol=1e-6)


# progressive=True on a plan of the whole model on the OpenCL device (PoCL), an empty program
# cache: the first request is answered on the CPU, and once the device's build is done requests
# run there, with the reference's outputs both times.
def test_float16_model_takes_and_gives_float16_arrays(tmp_path):
    # resnet18 stored in float16, as model.half() exports it: run from a float16 array, its output
    # float16 and within float16's error of the float32 reference.
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    folder = model_dir("resnet18")
    m = onnx.load(str(folder / "model.onnx"))
    for k, init in enumerate(m.graph.initializer):
        if init.data_type == onnx.TensorProto.FLOAT:
            half = numpy_helper.to_array(init).astype(np.float16)
            m.graph.initializer[k].CopyFrom(numpy_helper.from_array(half, init.name))
    for value in list(m.graph.input) + list(m.graph.output):
        value.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
    del m.graph.value_info[:]
    onnx.save(m, str(tmp_path / "resnet18_fp16.onnx"))
    model = hsched.load(str(tmp_path / "resnet18_fp16.onnx"))
    exe = model.compile(model.plan(policy="cpu-only"), threads=2)
    x = tensor(folder / "test_data_set_0" / "input_0.pb").astype(np.float16)
    got = exe.run({model.inputs[0]: x})[model.outputs[0]]
    want = tensor(folder / "test_data_set_0" / "output_0.pb")
    assert got.dtype == np.float16 and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=3e-2, atol=3e-2)
    assert int(np.argmax(got)) == int(np.argmax(want))


def test_progressive_compile_answers_on_the_cpu_then_moves_to_the_device(tmp_path):
    opencl = [d["id"] for d in hsched.devices() if d["api"] == "opencl"]
    if not opencl:
        pytest.skip("no OpenCL device")
    folder = model_dir("squeezenet1_1")
    policy = tmp_path / "opencl.yaml"
    policy.write_text("schema_version: 1\nkind: policy\nname: opencl\n"
                      "default: [{device: opencl, precision: fp32}]\n"
                      "fallback: allow\nobjective: strict\n")
    model = hsched.load(str(folder / "model.onnx"))
    plan = model.plan(policy=str(policy))
    exe = model.compile(plan, threads=2, cache_dir=str(tmp_path / "cache"), progressive=True,
                        compile_timeout_ms=600000)
    x = {model.inputs[0]: tensor(folder / "test_data_set_0" / "input_0.pb")}
    want = tensor(folder / "test_data_set_0" / "output_0.pb")
    np.testing.assert_allclose(exe.run(x)[model.outputs[0]], want, rtol=1e-3, atol=1e-4)
    stats = exe.stats
    assert stats["requests_on_cpu"] == 1 and stats["progressive_error"] == ""
    deadline = time.monotonic() + 600
    while stats["plan_ready_ms"] < 0 and not stats["progressive_error"]:
        assert time.monotonic() < deadline, "the plan never became ready"
        time.sleep(0.2)
        stats = exe.stats
    assert stats["progressive_error"] == "" and stats["plan_ready_ms"] >= stats["plan_started_ms"]
    np.testing.assert_allclose(exe.run(x)[model.outputs[0]], want, rtol=1e-3, atol=1e-4)
    assert exe.stats["requests_on_cpu"] == 1
    # The input in the device's page-locked memory, filled in place: the same outputs.
    pinned = exe.allocate_input(model.inputs[0])
    assert pinned.shape == x[model.inputs[0]].shape and not pinned.any()
    pinned[...] = x[model.inputs[0]]
    np.testing.assert_allclose(exe.run({model.inputs[0]: pinned})[model.outputs[0]], want,
                               rtol=1e-3, atol=1e-4)
    devices = {p["device"] for p in exe.plan.report(format="json")["partitions"]}
    assert devices == {opencl[0]}


def test_plan_for_the_155h_reads_the_report_as_a_dict():
    folder = model_dir("resnet18")
    plan = hsched.load(str(folder / "model.onnx")).plan(target="core-ultra-7-155h")
    report = plan.report(format="json")
    assert isinstance(report, dict)
    assert report["schema_version"] == 2
    assert report["target"]["name"] == "core-ultra-7-155h"
    devices = {p["device"] for p in report["partitions"]}
    assert devices <= {"cpu0", "gpu0", "npu0"} and devices != {"cpu0"}
    assert "partitions" in plan.report()  # text
    assert plan.report(format="html").lstrip().lower().startswith("<!doctype html")


def test_errors_raise_hsched_error_with_the_message():
    with pytest.raises(hsched.Error, match="no-such-model.onnx"):
        hsched.load("no-such-model.onnx")
    with pytest.raises(hsched.Error, match="report format"):
        model = hsched.load(str(model_dir("resnet18") / "model.onnx"))
        model.plan(policy="cpu-only").report(format="pdf")
    model = hsched.load(str(model_dir("resnet18") / "model.onnx"))
    exe = model.compile(model.plan(policy="cpu-only"))
    with pytest.raises(hsched.Error, match="has shape"):
        exe.run({model.inputs[0]: np.zeros((1, 3, 8, 8), np.float32)})
    with pytest.raises(hsched.Error, match="is missing"):
        exe.run({})
    with pytest.raises(hsched.Error, match="not an input"):
        exe.allocate_input("no-such-input")
    assert issubclass(hsched.Error, RuntimeError)

#!/usr/bin/python3
"""Reference outputs from ONNX Runtime's Python package, for machines that have it (the GPU
machine of the `device` tool) instead of onnxruntime-node: the protocol of ort_reference.js.

    python3 tests/differential/ort_reference.py [disabled|basic|extended|all] < CASE_DIRS

Reads one case folder a line from standard input, writes CASE/test_data_set_0/output_K.pb and
prints one JSON line a case, in input order: {"case": CASE, "ok": true} or
{"case": CASE, "ok": false, "error": "one line"}. CPU execution provider, graph optimizations
at LEVEL (default disabled), one thread, as ort_reference.js.
"""
import json
import os
import sys

import onnx
import onnxruntime as ort
from onnx import numpy_helper


LEVELS = {"disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
          "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
          "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
          "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
LEVEL = sys.argv[1] if len(sys.argv) > 1 else "disabled"
if LEVEL not in LEVELS:
    sys.exit(f"ort_reference: level '{LEVEL}' is none of {', '.join(LEVELS)}")


def first_line(error):
    return (str(error).splitlines() or [type(error).__name__])[0]


def run_case(case_dir):
    data_dir = os.path.join(case_dir, "test_data_set_0")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = LEVELS[LEVEL]
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(os.path.join(case_dir, "model.onnx"), options,
                                       providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 (any load failure is the case's answer)
        return {"ok": False, "error": "load: " + first_line(e)}
    try:
        names = [i.name for i in session.get_inputs()]
        feeds = {}
        for k in range(len(names)):
            path = os.path.join(data_dir, f"input_{k}.pb")
            if not os.path.exists(path):
                break
            tensor = onnx.TensorProto()
            with open(path, "rb") as f:
                tensor.ParseFromString(f.read())
            feeds[tensor.name or names[k]] = numpy_helper.to_array(tensor)
        outputs = [o.name for o in session.get_outputs()]
        for k, (name, value) in enumerate(zip(outputs, session.run(outputs, feeds))):
            with open(os.path.join(data_dir, f"output_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, name).SerializeToString())
        return {"ok": True}
    except Exception as e:  # noqa: BLE001
        return {"ok": False, "error": "run: " + first_line(e)}


def main():
    for line in sys.stdin:
        case_dir = line.strip()
        if case_dir:
            print(json.dumps({"case": case_dir, **run_case(case_dir)}), flush=True)


if __name__ == "__main__":
    main()

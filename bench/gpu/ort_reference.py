#!/usr/bin/env python3
"""ONNX Runtime CPU outputs of MODEL for the input_K.pb tensors of INPUT_DIR, written as
OUT_DIR/output_K.pb: the reference hsched-gpu's outputs are checked against on the GPU machine
(the exported models there have their own random weights, so the shared references do not apply).

Usage: python3 ort_reference.py MODEL INPUT_DIR OUT_DIR
"""
import glob
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

model, input_dir, out_dir = sys.argv[1:4]
os.makedirs(out_dir, exist_ok=True)
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
feeds = {}
for k, arg in enumerate(session.get_inputs()):
    tensor = onnx.TensorProto()
    with open(os.path.join(input_dir, f"input_{k}.pb"), "rb") as f:
        tensor.ParseFromString(f.read())
    feeds[arg.name] = numpy_helper.to_array(tensor)
for k, (arg, value) in enumerate(zip(session.get_outputs(), session.run(None, feeds))):
    tensor = numpy_helper.from_array(np.asarray(value), arg.name)
    with open(os.path.join(out_dir, f"output_{k}.pb"), "wb") as f:
        f.write(tensor.SerializeToString())

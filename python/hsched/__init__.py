"""hsched: heterogeneous scheduling of ONNX models over CPUs, OpenCL GPUs and NPUs.

    import hsched, numpy as np
    model = hsched.load("model.onnx")
    plan = model.plan(target="core-ultra-7-155h")      # or this machine by default
    print(plan.report())                                # text; format="json" gives a dict
    exe = model.compile(hsched.load("model.onnx").plan())
    outputs = exe.run({"input": np.zeros((1, 3, 224, 224), np.float32)})

docs/python.md is the reference. Errors raise hsched.Error with the library's message.
"""
from ._hsched import (Error, Executable, Model, Plan, __version__, calibrate, devices, load)

__all__ = ["Error", "Executable", "Model", "Plan", "__version__", "calibrate", "devices", "load"]

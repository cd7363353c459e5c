"""hsched: heterogeneous scheduling of ONNX models over CPUs, OpenCL GPUs and NPUs.

    import hsched, numpy as np
    model = hsched.load("model.onnx")
    print(model.plan(target="core-ultra-7-155h").report())  # a laptop we plan for; text
    plan = model.plan()                                 # this machine, the default policy
    exe = model.compile(plan)
    outputs = exe.run({"input": np.zeros((1, 3, 224, 224), np.float32)})

docs/python.md is the reference. Errors raise hsched.Error with the library's message.
"""
from ._hsched import (Error, Executable, Model, Plan, __version__, calibrate, devices, load)

__all__ = ["Error", "Executable", "Model", "Plan", "__version__", "calibrate", "devices", "load"]

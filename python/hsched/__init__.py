"""hsched: heterogeneous scheduling of ONNX models over CPUs, OpenCL GPUs and NPUs.

    import hsched, numpy as np
    model = hsched.load("model.onnx")
    plan = model.plan(target="core-ultra-7-155h")      # or this machine by default
    print(plan.report())                                # text; format="json" gives a dict
    exe = model.compile(hsched.load("model.onnx").plan())
    outputs = exe.run({"input": np.zeros((1, 3, 224, 224), np.float32)})

docs/python.md is the reference. Errors raise hsched.Error with the library's message.
"""
import os as _os

# oneDNN and hsched's CPU kernels run on libgomp, whose threads spin after each parallel region
# for a time it reads from the environment once, when it loads: the `hsched` program starts
# itself with GOMP_SPINCOUNT=30000 (docs/runtime.md#threading); here it is set before the module
# below loads libgomp, unless the user chose a spin or a wait policy.
if "GOMP_SPINCOUNT" not in _os.environ and "OMP_WAIT_POLICY" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "30000"

from ._hsched import (Error, Executable, Model, Plan, __version__, calibrate,  # noqa: E402
                      devices, load)

__all__ = ["Error", "Executable", "Model", "Plan", "__version__", "calibrate", "devices", "load"]

"""Builds the Python package with CMake (docs/python.md):

    pip install . --no-build-isolation          # offline: setuptools, wheel, numpy from Debian

The extension hsched._hsched and the package's data (configs, the simulated NPU driver) come
from CMake's `python` install component. HSCHED_CMAKE_BUILD_DIR reuses a configured build tree
(its libraries are not built again); otherwise a fresh one is made under build/python-wheel.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("HSCHED_CMAKE_BUILD_DIR",
                                            ROOT / "build" / "python-wheel")).resolve()
        if not (build / "CMakeCache.txt").exists():
            # The release preset's flags: -O2 (gcc 12 at CMake's -O3 reports false warnings).
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG",
                            "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG", "-DHSCHED_BUILD_TESTS=OFF",
                            "-DHSCHED_BUILD_BENCH=OFF"], check=True)
        # The module is for the interpreter pip runs: the real one behind a virtualenv's link
        # (the same ABI; a build tree must not depend on a virtualenv that goes away).
        python = os.path.realpath(sys.executable)
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DHSCHED_BUILD_PYTHON=ON",
                        f"-DPython3_EXECUTABLE={python}"], check=True, stdout=subprocess.DEVNULL)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        targets = ["_hsched", "ze_hsched_sim"]
        subprocess.run(["cmake", "--build", str(build), "--parallel", jobs, "--target", *targets],
                       check=True)
        # The python component (hsched/{_hsched*.so, __init__.py, share/, lib/}) into the
        # folder the wheel is made from.
        with tempfile.TemporaryDirectory() as prefix:
            subprocess.run(["cmake", "--install", str(build), "--component", "python", "--prefix",
                            prefix], check=True, stdout=subprocess.DEVNULL)
            package = next(pathlib.Path(prefix).rglob("_hsched*.so")).parent
            target = pathlib.Path(self.build_lib).resolve() / "hsched"
            shutil.copytree(package, target, dirs_exist_ok=True)


setup(ext_modules=[Extension("hsched._hsched", sources=[])], cmdclass={"build_ext": CMakeBuild})

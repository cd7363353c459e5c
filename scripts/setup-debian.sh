#!/usr/bin/env bash
# Installs the Debian 12 (bookworm) packages hsched builds, tests and fuzzes with.
# Run as root on a fresh machine: `bash scripts/setup-debian.sh`. Non-interactive, safe to rerun
# (apt-get skips what is installed). Used by scripts/demo.sh and scripts/test.sh (.ci/run).
set -euo pipefail

if [[ ${EUID} -ne 0 ]]; then
  echo "setup-debian.sh: run as root (it calls apt-get install)" >&2
  exit 1
fi

# One line per reason, so that a package nobody uses any more is easy to spot and drop.
packages=(
  build-essential cmake ninja-build git pkg-config  # toolchain (gcc 12, CMake 3.25)
  lld                                                # the linker (half GNU ld's time)
  clang libclang-rt-14-dev                           # asan and fuzz presets: sanitizers, libFuzzer
  libomp-14-dev                                      # OpenMP for clang (asan and fuzz presets)
  libonnx-dev libprotobuf-dev protobuf-compiler      # graph/: ONNX import
  libboost-graph-dev                                 # graph/: topological order, cycles
  libssl-dev                                         # core/binary_cache: SHA-256 (libcrypto EVP)
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev    # JSON output, CLI flags, configs/*.yaml
  libtbb-dev libdnnl-dev                             # backends/cpu: oneTBB, oneDNN
  ocl-icd-opencl-dev opencl-headers libclblast-dev   # backends/opencl: ICD loader, CLBlast
  pocl-opencl-icd clinfo                             # an OpenCL device on any CPU (CI)
  libze-dev                                          # backends/level_zero: loader + headers
  libpugixml-dev                                     # backends/level_zero/ir: OpenVINO IR XML
  libgtest-dev libgmock-dev libbenchmark-dev         # tests/, bench/
  python3-onnx python3-numpy                         # tests/fuzz/make_corpus.py, model checks
  graphviz                                           # hsched report --format html: graph as SVG
  chromium                                           # the HTML report loaded in a browser (test)
  pybind11-dev python3-dev                           # python/: the hsched module
  python3-pip python3-venv python3-setuptools python3-wheel python3-pytest  # pip install ., pytest
)

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -qq -o Dpkg::Use-Pty=0 -o APT::Install-Recommends=false)
log=$(mktemp)
trap 'rm -f "${log}"' EXIT
# apt and dpkg are chatty even with -qq: keep their output, show it only when something fails.
if ! { apt-get update -qq && apt-get install "${apt_opts[@]}" "${packages[@]}"; } >"${log}" 2>&1; then
  tail -n 50 "${log}" >&2
  echo "setup-debian.sh: apt-get failed (last 50 lines above)" >&2
  exit 1
fi
echo "setup-debian.sh: ${#packages[@]} packages installed or already present"

#!/usr/bin/env bash
# The package as a user gets it (docs/building.md#installing-and-using-the-library), from a
# release build: `cmake --install` to a temporary prefix; `pkg-config --cflags --libs hsched`;
# examples/ configured against the prefix with find_package(hsched), built, and run on resnet18
# on the CPU with the source tree moved away (nothing installed may read it), its output matching
# the reference; then `pip install . --no-build-isolation` into a fresh virtualenv
# (--system-site-packages: numpy and onnx from Debian), `import hsched` and the pytest suite
# (python/tests) run from outside the source tree.
# Usage: scripts/test-install.sh [BUILD_DIR]   (default build/release; it must be built)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
build=$(realpath "${1:-${root}/build/release}")
models=$(realpath -m "${HSCHED_MODELS_DIR:-${root}/../shared/models}")
work=$(mktemp -d)
away=""
cleanup() {
  if [[ -n ${away} && -d ${away} ]]; then mv "${away}" "${root}"; fi
  rm -rf "${work}"
}
trap cleanup EXIT

prefix=${work}/prefix
echo "--- cmake --install to ${prefix}"
cmake --install "${build}" --prefix "${prefix}" >"${work}/install.log"
libdir=$(dirname "$(find "${prefix}" -name libhsched.so -print -quit)")
echo "--- pkg-config --cflags --libs hsched"
PKG_CONFIG_PATH=${libdir}/pkgconfig pkg-config --cflags --libs hsched

echo "--- examples/ against the installed package: libhsched.so, and libhsched.a"
cp -r "${root}/examples" "${work}/examples"
for variant in shared static; do
  static=OFF
  [[ ${variant} == static ]] && static=ON
  cmake -S "${work}/examples" -B "${work}/examples-${variant}" -G Ninja \
    -DCMAKE_PREFIX_PATH="${prefix}" -DRUN_MODEL_STATIC=${static} >"${work}/example-configure.log"
  cmake --build "${work}/examples-${variant}" >"${work}/example-build.log"
done

if [[ -f ${models}/resnet18/model.onnx ]]; then
  echo "--- run_model resnet18 on the CPU (shared, then static), the source tree moved away"
  away=${root}.away-$$
  mv "${root}" "${away}"
  "${work}/examples-shared/run_model" "${models}/resnet18" this-machine cpu-only
  # A program linked with libhsched.a finds the configured prefix's configs (/usr/local here, not
  # this temporary one) or those HSCHED_CONFIGS_DIR names.
  HSCHED_CONFIGS_DIR=${prefix}/share/hsched/configs \
    "${work}/examples-static/run_model" "${models}/resnet18" this-machine cpu-only | tail -n 1
  mv "${away}" "${root}"
  away=""
else
  echo "--- run_model skipped: no model at ${models}/resnet18"
fi

echo "--- pip install . into a fresh virtualenv"
/usr/bin/python3 -m venv --system-site-packages "${work}/venv"
HSCHED_CMAKE_BUILD_DIR=${build} "${work}/venv/bin/pip" install --no-build-isolation --no-index \
  --quiet "${root}"
cd "${work}"
"${work}/venv/bin/python" -c "import hsched; print('hsched', hsched.__version__, hsched.__file__)"
HSCHED_MODELS_DIR=${models} "${work}/venv/bin/python" -m pytest -q -p no:cacheprovider \
  "${root}/python/tests"

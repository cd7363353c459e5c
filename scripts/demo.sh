#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root) to `hsched demo`: installs the Debian packages,
# builds the release preset and runs the demo. Set HSCHED_SKIP_SETUP=1 to skip the apt-get part.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ ${HSCHED_SKIP_SETUP:-0} != 1 ]]; then
  bash scripts/setup-debian.sh
fi
cmake_args=()
if [[ -n ${HSCHED_MODELS_DIR:-} ]]; then
  cmake_args+=(-DHSCHED_MODELS_DIR="${HSCHED_MODELS_DIR}")
fi
cmake --preset release "${cmake_args[@]}"
cmake --build --preset release --parallel "${HSCHED_JOBS:-$(nproc)}" --target hsched
echo
exec build/release/cli/hsched demo

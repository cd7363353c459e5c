#!/usr/bin/env bash
# `hsched demo` N times in a row (default 20), each with cold caches: an empty PoCL kernel cache
# and an empty hsched program cache, the state of a fresh machine. Every run must exit 0; a
# compile abandoned past its deadline may still be running inside PoCL when the demo ends, and
# the process must exit cleanly all the same.
#   bash scripts/demo-cold.sh [N]        (after a release build; HSCHED_BIN overrides the binary)
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-20}
bin=${HSCHED_BIN:-build/release/cli/hsched}
if [[ ! -x ${bin} ]]; then
  echo "demo-cold.sh: no ${bin}: build the release preset first" >&2
  exit 1
fi
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT

failed=0
for ((i = 1; i <= runs; ++i)); do
  rm -rf "${scratch:?}"/*
  mkdir -p "${scratch}/pocl" "${scratch}/hsched" "${scratch}/xdg"
  start=${SECONDS}
  POCL_CACHE_DIR=${scratch}/pocl XDG_CACHE_HOME=${scratch}/xdg HSCHED_CACHE_DIR=${scratch}/hsched \
    "${bin}" demo >"${scratch}/out.txt" 2>&1
  rc=$?
  if [[ ${rc} -ne 0 ]]; then
    failed=$((failed + 1))
    echo "run ${i}: exit ${rc} after $((SECONDS - start)) s; last lines:"
    tail -n 5 "${scratch}/out.txt" | sed 's/^/  /'
  else
    echo "run ${i}: exit 0 ($((SECONDS - start)) s)"
  fi
done
echo "demo-cold.sh: $((runs - failed)) passed, ${failed} failed"
[[ ${failed} -eq 0 ]]

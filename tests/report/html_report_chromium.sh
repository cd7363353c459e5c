#!/usr/bin/env bash
# The HTML report in a real browser: `hsched report --format html` of vit_tiny for the 155H
# (strict policy: many partitions), loaded by headless Chromium. The DOM after the page's script
# ran must hold the graph (an SVG in #graph) and the timeline (#timeline with a bar per
# partition), and the browser must log no console error. Also writes a screenshot beside the
# report. Exit 77 (skipped) without Chromium or the model.
# Usage: html_report_chromium.sh HSCHED MODELS_DIR OUT_DIR
set -euo pipefail
hsched=$1 models=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z ${browser} ]]; then echo "skipped: no chromium"; exit 77; fi
model=${models}/vit_tiny/model.onnx
if [[ ! -f ${model} ]]; then echo "skipped: no model at ${model}"; exit 77; fi
mkdir -p "${out}"
report=${out}/vit_tiny.html
"${hsched}" report "${model}" --target core-ultra-7-155h --policy strict --format html \
  -o "${report}"
partitions=$(grep -o 'class="partition"' "${report}" | wc -l)
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
       --disable-extensions --user-data-dir="${out}/profile" --enable-logging=stderr --v=0)
"${browser}" "${flags[@]}" --dump-dom "file://${report}" >"${out}/dom.html" 2>"${out}/console.log"
"${browser}" "${flags[@]}" --window-size=1400,2400 --screenshot="${out}/vit_tiny.png" \
  "file://${report}" >/dev/null 2>>"${out}/console.log"
fail=0
grep -q '<div class="graph zoom" id="graph">' "${out}/dom.html" &&
  grep -q '<svg' <(sed -n '/id="graph"/,$p' "${out}/dom.html") ||
  { echo "FAIL: no graph SVG in the DOM"; fail=1; }
bars=$(grep -o 'class="partition"' "${out}/dom.html" | wc -l)
if ! grep -q '<svg id="timeline"' "${out}/dom.html" || [[ ${bars} -ne ${partitions} ]]; then
  echo "FAIL: the timeline has ${bars} partition bars, the report ${partitions}"; fail=1
fi
# Chromium logs the page's console as "CONSOLE(line)" and script errors as "Uncaught ...".
if grep -E 'CONSOLE[:(]|Uncaught|SyntaxError' "${out}/console.log"; then
  echo "FAIL: console messages above"; fail=1
fi
[[ -s ${out}/vit_tiny.png ]] || { echo "FAIL: no screenshot"; fail=1; }
echo "html report: ${partitions} partitions on the timeline, graph drawn, console clean," \
  "screenshot ${out}/vit_tiny.png"
exit "${fail}"

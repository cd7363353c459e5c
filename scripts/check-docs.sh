#!/usr/bin/env bash
# Checks the project's markdown (every *.md that git tracks or would track: README.md, docs/,
# the folders' READMEs; never build/ or other ignored folders). No network, no packages beyond
# bash, git, grep and awk.
#   - every relative link [text](target) points at a file or folder that exists, and a
#     `#anchor` into a markdown file (or `#anchor` alone, within the file) names one of its
#     headings, slugged as GitHub does: lowercase, punctuation dropped except '-' and '_',
#     each space a '-', repeated headings suffixed -1, -2, ...;
#   - no page of docs/ is over 450 lines;
#   - no issue numbers ("issue 8", "Issue #5", "(#12)") and no run labels of the old run log
#     ("L47", "V22", "K8", "M2c", "wave 1", "stop 39"): history lives in git, measured figures in
#     docs/benchmarks.md. The label list is explicit, so "L2 cache" or "V100" pass.
# Prints one line per failure and exits 1 if there is any.
#
#   bash scripts/check-docs.sh [FILE.md...]     # default: every markdown file of the repository
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

max_doc_lines=450

if [[ $# -gt 0 ]]; then
  files=("$@")
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.md' | sort -u)
else
  mapfile -t files < <(find . -name '*.md' -not -path './build*' -not -path '*/node_modules/*' \
    -not -path './.git/*' | sed 's|^\./||' | sort)
fi

failures=()

# The headings of a markdown file as GitHub's anchors, one a line.
anchors_of() {
  awk '
    /^[ \t]*(```|~~~)/ { fenced = !fenced; next }
    fenced { next }
    /^##?#?#?#?#?[ \t]/ {
      h = $0
      sub(/^#+[ \t]+/, "", h)
      sub(/[ \t]+#+[ \t]*$/, "", h)
      sub(/[ \t]+$/, "", h)
      # [text](url) in a heading keeps its text
      while (match(h, /\[[^]]*\]\([^)]*\)/)) {
        inner = substr(h, RSTART + 1, RLENGTH - 1)
        sub(/\]\(.*$/, "", inner)
        h = substr(h, 1, RSTART - 1) inner substr(h, RSTART + RLENGTH)
      }
      h = tolower(h)
      s = ""
      for (i = 1; i <= length(h); i++) {
        c = substr(h, i, 1)
        if (c ~ /[a-z0-9_-]/) s = s c
        else if (c == " ") s = s "-"
        else if (c > "~") s = s c   # bytes of non-ASCII letters are kept
      }
      if (s in seen) { n = ++seen[s]; print s "-" n } else { seen[s] = 0; print s }
    }
  ' "$1"
}

# The inline links of a markdown file outside code: "LINE<TAB>TARGET", one a line.
links_of() {
  awk '
    /^[ \t]*(```|~~~)/ { fenced = !fenced; next }
    fenced { next }
    /^(    |\t)/ && !/^[ \t]*([-*+]|[0-9]+\.)[ \t]/ && prev_blank { next }  # indented code
    {
      prev_blank = ($0 ~ /^[ \t]*$/)
      line = $0
      gsub(/`[^`]*`/, "", line)  # inline code spans
      while (match(line, /\]\([^)]*\)/)) {
        t = substr(line, RSTART + 2, RLENGTH - 3)
        line = substr(line, RSTART + RLENGTH)
        sub(/^[ \t]*</, "", t); sub(/>[ \t]*$/, "", t)
        sub(/[ \t]+".*$/, "", t)  # a title
        if (t != "") print NR "\t" t
      }
    }
  ' "$1"
}

declare -A anchor_cache=()
has_anchor() {  # FILE ANCHOR
  local file=$1 anchor=$2
  if [[ -z ${anchor_cache[${file}]+x} ]]; then
    anchor_cache[${file}]=$'\n'"$(anchors_of "${file}")"$'\n'
  fi
  [[ ${anchor_cache[${file}]} == *$'\n'"${anchor}"$'\n'* ]]
}

links_checked=0
for file in "${files[@]}"; do
  [[ -f ${file} ]] || { failures+=("${file}: no such file"); continue; }
  dir=$(dirname "${file}")
  while IFS=$'\t' read -r line target; do
    [[ -z ${target} ]] && continue
    # Other schemes (https:, mailto:, ...) are not checked: no network.
    [[ ${target} =~ ^[A-Za-z][A-Za-z0-9+.-]*: ]] && continue
    links_checked=$((links_checked + 1))
    path=${target%%#*}
    anchor=
    [[ ${target} == *'#'* ]] && anchor=${target#*#}
    if [[ -z ${path} ]]; then
      resolved=${file}
    elif [[ ${path} == /* ]]; then
      resolved=${path#/}
    else
      resolved=${dir}/${path}
    fi
    resolved=${resolved//%20/ }
    if [[ ! -e ${resolved} ]]; then
      failures+=("${file}:${line}: broken link '${target}': ${resolved} does not exist")
      continue
    fi
    if [[ -n ${anchor} && ${resolved} == *.md && -f ${resolved} ]]; then
      if ! has_anchor "${resolved}" "${anchor}"; then
        failures+=("${file}:${line}: broken link '${target}': no heading '#${anchor}' in ${resolved}")
      fi
    fi
  done < <(links_of "${file}")
done

for file in "${files[@]}"; do
  [[ ${file} == docs/*.md && -f ${file} ]] || continue
  lines=$(wc -l <"${file}")
  if ((lines > max_doc_lines)); then
    failures+=("${file}: ${lines} lines, over ${max_doc_lines}: split the page")
  fi
done

# Run labels of the old run log: letter + number (+ a, b or c), from an explicit list, and the
# ranges the log wrote ("L12-L14"); L1-L3 only with a suffix (L2 alone is a cache level); not
# after a letter and a hyphen ("MobileNet-V2").
labels='L([4-9]|[1-4][0-9])[a-c]?|L[1-3][a-c]|V([1-9]|1[0-9]|2[0-2])[a-c]?|K[1-9]|M[12][a-c]?'
labels+='|N[1-8]|P[1-5]|Q[1-4]|R[1-5]|S[12]|T[01]|U1|W[12]|J[2-5]'
pattern="(^|[^A-Za-z0-9_-]|[0-9]-)(${labels})\\b|\\b[Ii]ssues? #?[0-9]+|\\(#[0-9]+\\)|\\b[Ww]ave [0-9]+|\\b[Ss]top [0-9]+"
for file in "${files[@]}"; do
  [[ -f ${file} ]] || continue
  while IFS= read -r hit; do
    text=${hit#*:}
    [[ ${text} == "(#"* ]] || text=${text#[^A-Za-z]}  # the character before a label
    text=${text#-}
    failures+=("${file}:${hit%%:*}: issue number or run label '${text}' (history stays in git)")
  done < <(grep -noE "${pattern}" "${file}")
done

if [[ ${#failures[@]} -gt 0 ]]; then
  printf '%s\n' "${failures[@]}"
  echo "check-docs: ${#failures[@]} failures in ${#files[@]} files" >&2
  exit 1
fi
echo "check-docs: ${#files[@]} files, ${links_checked} relative links: ok"

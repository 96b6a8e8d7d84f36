#!/bin/sh
# Does an extractor change keep its output? `scraper extract` by two builds
# over the same pages, the JSON compared page by page with `elapsed_ms` dropped.
#
#   scripts/same-extract.sh OLD_BIN NEW_BIN PAGE...     # e.g. ../shared/eval pages
#
# Prints how many pages differ and the first few paths; exit 1 on a difference.
# Needs jq. (scripts/same-output.sh checks crawl, build and the rest too.)
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OLD_BIN NEW_BIN PAGE..." >&2; exit 2; }
OLD=$1; NEW=$2; shift 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/same-extract.XXXXXX")
"$OLD" --config "$ROOT/config.yml" extract "$@" 2>/dev/null | jq -c 'del(.elapsed_ms)' > "$W/old.jsonl"
"$NEW" --config "$ROOT/config.yml" extract "$@" 2>/dev/null | jq -c 'del(.elapsed_ms)' > "$W/new.jsonl"
n=$(wc -l < "$W/old.jsonl")
d=$(paste -d '\n' "$W/old.jsonl" "$W/new.jsonl" | paste - - | awk -F'\t' '$1 != $2' | wc -l)
echo "pages $n, differing $d (work files in $W)"
if [ "$d" -ne 0 ]; then
    paste -d '\n' "$W/old.jsonl" "$W/new.jsonl" | paste - - | awk -F'\t' '$1 != $2 {print $1}' \
        | jq -r .path | head -5
    exit 1
fi

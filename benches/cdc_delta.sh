#!/usr/bin/env bash
# How much of a day's build a chunk-deduplicating store (the Hub's) would
# have to take: build RECORDS generated records, then the same plus one day
# of changes, and count the bytes of the second build's content-defined
# chunks (~64 KiB, benches/chunk_diff.rs) not found in the first, against
# the bytes of the rows that changed.
#
#   benches/cdc_delta.sh [RECORDS]        (default 200000)
#
# Days measured, each against the base build:
#   add     one day of new records only (--new, default 5400)
#   edit    the same new records plus 50 updated and 10 withdrawn stories
#   fix     50 updated and 10 withdrawn stories, no new records
# "Rows changed" are the rows in one build and not the other (by id), and
# their bytes are that count times the build's average Parquet bytes a row.
# Also checks that building the same shards twice gives identical bytes.
#
# Environment: WORK (default /tmp/scraper-cdc) holds the data and builds;
# NEW (default 5400) new records a day; SCRAPER_BUILD_CUTS=FILE,GROUP,PAGE
# (rows per file, row group and text page) reaches every build, for sweeps. Needs a release build (made here) and
# python3 with pyarrow.
set -euo pipefail

records="${1:-${RECORDS:-200000}}"
work="${WORK:-/tmp/scraper-cdc}"
new="${NEW:-5400}"
root="$(cd "$(dirname "$0")/.." && pwd)"

python3 -c 'import pyarrow' 2>/dev/null || { echo "pip install pyarrow" >&2; exit 1; }
cd "$root"
cargo build --release --quiet --bench gen_shards --bench chunk_diff --bin scraper
bench_bin() {
  find target/release/deps -maxdepth 1 -type f -perm -u+x -name "$1-*" -print0 |
    xargs -0 ls -t | head -n 1
}
gen="$(bench_bin gen_shards)"
diff_bin="$(bench_bin chunk_diff)"
scraper="$root/target/release/scraper"
mkdir -p "$work"
printf '' >"$work/config.yml"

base="$work/base"
if [ ! -f "$base/.records" ] || [ "$(cat "$base/.records")" != "$records" ]; then
  rm -rf "$base"
  "$gen" --out "$base" --records "$records"
  echo "$records" >"$base/.records"
fi

# build DATA OUT: prints the build's wall seconds.
build() {
  local t0 t1
  t0=$(date +%s.%N)
  "$scraper" --config "$work/config.yml" build --data "$1" --out "$2" --no-relevance-filter >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

# day NAME ARGS...: the base shards plus one generated day.
day() {
  local name="$1"
  shift
  rm -rf "${work:?}/$name"
  mkdir -p "$work/$name/articles"
  for f in "$base"/articles/*.jsonl.zst; do ln "$f" "$work/$name/articles/" 2>/dev/null || cp "$f" "$work/$name/articles/"; done
  "$gen" --out "$work/$name" --records "$records" --day 1 "$@" 2>/dev/null
}

rm -rf "$work/dist-base" "$work/dist-again"
secs=$(build "$base" "$work/dist-base")
build "$base" "$work/dist-again" >/dev/null
if diff -r "$work/dist-base/data" "$work/dist-again/data" >/dev/null; then
  same="identical"
else
  same="DIFFERENT"
fi
base_bytes=$(cat "$work"/dist-base/data/*.parquet | wc -c | tr -d ' ')
echo "base: $records records, $(find "$work/dist-base/data" -name '*.parquet' | wc -l | tr -d ' ') files, $base_bytes bytes of Parquet, built in $secs s; built twice: $same bytes"

# changed OLD NEW: rows in one build and not the other, and their estimated bytes.
changed() {
  python3 - "$1" "$2" <<'PY'
import glob, os, sys
import pyarrow.parquet as pq
def ids(d):
    s = set()
    for f in sorted(glob.glob(os.path.join(d, "data", "*.parquet"))):
        s.update(pq.read_table(f, columns=["id"]).column("id").to_pylist())
    return s
a, b = ids(sys.argv[1]), ids(sys.argv[2])
nbytes = sum(os.path.getsize(f) for f in glob.glob(os.path.join(sys.argv[2], "data", "*.parquet")))
gone, added = len(a - b), len(b - a)
print(gone, added, round((gone + added) * nbytes / max(len(b), 1)))
PY
}

for spec in "add:--new $new --updates 0 --withdrawals 0" \
            "edit:--new $new --updates 50 --withdrawals 10" \
            "fix:--new 0 --updates 50 --withdrawals 10"; do
  name="${spec%%:*}"
  # shellcheck disable=SC2086 # the day's flags are words
  day "$name" ${spec#*:}
  rm -rf "$work/dist-$name"
  secs=$(build "$work/$name" "$work/dist-$name")
  read -r gone added row_bytes <<<"$(changed "$work/dist-base" "$work/dist-$name")"
  read -r new_bytes total _ _ <<<"$("$diff_bin" "$work/dist-base/data" "$work/dist-$name/data")"
  awk -v n="$name" -v g="$gone" -v a="$added" -v r="$row_bytes" -v nb="$new_bytes" -v t="$total" -v s="$secs" 'BEGIN {
    printf "%-4s: rows removed %d, added %d (%.2f MB of rows); new chunk bytes %.2f MB of %.1f MB (%.2f%%); ratio to the rows changed %.2fx; build %s s\n",
      n, g, a, r / 1e6, nb / 1e6, t / 1e6, 100 * nb / t, nb / (r > 0 ? r : 1), s
  }'
done

#!/usr/bin/env bash
# Time `scraper build` against DuckDB doing the same read / dedup / write on
# the same generated shards, in the same run, and report the ratios.
#
#   benches/build_vs_duckdb.sh [RECORDS]        (default 100000)
#
# Environment: WORK (default /tmp/scraper-bench) holds data/, dist/, duck/;
# REGEN=1 regenerates the shards; RELEVANCE=1 keeps the relevance filter on
# for `scraper build`, with the keywords of the repository's config.yml
# (DuckDB never filters, so the default is off); DUCKDB=0 times `scraper
# build` alone (for iterating; the ratios need a run with DuckDB).
# Needs: a release build (made here), python3 with duckdb (pip install duckdb),
# GNU time at /usr/bin/time for peak RSS.
set -euo pipefail

records="${1:-${RECORDS:-100000}}"
work="${WORK:-/tmp/scraper-bench}"
root="$(cd "$(dirname "$0")/.." && pwd)"
data="$work/data"
stamp="$data/.records"

command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 1; }
python3 -c 'import duckdb' 2>/dev/null || { echo "pip install duckdb" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 1; }

cd "$root"
# The generator is built with the release profile too (`cargo bench` would use
# the bench profile and could rebuild every dependency).
scraper_bin="${BIN:-$root/target/release/scraper}"
[ -n "${BIN:-}" ] || cargo build --release --quiet --bench gen_shards --bin scraper
gen="$(find target/release/deps -maxdepth 1 -type f -perm -u+x -name 'gen_shards-*' -newer Cargo.toml | head -n 1)"
[ -n "$gen" ] || gen="$(find target/release/deps -maxdepth 1 -type f -perm -u+x -name 'gen_shards-*' | head -n 1)"
if [ "${REGEN:-0}" = "1" ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$records" ]; then
  rm -rf "$data"
  "$gen" --out "$data" --records "$records"
  echo "$records" >"$stamp"
fi
mkdir -p "$work/duck"
printf '' >"$work/config.yml"

# Warm the page cache the same way for both.
cat "$data"/articles/*.jsonl.zst >/dev/null
shard_bytes=$(cat "$data"/articles/*.jsonl.zst | wc -c | tr -d ' ')

# Prints "wall_seconds peak_kib cpu_seconds" for the command.
measure() {
  local out
  out="$(mktemp)"
  /usr/bin/time -f '%e %M %U %S' -o "$out" "$@" >/dev/null
  awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$out"
  rm -f "$out"
}

filter_flag="--no-relevance-filter"
config="$work/config.yml"
if [ "${RELEVANCE:-0}" = "1" ]; then
  filter_flag=""
  config="$root/config.yml"
fi

# DuckDB reads and writes the columns that carry the bulk of the bytes, the
# text and its Markdown (`gen_shards` writes both unless --no-markdown; the
# build writes both), and the small ones it always did.
cat >"$work/duck/run.py" <<'EOF'
import sys
import duckdb

data, out = sys.argv[1], sys.argv[2]
cols = ("{id: 'BIGINT', url: 'VARCHAR', domain: 'VARCHAR', title: 'VARCHAR', "
        "date: 'DATE', date_source: 'VARCHAR', year: 'INTEGER', text: 'VARCHAR', "
        "keywords: 'VARCHAR[]', fetched_at: 'TIMESTAMPTZ', lang: 'VARCHAR', "
        "canonical_url: 'VARCHAR', byline: 'VARCHAR', run_id: 'VARCHAR', markdown: 'VARCHAR'}")
duckdb.connect().execute(f"""
COPY (
  SELECT * FROM (
    SELECT * FROM read_json('{data}/articles/*.jsonl.zst', format = 'newline_delimited',
                            compression = 'zstd', ignore_errors = true, columns = {cols})
    QUALIFY row_number() OVER (PARTITION BY url ORDER BY id) = 1
  )
  QUALIFY row_number() OVER (PARTITION BY hash(text) ORDER BY id) = 1
  ORDER BY id
) TO '{out}' (FORMAT parquet, COMPRESSION zstd)
""")
EOF

echo "records: $records; shards: $(find "$data/articles" -name '*.jsonl.zst' | wc -l | tr -d ' ') files, $shard_bytes bytes"
# shellcheck disable=SC2086 # filter_flag is empty or one word
read -r ours_s ours_kib ours_cpu <<<"$(measure "$scraper_bin" --config "$config" \
  build --data "$data" --out "$work/dist" $filter_flag)"
echo "scraper build: ${ours_s} s wall, ${ours_cpu} s CPU, peak RSS $((ours_kib / 1024)) MiB"
[ "${DUCKDB:-1}" = "0" ] && exit 0
rm -f "$work/duck/out.parquet"
read -r duck_s duck_kib duck_cpu <<<"$(measure python3 "$work/duck/run.py" "$data" "$work/duck/out.parquet")"
echo "duckdb:        ${duck_s} s wall, ${duck_cpu} s CPU, peak RSS $((duck_kib / 1024)) MiB"

rows() {
  python3 -c 'import sys, pyarrow.parquet as pq; print(sum(pq.ParquetFile(f).metadata.num_rows for f in sys.argv[1:]))' "$@" 2>/dev/null || echo "?"
}
echo "rows: scraper $(rows "$work"/dist/data/*.parquet), duckdb $(rows "$work/duck/out.parquet")"
echo "bytes: scraper $(cat "$work"/dist/data/*.parquet | wc -c | tr -d ' '), duckdb $(wc -c <"$work/duck/out.parquet" | tr -d ' ')"
awk -v a="$ours_s" -v b="$duck_s" -v c="$ours_kib" -v d="$duck_kib" -v e="$ours_cpu" -v f="$duck_cpu" 'BEGIN {
  printf "ratio scraper/duckdb: wall time %.2f, CPU time %.2f, peak RSS %.2f\n", a / b, e / f, c / d
}'

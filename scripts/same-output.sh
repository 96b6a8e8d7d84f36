#!/bin/sh
# Does a change keep behaviour? Runs two builds of `scraper` on the same inputs and
# compares what they print and write (the house issue's "behaviour unchanged, shown").
#
#   scripts/same-output.sh OLD_BIN NEW_BIN [EVAL_DIR]     # EVAL_DIR: ../shared/eval
#
# 1. `extract` on every page of EVAL_DIR, in one process (JSON without `elapsed_ms`);
# 2. a crawl of a loopback web (tests/scripts/same_web.py, two hosts, reached through
#    its proxy) by each binary: stored records without times and ids, sorted by URL,
#    and the end-of-run table with durations and rates masked;
# 3. `build` of the OLD crawl's shards by each binary: Parquet files byte for byte;
# 4. `stats`, `health`, `check-url` (readable and --json) on the same inputs.
# Prints one line per comparison and `same` or `DIFFERENT: ...` last; exit 1 on a
# difference. Needs python3 and jq.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN [EVAL_DIR]" >&2; exit 2; }
OLD=$(realpath "$1"); NEW=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EVAL=$(realpath "${3:-$ROOT/../shared/eval}")
W=$(mktemp -d "${TMPDIR:-/tmp}/same-output.XXXXXX")
DIFFS=""
note() { printf '%-28s %s\n' "$1" "$2"; }
compare() { # name file-old file-new
    if cmp -s "$2" "$3"; then note "$1" same; else
        note "$1" "DIFFERENT (diff $2 $3)"; DIFFS="$DIFFS $1"; fi
}

# 1. extract over the evaluation set
python3 - "$EVAL" > "$W/eval-files" <<'PY'
import json, sys, pathlib
root = pathlib.Path(sys.argv[1]); seen = []
for c in json.load(open(root / "manifest.json"))["cases"]:
    p = str(root / c["html"])
    if p not in seen: seen.append(p)
print("\n".join(seen))
PY
for who in old new; do
    bin=$OLD; [ $who = new ] && bin=$NEW
    # shellcheck disable=SC2046
    "$bin" --config "$ROOT/config.yml" extract $(cat "$W/eval-files") 2>/dev/null \
        | jq -c 'del(.elapsed_ms)' > "$W/extract-$who.jsonl"
done
note "extract pages" "$(wc -l < "$W/extract-old.jsonl")"
compare extract "$W/extract-old.jsonl" "$W/extract-new.jsonl"

# 2. crawl a loopback web through its proxy
python3 "$ROOT/tests/scripts/same_web.py" "$W/port" & WEB=$!
trap 'kill $WEB 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 50); do [ -s "$W/port" ] && break; sleep 0.1; done
PROXY="http://127.0.0.1:$(cat "$W/port")"
cat > "$W/config.yml" <<YML
keywords:
  targets: [ai, model, language model, training, research]
  strong_targets: [AI, artificial intelligence, large language model, language model, machine learning, OpenAI, DeepMind, generative AI]
  min_strong_mentions: 2
sources:
  - {host: news.test, seeds: [http://news.test/feed.xml, http://news.test/]}
  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}
crawl:
  concurrency: 4
  min_host_gap: 20ms
  stop_grace: 2s
  connect_timeout: 2s
  read_timeout: 3s
  request_timeout: 5s
  flush_every: 200ms
  user_agent: "scraper-same-output/0.1 (+http://example.invalid/contact)"
YML
mask() { sed -E 's/[0-9]+\.[0-9]+/N/g; s/[0-9]+[ ]?(ms|s|m|h|µs|us|MiB|KiB|B|%|\/s)\b/N\1/g; s#/tmp/same-output[^ ]*#WORK#g; s/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+Z?/TIME/g; s/run [0-9a-zA-Z_-]{8,}/run ID/g'; }
for who in old new; do
    bin=$OLD; [ $who = new ] && bin=$NEW
    mkdir -p "$W/$who"
    (cd "$W/$who" && cp "$W/config.yml" . && env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY \
        SCRAPER_NOW=2026-11-20T06:00:00Z RUST_LOG=warn "$bin" --config config.yml crawl --data data \
        --proxy "$PROXY" --max-duration 20s > crawl.out 2> crawl.err) || true
    for f in "$W/$who"/data/articles/*.zst; do zstd -dc "$f"; done 2>/dev/null \
        | jq -c 'del(.id, .fetched_at, .fetched, .crawled_at, .elapsed_ms, .run_id)' | sort > "$W/records-$who.jsonl"
    # the live status line ("[1s / 20s] fetched ...") is a snapshot taken by a timer: left out
    cat "$W/$who/crawl.out" "$W/$who/crawl.err" | grep -v '^\[' | mask > "$W/table-$who.txt"
done
note "crawl records" "$(wc -l < "$W/records-old.jsonl")"
compare "crawl records" "$W/records-old.jsonl" "$W/records-new.jsonl"
compare "end-of-run table" "$W/table-old.txt" "$W/table-new.txt"

# 3. build the same shards with each binary
for who in old new; do
    bin=$OLD; [ $who = new ] && bin=$NEW
    (cd "$W/old" && SCRAPER_NOW=2026-11-20T06:00:00Z "$bin" --config config.yml build --data data \
        --out "$W/dist-$who" 2>&1 | sed "s#$W/dist-$who#DIST#g" | mask > "$W/build-$who.out") || true
    (cd "$W/dist-$who" && find . -name '*.parquet' | sort | xargs -r sha256sum) > "$W/parquet-$who.sum"
done
note "parquet files" "$(wc -l < "$W/parquet-old.sum")"
compare "build parquet" "$W/parquet-old.sum" "$W/parquet-new.sum"
compare "build output" "$W/build-old.out" "$W/build-new.out"

# 4. commands that only look, on the same inputs
for who in old new; do
    bin=$OLD; [ $who = new ] && bin=$NEW
    cd "$W/old"
    "$bin" --config config.yml stats --data data > "$W/stats-$who.txt" 2>&1 || true
    "$bin" --config config.yml stats --data data --json > "$W/stats-json-$who.txt" 2>&1 || true
    "$bin" --config config.yml health --data data > "$W/health-$who.txt" 2>&1 || true
    "$bin" --config config.yml health --data data --json > "$W/health-json-$who.txt" 2>&1 || true
    env -u http_proxy -u HTTP_PROXY "$bin" --config config.yml check-url --proxy "$PROXY" \
        http://news.test/2026/11/ai-story-3.html 2>/dev/null | mask > "$W/check-$who.txt" || true
    env -u http_proxy -u HTTP_PROXY "$bin" --config config.yml check-url --proxy "$PROXY" --json \
        http://news.test/2026/11/ai-story-3.html 2>/dev/null | jq -c 'del(.elapsed_ms)' > "$W/check-json-$who.txt" || true
    cd "$ROOT"
done
for c in stats stats-json health health-json check check-json; do
    compare "$c" "$W/$c-old.txt" "$W/$c-new.txt"
done
if [ -z "$DIFFS" ]; then echo "same (work files in $W)"; else echo "DIFFERENT:$DIFFS (work files in $W)"; exit 1; fi

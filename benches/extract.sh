#!/bin/sh
# Speed and quality of `scraper extract` on the shared evaluation set, next to
# trafilatura measured in the same run (single process, one page at a time).
#
#   benches/extract.sh [EVAL_DIR]        # default: ../shared/eval
#
# Prints the score table (text F1, snippet F1, title, date, pages per
# CPU-second) and the extractor's own throughput in pages/s and MB/s.
# Needs python3; the trafilatura peer needs `pip install -r EVAL_DIR/requirements-peers.txt`
# (skipped when it is not installed).
set -eu
cd "$(dirname "$0")/.."
EVAL=${1:-../shared/eval}
OUT=${TMPDIR:-/tmp}/scraper-bench
mkdir -p "$OUT"
cargo build --release --quiet
BIN=$(pwd)/target/release/scraper
CONFIG=$(pwd)/config.yml

python3 "$EVAL/score.py" --manifest "$EVAL/manifest.json" \
    --cmd "$BIN --config $CONFIG extract {files}" --name scraper \
    --no-per-case --save-output "$OUT/scraper.jsonl" --out "$OUT/scraper.json"
RESULTS="$OUT/scraper.json"
if python3 -c 'import trafilatura' 2>/dev/null; then
    python3 "$EVAL/score.py" --manifest "$EVAL/manifest.json" --peer trafilatura \
        --no-per-case --out "$OUT/trafilatura.json"
    RESULTS="$RESULTS $OUT/trafilatura.json"
fi
# shellcheck disable=SC2086
python3 "$EVAL/score.py" --summarize $RESULTS --only-all --markdown

# In-process throughput: sum of per-page elapsed_ms over bytes of input.
python3 - "$OUT/scraper.jsonl" "$EVAL" <<'PY'
import json, sys, gzip, pathlib
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ms = sum(r.get("elapsed_ms", 0) for r in recs)
man = json.load(open(pathlib.Path(sys.argv[2]) / "manifest.json"))
seen, size = set(), 0
for c in man["cases"]:
    p = pathlib.Path(sys.argv[2]) / c["html"]
    if p in seen:
        continue
    seen.add(p)
    data = p.read_bytes()
    size += len(gzip.decompress(data)) if p.name.endswith(".gz") else len(data)
s = ms / 1000
print(f"in-process: {len(recs)} pages, {size / 1e6:.1f} MB in {s:.2f} s = "
      f"{len(recs) / s:.0f} pages/s, {size / 1e6 / s:.1f} MB/s (single thread)")
PY

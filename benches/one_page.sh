#!/bin/sh
# One page's whole-process CPU (user + system, start-up and set-up
# included) through `scraper extract FILE` and `scraper check-url URL`
# against a loopback server, for this build (A) and a baseline binary (B)
# measured in the same run, A and B alternated, ratio A/B taken pair by pair.
#
#   benches/one_page.sh BASELINE_BIN [PAGE] [RUNS]
#
# PAGE: an HTML file (.gz too; default: the first page of $EVAL, by default
# ../shared/eval);
# RUNS: pairs per command (default 21). BIN overrides the binary under test
# (default target/release/scraper, built if missing). Prints the median CPU
# in ms of A and of B and the median of the pair ratios, per command.
# Needs python3 (its http.server is the loopback web; the page is served
# with a robots.txt, and check-url asks /.well-known/tdmrep.json too).
set -eu
cd "$(dirname "$0")/.."
BASE=${1:?usage: benches/one_page.sh BASELINE_BIN [PAGE] [RUNS]}
EVAL=${EVAL:-../shared/eval}
PAGE=${2:-$EVAL/$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['cases'][0]['html'])" "$EVAL/manifest.json")}
RUNS=${3:-21}
BIN=${BIN:-$(pwd)/target/release/scraper}
[ -x "$BIN" ] || cargo build --release --quiet
WORK=$(mktemp -d)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/web"
case $PAGE in
*.gz) gzip -dc "$PAGE" >"$WORK/web/page.html" ;;
*) cp "$PAGE" "$WORK/web/page.html" ;;
esac
printf 'User-agent: *\nAllow: /\n' >"$WORK/web/robots.txt"
# The shipped config, with loopback allowed and a small per-host gap.
sed -e 's/^\(  *allow_private_addresses:\) false/\1 true/' \
    -e 's/^\(  *min_host_gap:\) .*/\1 50ms/' config.yml >"$WORK/config.yml"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$WORK/web" >/dev/null 2>&1 &
SERVER=$!
python3 - "$PORT" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        break
    except OSError:
        time.sleep(0.05)
PY
python3 - "$BIN" "$BASE" "$RUNS" "$WORK/config.yml" "$WORK/web/page.html" \
    "http://127.0.0.1:$PORT/page.html" <<'PY'
import os, statistics, subprocess, sys
a, b, runs, config, page, url = sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:]

def cpu_ms(cmd):
    """User + system CPU of one whole run, in ms (the child's rusage)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}")
    return (ru.ru_utime + ru.ru_stime) * 1000

for name, args in (("extract FILE", ["extract", page]), ("check-url", ["check-url", url])):
    ta, tb, ratios = [], [], []
    for i in range(runs + 1):
        x = cpu_ms([a, "--config", config, *args])
        y = cpu_ms([b, "--config", config, *args])
        if i:  # the first pair warms the page cache
            ta.append(x); tb.append(y); ratios.append(x / y)
    print(f"{name:13} A {statistics.median(ta):6.1f} ms  B {statistics.median(tb):6.1f} ms  "
          f"A/B {statistics.median(ratios):.3f} (median of {runs} pairs; "
          f"A min {min(ta):.1f} max {max(ta):.1f})")
PY

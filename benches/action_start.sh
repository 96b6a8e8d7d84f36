#!/usr/bin/env bash
# Time from the start of an Action job to the crawl's first request on a
# cache miss, two ways in the same run:
#   A  the release asset: scripts/install.sh downloads the tarball for this
#      machine from a (fake, local) release and checks it against SHA256SUMS
#   B  the build from source, what every cache miss did before release
#      binaries: `cargo build --release --locked` of the action's sources in
#      a cold target folder (the action's `from-source: true`)
# Each run is action.yml through tests/scripts/gha_emulate.py in a fresh
# repository, crawling a made-up host served on 127.0.0.1 through an HTTP
# proxy whose log gives the first request's time. B runs once (it takes
# minutes, all of them compiling); the binary it builds is what A's release
# holds. A runs RUNS times (default 5): its median, min and max are printed,
# and the ratio B / median A.
#
#   benches/action_start.sh
#
# Environment: RUNS (default 5); BIN=path skips B and puts that binary in
# A's release (A alone, no ratio). Needs bash, git, python3 with PyYAML, jq,
# curl, tar, and cargo (B).
set -euo pipefail

# lib.sh gives the runs a HOME of their own: keep cargo's and rustup's.
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
set +e
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/../tests/scripts/lib.sh"
set -e
runs=${RUNS:-5}

A=$T/action
mkdir -p "$A"
# What a runner downloads for `uses: OWNER/REPO@ref`: the repository (the
# parts a build reads).
cp -R "$ROOT/action.yml" "$ROOT/Cargo.toml" "$ROOT/Cargo.lock" "$ROOT/src" "$ROOT/scripts" "$ROOT/benches" "$A/"

# job NAME [input=value ...]: one emulated job with a cache miss, in a fresh
# crawl_world; prints the seconds from its start to the first crawl request.
job() {
	local name=$1 t0 rc=0
	shift
	crawl_world "$name" >&2
	local a=(--input max-duration=20s --input max-pages=6 --input min-lastmod= --input keep-queue=false)
	for kv in "$@"; do a+=(--input "$kv"); done
	t0=$(date +%s.%N)
	(cd "$REPO" && "$PY" "$ROOT/tests/scripts/gha_emulate.py" "$A/action.yml" --workspace "$REPO" \
		--summary "$W/summary.md" "${a[@]}") >"$W/out.json" 2>"$W/job.log" || rc=$?
	stop_servers
	if [ "$rc" -ne 0 ]; then
		echo "job $name failed ($rc):" >&2
		tail -n 30 "$W/job.log" >&2
		exit 1
	fi
	echo "  $name: $(grep '^Binary:' "$W/summary.md")" >&2
	first_request "$PROXY_LOG" "$t0"
}

if [ -n "${BIN-}" ]; then
	bin=$BIN
	b=
else
	echo "B: cold cargo build --release --locked, then the crawl (minutes)..." >&2
	export CARGO_TARGET_DIR=$T/cold-target
	b=$(job build from-source=true)
	unset CARGO_TARGET_DIR
	bin=$T/cold-target/release/scraper
fi

fake_release "$T/rel" "$VERSION" "$bin"
times=()
for i in $(seq 1 "$runs"); do
	# Every job stops the servers it leaves behind: the release server too.
	serve "$T/rel"
	export SCRAPER_DOWNLOAD_BASE=$URL
	t=$(job "asset-$i")
	[ "$t" != none ] || { echo "asset-$i: no crawl request" >&2; exit 1; }
	times+=("$t")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(printf '%s\n' "$sorted" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
printf 'A release asset:  first request %s s after the job started (median of %s; min %s, max %s)\n' \
	"$median" "$runs" "$(printf '%s\n' "$sorted" | head -n 1)" "$(printf '%s\n' "$sorted" | tail -n 1)"
if [ -n "$b" ]; then
	printf 'B build (cold):   first request %s s after the job started (one run)\n' "$b"
	awk -v a="$median" -v b="$b" 'BEGIN { printf "B / A = %.0f\n", b / a }'
fi

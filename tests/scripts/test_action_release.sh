#!/usr/bin/env bash
# action.yml on a cache miss, run the way a runner runs it
# (tests/scripts/gha_emulate.py): the binary comes from a fake release served
# on 127.0.0.1 with no cargo on PATH, a stale cached binary is replaced, the
# version is checked against the action's ref, a missing asset is built from
# the action's sources, and this build's real binary from the fake release
# crawls a local site (the time from the job's start to its first request).
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# The action as a user's workflow downloads it (lib.sh: copy_action, emulate, out, step_out).
copy_action

# --- 1. a cache miss: the binary comes from the release, no cargo anywhere
new_world release
REL=$T/rel
fake_release "$REL" "$VERSION" "$FAKE"
serve "$REL" "$W/requests"
export SCRAPER_DOWNLOAD_BASE=$URL
SHIM=$W/shim
mkdir -p "$SHIM"
printf '#!/bin/sh\necho "$*" >>%s/cargo-called\nexit 101\n' "$W" >"$SHIM/cargo"
chmod +x "$SHIM/cargo"
PATH_BEFORE=$PATH
export PATH="$SHIM:$PATH"
: >"$W/summary.md"
t0=$(date +%s.%N)
FAKE_STARTED=$W/started CACHED='' emulate miss max-pages=10
first=$(cat "$W/started" 2>/dev/null || echo "$t0")
secs=$(awk -v a="$t0" -v b="$first" 'BEGIN { printf "%.2f", b - a }')
check "action run succeeds (got $RC)" [ "$RC" -eq 0 ] &&
	check "binary-source is release-asset" [ "$(out miss binary-source)" = release-asset ] &&
	check "the asset for this machine was downloaded" grep -q " GET /v$VERSION/scraper-$VERSION-$(this_target).tar.gz$" "$W/requests" &&
	check "SHA256SUMS too" grep -q " GET /v$VERSION/SHA256SUMS$" "$W/requests" &&
	check "installed under the cache key's folder" [ -x "$HOME/.cache/scraper-action/$(step_out miss bin hash)/scraper" ] &&
	check "cargo never called" [ ! -e "$W/cargo-called" ] &&
	check "the crawl ran with it" [ "$(out miss shard)" != "" ] &&
	check "summary names the release asset" contains "$W/summary.md" "^Binary: \`scraper $VERSION\` from the release asset (SHA-256 checked against SHA256SUMS from $URL), ready in [0-9]* s.$" &&
	ok "on a cache miss the action installs the release asset (no cargo) and crawls with it; job start to crawl start: $secs s"
[ "$RC" -eq 0 ] || cat "$W/miss.log"

# A cached binary of another version is replaced from the release.
printf '#!/bin/sh\necho "scraper 0.0.1"\n' >"$W/old-scraper"
chmod +x "$W/old-scraper"
CACHED=$W/old-scraper emulate stale
check "stale cache: run succeeds (got $RC)" [ "$RC" -eq 0 ] &&
	check "reinstalled from the release" [ "$(out stale binary-source)" = release-asset ] &&
	check "with a warning" contains "$W/stale.log" "::warning::the cached binary says 'scraper 0.0.1'" &&
	ok "a cached binary whose --version is not the action's version is replaced"

# The ref the action was called at must agree with its version.
GH="action_ref=v9.9.9" emulate badref
check "a v9.9.9 ref with version $VERSION fails (got $RC)" [ "$RC" -ne 0 ] &&
	check "and says why" contains "$W/badref.log" "the action was called at v9.9.9 but its Cargo.toml says version $VERSION" &&
	check "no crawl" [ "$(out badref run-id)" = "" ] &&
	GH="action_ref=v${VERSION%%.*} action_repository=me/scraper" emulate goodref &&
	check "a v${VERSION%%.*} ref is this version's major (got $RC)" [ "$RC" -eq 0 ] &&
	ok "the version is checked against the action's ref (v${VERSION%%.*} passes, v9.9.9 fails)"

# No asset for this version: built from the action's sources (a cargo shim that builds).
mkdir -p "$T/empty"
serve "$T/empty"
cat >"$SHIM/cargo" <<SH
#!/bin/sh
echo "\$*" >>"$W/cargo-called"
while [ \$# -gt 0 ]; do case "\$1" in --target-dir) dir=\$2; shift 2 ;; *) shift ;; esac; done
mkdir -p "\$dir/release" && cp "$FAKE" "\$dir/release/scraper"
SH
SCRAPER_DOWNLOAD_BASE=$URL CACHED='' emulate built
check "no asset: run succeeds (got $RC)" [ "$RC" -eq 0 ] &&
	check "binary-source is built" [ "$(out built binary-source)" = built ] &&
	check "with cargo build --release --locked on the action's sources" grep -q "^build --release --locked --manifest-path $A/Cargo.toml " "$W/cargo-called" &&
	check "summary says built" contains "$W/summary.md" "from a build from source (cargo build --release --locked)" &&
	ok "without a release asset the action builds from its own sources and says so"
export PATH=$PATH_BEFORE
unset SCRAPER_DOWNLOAD_BASE

# --- 2. the real binary (this build's) from a fake release, crawling a local
# site: the time from the job's start to the crawl's first request
if [ -n "${SCRAPER_REAL_BIN-}" ]; then
	crawl_world real
	# Without its line tables: a tenth of the debug binary's size, the same code.
	real=$T/scraper-real
	strip -o "$real" "$SCRAPER_REAL_BIN" 2>/dev/null || cp "$SCRAPER_REAL_BIN" "$real"
	fake_release "$T/real-rel" "$VERSION" "$real" "$(this_target)"
	serve "$T/real-rel"
	export SCRAPER_DOWNLOAD_BASE=$URL PATH="$SHIM:$PATH"
	rm -f "$W/cargo-called"
	: >"$W/summary.md"
	t0=$(date +%s.%N)
	CACHED='' emulate real max-duration=20s max-pages=6 min-lastmod= keep-queue=false
	secs=$(first_request "$PROXY_LOG" "$t0")
	check "real crawl succeeds (got $RC)" [ "$RC" -eq 0 ] &&
		check "binary from the release asset" [ "$(out real binary-source)" = release-asset ] &&
		check "cargo never called" [ ! -e "$W/cargo-called" ] &&
		check "robots.txt asked first" [ "$(awk '$3 ~ /news\.test/ { print $3; exit }' "$PROXY_LOG")" = "http://news.test/robots.txt" ] &&
		check "articles stored ($(out real articles-stored))" [ "$(out real articles-stored)" -ge 1 ] &&
		ok "a cache miss installs this build's scraper from the fake release and crawls a local site with it; first crawl request $secs s after the job started"
	[ "$RC" -eq 0 ] || tail -n 30 "$W/real.log"
	export PATH=$PATH_BEFORE
	unset SCRAPER_DOWNLOAD_BASE http_proxy no_proxy
else
	note "SCRAPER_REAL_BIN not set (tests/it/automation/mod.rs sets it): the real-binary run is skipped"
fi

summary

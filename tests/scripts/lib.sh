#!/usr/bin/env bash
# shellcheck disable=SC2034 # variables set here are read by the tests that source this file
# Helpers shared by the automation tests: a temporary repository that pushes
# to a local bare remote, the fake scraper, and small assertions.
# Sourced, not run. Everything lives under one temp folder removed at exit.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
FAKE=$ROOT/tests/scripts/fake-scraper.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/scraper-automation.XXXXXX")
SERVERS=
stop_servers() {
	local pid
	for pid in $SERVERS; do kill "$pid" 2>/dev/null || true; done
	for pid in $SERVERS; do wait "$pid" 2>/dev/null || true; done
	SERVERS=
}
trap 'stop_servers; rm -rf "$T"' EXIT
# The interpreter itself, not a version manager's shim (a shim costs a second per call under load).
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || command -v python3)
# Tools pip installed for that interpreter (actionlint, zizmor), also without the shim.
PY_SCRIPTS=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null || true)
if [ -n "$PY_SCRIPTS" ] && [ -d "$PY_SCRIPTS" ]; then PATH=$PY_SCRIPTS:$PATH; fi
PASSED=0
FAILED=0
# The crate's version: what the installer installs by default and what the
# fake scraper says it is (`scraper --version`).
VERSION=$(sh "$ROOT/scripts/install.sh" --print-version)
export FAKE_VERSION=$VERSION
export GIT_CONFIG_NOSYSTEM=1 HOME="$T/home"
mkdir -p "$HOME"
git config --global init.defaultBranch main
git config --global user.name "Test Person"
git config --global user.email "test@example.test"
git config --global advice.detachedHead false
unset GITHUB_ACTIONS GITHUB_OUTPUT GITHUB_STEP_SUMMARY COMMIT BUILD_DATASET PUBLISH SCRAPER_BIN \
	MAX_DURATION MAX_PAGES MIN_LASTMOD MAX_HITS CONFIG DATA_DIR DIST_DIR REPO_DIR LOCK_DIR COMMIT_AUTHOR \
	GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL HF_TOKEN

note() { printf '  %s\n' "$*"; }
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	FAILED=$((FAILED + 1))
	return 1
}
ok() {
	printf 'ok: %s\n' "$*"
	PASSED=$((PASSED + 1))
}
# check DESCRIPTION COMMAND...: run COMMAND, count a failure with the description.
check() {
	local what=$1
	shift
	if "$@"; then return 0; fi
	fail "$what"
}
contains() { grep -q -e "$2" "$1" 2>/dev/null; }
summary() {
	printf '%s passed, %s failed\n' "$PASSED" "$FAILED"
	[ "$FAILED" -eq 0 ]
}

# new_world NAME: a bare remote $T/NAME/remote.git and a clone $T/NAME/repo with
# the project's layout (scripts/daily.sh and scripts/publish.sh copied in, a config.yml).
new_world() {
	W=$T/$1
	mkdir -p "$W"
	git init --quiet --bare "$W/remote.git"
	git clone --quiet "$W/remote.git" "$W/repo" 2>/dev/null
	mkdir -p "$W/repo/scripts" "$W/repo/data/articles" "$W/repo/data/state"
	cp "$ROOT/scripts/daily.sh" "$W/repo/scripts/daily.sh"
	cp "$ROOT/.gitignore" "$W/repo/.gitignore"
	cp "$ROOT/scripts/publish.sh" "$W/repo/scripts/publish.sh"
	echo "crawl: {}" >"$W/repo/config.yml"
	touch "$W/repo/data/articles/.keep"
	(cd "$W/repo" && git add -A && git commit --quiet -m "project" && git push --quiet origin main 2>/dev/null)
	REPO=$W/repo
	REMOTE=$W/remote.git
}

# other_clone NAME: a second clone of the world's remote (another machine).
other_clone() {
	git clone --quiet "$REMOTE" "$W/$1" 2>/dev/null
	printf '%s\n' "$W/$1"
}

# daily [VAR=value ...]: run the repo's daily.sh from / with the fake scraper.
# Output goes to $W/out; the exit status is in $RC.
daily() {
	RC=0
	(cd / && env SCRAPER_BIN="$FAKE" PUSH_BACKOFF=0 "$@" bash "$REPO/scripts/daily.sh") >"$W/out" 2>&1 || RC=$?
}

remote_files() { git --git-dir="$REMOTE" ls-tree -r --name-only main; }
remote_count() { git --git-dir="$REMOTE" rev-list --count main; }

# serve DIR [LOG]: tests/scripts/serve.py on 127.0.0.1 for DIR (and as a proxy
# for made-up hosts under DIR/<host>/); sets URL. Stopped at exit.
serve() {
	local portfile
	portfile=$T/port.$RANDOM$RANDOM
	if [ -n "${2-}" ]; then
		"$PY" "$ROOT/tests/scripts/serve.py" "$1" "$portfile" --log "$2" &
	else
		"$PY" "$ROOT/tests/scripts/serve.py" "$1" "$portfile" &
	fi
	SERVERS="$SERVERS $!"
	local n=0
	while [ ! -s "$portfile" ]; do
		n=$((n + 1))
		[ "$n" -lt 200 ] || { fail "serve.py did not start"; return 1; }
		sleep 0.05
	done
	URL=http://127.0.0.1:$(cat "$portfile")
}

# A port on 127.0.0.1 that nothing listens on.
closed_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# The release target of this machine, as the release workflow names them.
this_target() {
	local arch
	case "$(uname -m)" in x86_64 | amd64) arch=x86_64 ;; aarch64 | arm64) arch=aarch64 ;; *) arch=unknown ;; esac
	case "$(uname -s)" in
	Linux) echo "$arch-unknown-linux-musl" ;;
	Darwin) [ "$(sysctl -in sysctl.proc_translated 2>/dev/null)" = 1 ] && arch=aarch64; echo "$arch-apple-darwin" ;;
	*) echo "unknown" ;;
	esac
}
RELEASE_TARGETS="x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin"

# fake_release ROOT VERSION [BIN [TARGETS]]: ROOT/v<VERSION>/ as the release
# workflow lays it out: scraper-<VERSION>-<target>.tar.gz for every target
# (or those in TARGETS), each with `scraper` at its root, and SHA256SUMS. The
# binary is BIN, or a stand-in that says `scraper <VERSION>` to --version and
# its own target to `which-target`.
fake_release() {
	local dir=$1/v$2 t
	mkdir -p "$dir"
	for t in ${4:-$RELEASE_TARGETS}; do
		mkdir -p "$T/pack/$t"
		if [ -n "${3-}" ]; then
			cp "$3" "$T/pack/$t/scraper"
		else
			# shellcheck disable=SC2016 # the stand-in's own $1
			printf '#!/bin/sh\ncase "$1" in --version) echo "scraper %s" ;; which-target) echo "%s" ;; esac\n' "$2" "$t" >"$T/pack/$t/scraper"
		fi
		chmod 755 "$T/pack/$t/scraper"
		tar -C "$T/pack/$t" -cf - scraper | gzip -1 >"$dir/scraper-$2-$t.tar.gz"
		rm -rf "$T/pack/$t"
	done
	(cd "$dir" && sha256sum scraper-*.tar.gz >SHA256SUMS)
}

# crawl_world NAME: a repository $W/repo whose config.yml crawls one made-up
# host, news.test (robots.txt, a front page, two articles), served from
# $W/web through serve.py as an HTTP proxy; sets URL, PROXY_LOG, and exports
# http_proxy (and no_proxy for 127.0.0.1, so downloads from the fake release
# server go direct). For runs of the real binary.
crawl_world() {
	new_world "$1"
	local site=$W/web/news.test n
	mkdir -p "$site/2026/12"
	printf 'User-agent: *\nAllow: /\n' >"$site/robots.txt"
	printf '<html><head><title>News</title></head><body><h1>News</h1><a href="/2026/12/01.html">OpenAI releases a model</a> <a href="/2026/12/02.html">DeepMind research</a></body></html>\n' >"$site/index.html"
	for n in 01 02; do
		printf '<html><head><meta property="og:type" content="article"><meta property="article:published_time" content="2026-12-%sT08:00:00Z"><title>AI story %s</title></head><body><article><h1>AI story %s about a large language model</h1>%s</article></body></html>\n' \
			"$n" "$n" "$n" "$(for _ in 1 2 3 4 5 6; do printf '<p>The artificial intelligence lab OpenAI said its new large language model improves machine learning research, and DeepMind published training results for the AI model the same week.</p>'; done)" \
			>"$site/2026/12/$n.html"
	done
	printf 'keywords:\n  targets: [ai, model, language model, training, research]\n  strong_targets: [AI, artificial intelligence, large language model, machine learning, OpenAI, DeepMind]\nsources:\n  - {host: news.test, seeds: [http://news.test/]}\ncrawl:\n  min_host_gap: 30ms\n  request_timeout: 5s\n  user_agent: "scraper-test (+http://example.invalid)"\n' >"$REPO/config.yml"
	(cd "$REPO" && git add -A && git commit --quiet -m config && git push --quiet origin main 2>/dev/null)
	PROXY_LOG=$W/proxy.log
	serve "$W/web" "$PROXY_LOG"
	export http_proxy=$URL no_proxy=127.0.0.1,localhost
}

# first_request LOG T0: seconds from T0 (date +%s.%N) to the first request LOG
# recorded for news.test, or "none".
first_request() {
	awk -v t0="$2" '$3 ~ /^http:\/\/news\.test\// { printf "%.2f\n", $1 - t0; found = 1; exit } END { if (!found) print "none" }' "$1" 2>/dev/null || echo none
}

# The action as a user's workflow downloads it: its own folder ($A), apart from the workspace.
copy_action() {
	A=$T/action
	mkdir -p "$A"
	cp -R "$ROOT/action.yml" "$ROOT/Cargo.toml" "$ROOT/Cargo.lock" "$ROOT/src" "$ROOT/scripts" "$A/"
}

# emulate NAME [input=value ...]: run the action in $REPO; outputs in $W/NAME.json.
# The binary cache hits with the fake scraper unless CACHED names another
# file (empty: a miss); GH holds extra github context (`action_ref=v1`).
emulate() {
	local name=$1
	shift
	set -- "$@"
	local a=()
	for kv in "$@"; do a+=(--input "$kv"); done
	if [ -n "${CACHED-$FAKE}" ]; then a+=(--cache "scraper-bin-=${CACHED-$FAKE}"); fi
	for kv in ${GH-}; do a+=(--github "$kv"); done
	RC=0
	(cd "$REPO" && "$PY" "$ROOT/tests/scripts/gha_emulate.py" "$A/action.yml" --workspace "$REPO" \
		--summary "$W/summary.md" --steps-json "$W/$name.steps" "${a[@]}") \
		>"$W/$name.json" 2>"$W/$name.log" || RC=$?
}
out() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$W/$1.json" "$2"; }
step_out() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["outputs"].get(sys.argv[3], ""))' "$W/$1.steps" "$2" "$3"; }

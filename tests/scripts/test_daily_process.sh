#!/usr/bin/env bash
# scripts/daily.sh as a process: the lock (a second run refuses, a stale lock is
# cleared) and signals passed on to the crawler.
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# --- 9. never twice at once; a stale lock is cleared
new_world lock
(
	set -m
	cd / && SCRAPER_BIN="$FAKE" FAKE_SLEEP=8 bash "$REPO/scripts/daily.sh" >"$W/first" 2>&1
) &
first=$!
i=0
while [ ! -f "$REPO/.git/scraper-daily.lock/pid" ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
start=$(date +%s)
daily COMMIT=0
took=$(($(date +%s) - start))
check "second daily.sh refuses with 75 (got $RC)" [ "$RC" -eq 75 ] &&
	check "at once (${took}s)" [ "$took" -le 3 ] &&
	check "clear message" contains "$W/out" "another daily.sh is already running" &&
	ok "a second daily.sh exits at once while one runs"
wait "$first"
check "first one finished fine" [ "$?" -eq 0 ]
mkdir -p "$REPO/.git/scraper-daily.lock"
sh -c 'echo $$ >"$1"' sh "$REPO/.git/scraper-daily.lock/pid" # a PID that has exited
daily COMMIT=0
check "stale lock cleared (got $RC)" [ "$RC" -eq 0 ] && check "said so" contains "$W/out" "removing a stale lock" &&
	ok "a lock left by a dead process is cleared"

# --- 10. signals reach the crawler once each; what it saved is committed
# A job started in the background of a non-interactive shell inherits SIGINT
# as ignored, and bash cannot trap a signal ignored on entry; GNU env can put
# it back to the default for daily.sh, whoever runs these tests.
RESET_INT=
if env --default-signal=INT true 2>/dev/null; then RESET_INT=--default-signal=INT; fi
new_world signals
# Start daily.sh in the background (PID in $pid) with a 20 s fake crawl for
# run id $1; further arguments are extra environment settings.
launch() {
	local run=$1
	shift
	: >"$W/signals"
	(
		set -m
		cd / && exec env ${RESET_INT:+"$RESET_INT"} "$@" SCRAPER_BIN="$FAKE" FAKE_SLEEP=20 FAKE_SIGNALS="$W/signals" COMMIT=1 PUSH_BACKOFF=0 FAKE_RUN_ID="$run" bash "$REPO/scripts/daily.sh" >"$W/out" 2>&1
	) &
	pid=$!
}
# Wait (30 s at most) until the crawl has started.
started() {
	i=0
	while ! contains "$REPO/data/state/crawl.log" run_start && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.3
}
sig_run() {
	launch "$1"
	started
}
sig_run 20261129T063700Z-1111
kill -INT "$pid"
RC=0
wait "$pid" || RC=$?
check "SIGINT: daily exits 130 (got $RC)" [ "$RC" -eq 130 ] &&
	check "crawler got exactly one INT" [ "$(tr '\n' ' ' <"$W/signals")" = "INT " ] &&
	check "interrupted run committed" remote_files | grep -q 1111.jsonl.zst &&
	ok "SIGINT is passed to the crawler once and the interrupted run is committed"
sig_run 20261129T073700Z-2222
kill -TERM "$pid"
RC=0
wait "$pid" || RC=$?
check "SIGTERM: 130 (got $RC)" [ "$RC" -eq 130 ] && check "crawler got TERM" [ "$(tr '\n' ' ' <"$W/signals")" = "TERM " ] &&
	ok "SIGTERM is passed to the crawler too"

# A signal while daily.sh still pulls is not lost: the run stops with 130
# once the fetch ends, instead of crawling for 20 s. A `git` that takes 2 s
# to fetch holds daily.sh in the pull while the signal comes.
mkdir -p "$W/slowgit"
real_git=$(command -v git)
# shellcheck disable=SC2016 # $1 and $@ belong to the wrapper, not to us
printf '#!/bin/sh\nif [ "$1" = fetch ]; then : >"%s"; sleep 2; fi\nexec "%s" "$@"\n' \
	"$W/fetching" "$real_git" >"$W/slowgit/git"
chmod +x "$W/slowgit/git"
rm -f "$W/fetching"
launch 20261129T093700Z-4444 PATH="$W/slowgit:$PATH"
i=0
while [ ! -f "$W/fetching" ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
start=$(date +%s)
kill -INT "$pid"
RC=0
wait "$pid" || RC=$?
took=$(($(date +%s) - start))
check "early SIGINT: 130 (got $RC)" [ "$RC" -eq 130 ] &&
	check "stopped after the fetch (${took}s)" [ "$took" -le 10 ] &&
	check "the crawler never started" [ ! -s "$W/signals" ] &&
	check "said so" contains "$W/out" "interrupted before the crawl started" &&
	ok "a signal during the pull is not lost: the run stops before crawling"

# GitHub's cancel: SIGINT, then SIGTERM while the crawler is still saving.
launch 20261129T083700Z-3333 FAKE_GRACE=10
started
kill -INT "$pid"
sleep 0.5
kill -TERM "$pid"
RC=0
wait "$pid" || RC=$?
check "INT then TERM: 130 (got $RC)" [ "$RC" -eq 130 ] &&
	check "crawler got INT then TERM, once each" [ "$(tr '\n' ' ' <"$W/signals")" = "INT TERM " ] &&
	check "committed" remote_files | grep -q 3333.jsonl.zst &&
	ok "a cancel (SIGINT, then SIGTERM) reaches the crawler as two signals, and what it saved is committed"

summary

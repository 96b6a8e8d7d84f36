#!/usr/bin/env bash
# scripts/daily.sh: one incremental, time-boxed crawl, then (optionally) commit
# the new shard and state, push, build the dataset and publish it.
#
# Used by the daily GitHub workflow (through action.yml), by launchd and by
# cron. Runs with macOS's bash 3.2 as well as Linux bash, from any working
# directory. Only one daily.sh runs per repository at a time.
#
# Environment (all optional):
#   MAX_DURATION=40m   MAX_PAGES=4000   MIN_LASTMOD=auto  crawl limits; set one
#                      to the empty string to leave that flag out
#   MAX_HITS=          stop after storing this many articles (unset: no limit)
#   PARTITION=         `i/N`: crawl only partition i of N (0-based) of the
#                      hosts (`scraper crawl --partition`); unset: the config's
#                      crawl.partition. N copies with i = 0..N-1 may run at the
#                      same time from the same state and push in any order.
#   CONFIG=config.yml  DATA_DIR=data  DIST_DIR=dist    relative paths are taken
#                      from REPO_DIR
#   REPO_DIR           the git repository holding the data (default: the
#                      checkout this script lives in)
#   SCRAPER_BIN        the scraper binary; default: the release binary of this
#                      checkout's version (Cargo.toml), installed once into
#                      target/install/v<version>/ by scripts/install.sh, which
#                      verifies it against the release's SHA256SUMS and builds
#                      it with cargo only when no asset fits or the download
#                      fails (SCRAPER_BUILD_FALLBACK=0: fail instead). To run
#                      the checkout's own code: SCRAPER_BIN=target/release/scraper
#   COMMIT=1           pull before the crawl, then commit the new shard(s) and
#                      state files and push (PUSH=0: commit only)
#   BUILD_DATASET=1    run `scraper build` into DIST_DIR after the crawl
#   PUBLISH=1          then upload DIST_DIR with scripts/publish.sh (needs HF_TOKEN;
#                      the Hub repo from HF_REPO or dataset.hub_repo in the config)
#   UPLOAD_ARCHIVE=1   upload this run's WARC file (crawl.archive, never committed)
#                      to raw/ of that Hub repo with scripts/upload-archive.sh
#   COMMIT_AUTHOR="Name <email>"  or GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL: who
#                      commits (default: git config, else "scraper daily")
#   REMOTE=origin  BRANCH=<current>  PUSH_RETRIES=5  PUSH_BACKOFF=2 (seconds,
#                      doubled each retry, plus jitter)
#   LOCK_DIR           default: <git dir>/scraper-daily.lock, or
#                      DATA_DIR/.daily.lock outside git
#
# With COMMIT=1 the branch is pulled (rebased) before the crawl, so every run
# starts from the latest state, and pushed after it. In GitHub Actions
# (GITHUB_OUTPUT set) it records run_id, shard and, when something was
# committed, commit=<sha> as step outputs.
#
# After the crawl the sources that `scraper health` calls broken or degraded
# are printed (as warnings in GitHub Actions), and the run's health record
# (state/health/<run-id>.json) is committed with the other state files.
#
# Exit status: 0 done; 130 the crawl was interrupted (what it saved is still
# committed; build and publish are skipped); 75 another daily.sh holds the
# lock; 69 an outage: the crawler could reach no host (network, DNS, proxy,
# robots.txt unreachable everywhere), saved nothing and nothing is committed;
# anything else is a failure (a fatal crawl error commits nothing).
#
# SIGINT and SIGTERM are passed on to the crawler, once each, so it can save
# its queue and state (GitHub cancels a job with SIGINT, then SIGTERM).
#
# A push that is rejected because the remote moved on is rebased and retried.
# Every file a run commits is its own (shard, seen segment, consent log, run
# summary state/runs/<run-id>.json, validators state/validators/<run-id>.json,
# listing progress state/listings/<run-id>.json, URL family yields
# state/families/<run-id>.json,
# robots.txt/tdmrep.json cache state/doc_cache/<run-id>.json,
# outbox files state/outbox/<owner>/<run-id>.jsonl) or the removal of a file it
# folded in (older validators, its partition's outbox files), so runs from the
# same state rebase onto each other without conflicts, and their article ids
# come from blocks no other run uses (no renumbering). state/last_run.json is
# this machine's copy of its last run and is no longer committed (a copy that
# older versions committed stays in git as it was and is read as history).
# A conflict can only come from older versions of this script (last_run.json,
# validators.json, doc_cache.json: the later run's copy is taken; next_id: the script stops,
# see die_conflict).

set -eu
set -o pipefail

EX_LOCKED=75
EX_OUTAGE=69

log() { printf '%s daily: %s\n' "$(date -u +%H:%M:%SZ)" "$*" >&2; }
die() {
	local code=1
	case "${1-}" in [0-9] | [0-9][0-9] | [0-9][0-9][0-9])
		code=$1
		shift
		;;
	esac
	if [ "${GITHUB_ACTIONS-}" = true ]; then
		printf '::error title=daily.sh::%s\n' "$*" >&2
	fi
	printf '%s daily: error: %s\n' "$(date -u +%H:%M:%SZ)" "$*" >&2
	exit "$code"
}

is_on() {
	case "${1-}" in 1 | true | TRUE | True | yes | on) return 0 ;; *) return 1 ;; esac
}

# Absolute form of $2 taken relative to directory $1 (no need for the path to exist).
abs_path() {
	case "$2" in
	/*) printf '%s\n' "$2" ;;
	*) printf '%s/%s\n' "$1" "${2#./}" ;;
	esac
}

# A flat string or number field of a JSON file, without jq (macOS has none).
# Good enough for last_run.json's top-level scalars; prints nothing if absent.
json_field() {
	[ -f "$1" ] || return 0
	tr -d '\n' <"$1" |
		sed -n "s/.*\"$2\"[[:space:]]*:[[:space:]]*\"\{0,1\}\([^\",}]*\)\"\{0,1\}.*/\1/p" |
		sed 's/^null$//' | head -n 1
}

# ---------------------------------------------------------------- the lock

LOCK_HELD=

lock_owner_alive() {
	local pid=$1 args
	[ -n "$pid" ] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	# A recycled PID running something else is not our lock's owner.
	args=$(ps -o args= -p "$pid" 2>/dev/null || true)
	case "$args" in *daily*) return 0 ;; "") return 0 ;; *) return 1 ;; esac
}

take_lock() {
	local pid tries=0
	mkdir -p "$(dirname "$LOCK_DIR")"
	while ! mkdir "$LOCK_DIR" 2>/dev/null; do
		pid=$(cat "$LOCK_DIR/pid" 2>/dev/null || true)
		if [ -z "$pid" ] && [ "$tries" -lt 3 ]; then
			# The owner has just made the folder and is writing its PID.
			tries=$((tries + 1))
			sleep 1
			continue
		fi
		if lock_owner_alive "$pid"; then
			die "$EX_LOCKED" "another daily.sh is already running (PID $pid, lock $LOCK_DIR); not starting a second one"
		fi
		[ "$tries" -lt 6 ] || die "$EX_LOCKED" "cannot take the lock $LOCK_DIR; remove it if no daily.sh is running"
		tries=$((tries + 1))
		log "removing a stale lock left by PID ${pid:-unknown} ($LOCK_DIR)"
		# Rename first: of two processes clearing the same stale lock only one
		# wins the rename; the other finds no folder and simply retries mkdir.
		if mv "$LOCK_DIR" "$LOCK_DIR.stale.$$" 2>/dev/null; then
			rm -rf "$LOCK_DIR.stale.$$"
		fi
	done
	LOCK_HELD=1
	echo "$$" >"$LOCK_DIR/pid"
}

release_lock() {
	if [ -n "$LOCK_HELD" ]; then
		rm -rf "$LOCK_DIR"
		LOCK_HELD=
	fi
}

# ---------------------------------------------------------------- the crawl

CRAWL_PID=
SIGNALLED=
SIGNALS=0

forward() {
	SIGNALLED=$1
	SIGNALS=$((SIGNALS + 1))
	if [ -n "$CRAWL_PID" ]; then
		log "got SIG$1: asking the crawler (PID $CRAWL_PID) to save its state and stop"
		kill "-$1" "$CRAWL_PID" 2>/dev/null || true
	fi
}

find_binary() {
	if [ -n "${SCRAPER_BIN-}" ]; then
		SCRAPER_BIN=$(abs_path "$START_DIR" "$SCRAPER_BIN")
		[ -x "$SCRAPER_BIN" ] || die "SCRAPER_BIN=$SCRAPER_BIN is not an executable file"
		return
	fi
	# The release binary of this checkout's version, installed once by
	# scripts/install.sh (verified against the release's SHA256SUMS; built
	# with cargo when there is no asset for this machine or version, or the
	# server cannot be reached, unless SCRAPER_BUILD_FALLBACK=0).
	local version line
	version=$(sh "$CODE_DIR/scripts/install.sh" --print-version 2>/dev/null) || version=
	[ -n "$version" ] || die "no version in $CODE_DIR/Cargo.toml; set SCRAPER_BIN"
	SCRAPER_BIN=$CODE_DIR/target/install/v$version/scraper
	if [ -x "$SCRAPER_BIN" ] && [ "$("$SCRAPER_BIN" --version 2>/dev/null | head -n 1)" = "scraper $version" ]; then
		return
	fi
	log "installing scraper $version into $(dirname "$SCRAPER_BIN") (scripts/install.sh)"
	line=$(SCRAPER_BUILD_FALLBACK=${SCRAPER_BUILD_FALLBACK-1} sh "$CODE_DIR/scripts/install.sh" \
		--version "$version" --dir "$(dirname "$SCRAPER_BIN")" </dev/null) ||
		die "no scraper binary: scripts/install.sh failed (see above); set SCRAPER_BIN to use another"
	log "$line"
}

# Runs the crawler in the background (its own process group, so a terminal's
# Ctrl-C reaches it once, through us) and waits for it. Sets CRAWL_RC.
crawl() {
	# Build the argument list in the positional parameters: no arrays, so
	# `set -u` is safe on bash 3.2 even when an optional flag is left out.
	set -- --config "$CONFIG" crawl --data "$DATA_DIR"
	if [ -n "${MAX_DURATION-40m}" ]; then set -- "$@" --max-duration "${MAX_DURATION-40m}"; fi
	if [ -n "${MAX_PAGES-4000}" ]; then set -- "$@" --max-pages "${MAX_PAGES-4000}"; fi
	if [ -n "${MIN_LASTMOD-auto}" ]; then set -- "$@" --min-lastmod "${MIN_LASTMOD-auto}"; fi
	if [ -n "${MAX_HITS-}" ]; then set -- "$@" --max-hits "$MAX_HITS"; fi
	if [ -n "${PARTITION-}" ]; then set -- "$@" --partition "$PARTITION"; fi
	log "crawl: $SCRAPER_BIN $*"
	trap 'forward INT' INT
	trap 'forward TERM' TERM
	set -m
	"$SCRAPER_BIN" "$@" </dev/null &
	CRAWL_PID=$!
	set +m
	# A signal that came before the PID was known.
	if [ -n "$SIGNALLED" ]; then kill "-$SIGNALLED" "$CRAWL_PID" 2>/dev/null || true; fi
	while :; do
		local before=$SIGNALS
		CRAWL_RC=0
		wait "$CRAWL_PID" || CRAWL_RC=$?
		# A trapped signal ends `wait` early; wait again for the real exit.
		if [ "$SIGNALS" != "$before" ] && kill -0 "$CRAWL_PID" 2>/dev/null; then
			continue
		fi
		if [ "$SIGNALS" != "$before" ]; then
			# The crawler exited while we handled the signal: collect its status.
			CRAWL_RC=0
			wait "$CRAWL_PID" 2>/dev/null || CRAWL_RC=$?
			[ "$CRAWL_RC" -ne 127 ] || CRAWL_RC=130
		fi
		break
	done
	CRAWL_PID=
	# Committing and pushing take seconds: finish them rather than leave a
	# half-done rebase behind; the script then exits 130.
	trap 'hold INT' INT
	trap 'hold TERM' TERM
}

early() {
	SIGNALLED=$1
	log "got SIG$1 before the crawl: stopping once the current step ends"
}

hold() {
	SIGNALLED=$1
	log "got SIG$1: finishing the commit and push first, then stopping"
}

# ---------------------------------------------------------------- git

git_identity() {
	if [ -n "${COMMIT_AUTHOR-}" ]; then
		GIT_AUTHOR_NAME=$(printf '%s' "$COMMIT_AUTHOR" | sed 's/[[:space:]]*<.*//')
		GIT_AUTHOR_EMAIL=$(printf '%s' "$COMMIT_AUTHOR" | sed -n 's/.*<\(.*\)>.*/\1/p')
		if [ -z "$GIT_AUTHOR_NAME" ] || [ -z "$GIT_AUTHOR_EMAIL" ]; then
			die "COMMIT_AUTHOR must look like 'Name <email>', got: $COMMIT_AUTHOR"
		fi
	fi
	if [ -z "${GIT_AUTHOR_NAME-}" ]; then
		GIT_AUTHOR_NAME=$(git config user.name || true)
		[ -n "$GIT_AUTHOR_NAME" ] || GIT_AUTHOR_NAME="scraper daily"
	fi
	if [ -z "${GIT_AUTHOR_EMAIL-}" ]; then
		GIT_AUTHOR_EMAIL=$(git config user.email || true)
		[ -n "$GIT_AUTHOR_EMAIL" ] || GIT_AUTHOR_EMAIL="scraper-daily@localhost"
	fi
	GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME}
	GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
	export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
}

# Bring the branch up to date before crawling, so the run starts from the
# latest state ("pull before, push after").
git_pull_before() {
	if ! git rev-parse --verify --quiet "refs/remotes/$REMOTE/$BRANCH" >/dev/null &&
		! git ls-remote --exit-code --heads "$REMOTE" "$BRANCH" >/dev/null 2>&1; then
		log "branch $BRANCH is not on $REMOTE yet: nothing to pull"
		return 0
	fi
	log "pulling $REMOTE/$BRANCH before the crawl"
	git fetch --quiet "$REMOTE" "$BRANCH" || die "git fetch $REMOTE $BRANCH failed"
	rebase_onto "$REMOTE/$BRANCH"
}

# The state files that every run rewrites and that may be settled by taking the later run's copy.
resolvable() {
	case "$1" in
	"$STATE_REL/last_run.json" | "$STATE_REL/validators.json" | "$STATE_REL/doc_cache.json") return 0 ;;
	*) return 1 ;;
	esac
}

die_conflict() {
	local files=$1
	git rebase --abort >/dev/null 2>&1 || true
	case " $files " in
	*" $STATE_REL/next_id "*)
		die "push conflict on $STATE_REL/next_id: another machine ran a crawl from the same state and both runs handed out article ids from the same number. Taking either value would give two articles one id, so nothing was pushed. Your commit is kept locally ($(git rev-parse --short HEAD)). To recover: git reset --hard $REMOTE/$BRANCH (this run's shard, seen segment and consent log stay as untracked files); then either delete them to re-crawl those pages, or give the shard new ids with \`scraper renumber --data $DATA_DIR $DATA_DIR/articles/<run-id>.jsonl.zst\` and commit it with its seen segment, consent log and $STATE_REL/next_id; then run again."
		;;
	esac
	die "rebase onto $REMOTE/$BRANCH conflicts in: $files. Nothing was pushed; the local commit is kept ($(git rev-parse --short HEAD)). Resolve by hand (git pull --rebase), then push."
}

rebasing() {
	[ -d "$(git rev-parse --git-path rebase-merge)" ] || [ -d "$(git rev-parse --git-path rebase-apply)" ]
}

# Rebase the current branch onto $1, settling conflicts limited to rewritten state files.
rebase_onto() {
	local upstream=$1 files f unsafe ours theirs side out
	if out=$(git rebase --autostash "$upstream" 2>&1); then
		return 0
	fi
	rebasing || die "git rebase onto $upstream failed: $out"
	local steps=0
	while rebasing; do
		steps=$((steps + 1))
		[ "$steps" -le 200 ] || die_conflict "(the rebase does not move on)"
		files=$(git diff --name-only --diff-filter=U | tr '\n' ' ')
		files=${files% }
		if [ -z "$files" ]; then
			# Stopped without conflicts (e.g. an empty commit): go on.
			GIT_EDITOR=true git rebase --continue >/dev/null 2>&1 ||
				git rebase --skip >/dev/null 2>&1 || die_conflict "(rebase stopped: $(git status --short | head -n 5 | tr '\n' ' '))"
			continue
		fi
		unsafe=
		for f in $files; do resolvable "$f" || unsafe=1; done
		[ -z "$unsafe" ] || die_conflict "$files"
		# During a rebase stage 2 is the upstream side, stage 3 our commit.
		ours=$(git show ":2:$STATE_REL/last_run.json" 2>/dev/null | tr -d '\n' |
			sed -n 's/.*"run_id"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
		theirs=$(git show ":3:$STATE_REL/last_run.json" 2>/dev/null | tr -d '\n' |
			sed -n 's/.*"run_id"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
		if [ -z "$ours" ] || [ -z "$theirs" ]; then
			# Without both run ids there is no telling which run is later.
			die_conflict "$files"
		fi
		if [[ "$theirs" > "$ours" ]]; then side=--theirs; else side=--ours; fi
		log "rebase: $files changed on both sides; keeping the later run's copy (${side#--}: $ours vs $theirs)"
		for f in $files; do
			git checkout "$side" -- "$f" && git add -- "$f"
		done
		GIT_EDITOR=true git rebase --continue >/dev/null 2>&1 || true
	done
}

commit_and_push() {
	local run_id stored fetched stopped msg attempt delay f
	# The new shard(s) and the state files that are committed; never
	# frontier*.jsonl, last_run.json, crawl.log, the locks or temporary files.
	# Only these paths go into the commit, whatever else someone has staged in
	# this checkout. Folders are added with -A: the run may have removed files
	# there (validators it folded in, outbox files it read).
	set --
	for f in "$DATA_DIR"/articles/*.jsonl.zst "$DATA_DIR"/state/seen/*.bin \
		"$DATA_DIR"/state/consent/*.jsonl "$DATA_DIR"/state/health/*.json "$DATA_DIR"/state/runs/*.json; do
		if [ -f "$f" ]; then set -- "$@" "$f"; fi
	done
	if [ $# -gt 0 ]; then git add -- "$@" || die "git add failed"; fi
	for f in "$DATA_DIR/state/validators" "$DATA_DIR/state/listings" "$DATA_DIR/state/families" "$DATA_DIR/state/doc_cache" "$DATA_DIR/state/outbox"; do
		if [ -e "$f" ] || [ -n "$(git ls-files -- "$f")" ]; then
			git add -A -- "$f" || die "git add $f failed"
			set -- "$@" "$f"
		fi
	done
	if [ $# -eq 0 ] || git diff --cached --quiet -- "$@"; then
		log "nothing new to commit"
	else
		run_id=$(json_field "$DATA_DIR/state/last_run.json" run_id)
		stored=$(json_field "$DATA_DIR/state/last_run.json" articles_stored)
		fetched=$(json_field "$DATA_DIR/state/last_run.json" pages_fetched)
		stopped=$(json_field "$DATA_DIR/state/last_run.json" stopped_by)
		msg="data: crawl ${run_id:-run}${PARTITION:+ (partition $PARTITION)}: ${stored:-?} articles from ${fetched:-?} requests (stopped by ${stopped:-?})"
		git commit --quiet --no-verify -m "$msg" -- "$@" || die "git commit failed"
		log "committed $(git rev-parse --short HEAD): $msg"
		COMMITTED=1
	fi
	if ! is_on "${PUSH-1}"; then
		log "PUSH=0: not pushing"
		return 0
	fi
	if [ -z "$(git rev-list -n 1 "$REMOTE/$BRANCH..HEAD" 2>/dev/null || echo unknown)" ]; then
		log "$REMOTE/$BRANCH already has everything"
		return 0
	fi
	attempt=1
	delay=${PUSH_BACKOFF-2}
	while :; do
		if git push --quiet "$REMOTE" "HEAD:refs/heads/$BRANCH"; then
			log "pushed $(git rev-parse --short HEAD) to $REMOTE/$BRANCH"
			COMMITTED=1
			return 0
		fi
		[ "$attempt" -lt "${PUSH_RETRIES-5}" ] || die "push to $REMOTE/$BRANCH failed $attempt times; the commit is kept locally"
		local wait_s=$delay
		if [ "$delay" -gt 0 ]; then wait_s=$((delay + RANDOM % (delay + 1))); fi
		log "push rejected (attempt $attempt); pulling with rebase and retrying in ${wait_s}s"
		sleep "$wait_s"
		git fetch --quiet "$REMOTE" "$BRANCH" || log "git fetch failed; retrying anyway"
		rebase_onto "$REMOTE/$BRANCH"
		attempt=$((attempt + 1))
		delay=$((delay * 2))
	done
}

# This machine's own files (its last run's summary copy, its partitions'
# queues) are never committed: keep them out of `git status` through the
# checkout's own exclude file (nothing committed changes).
local_only() {
	local exclude pattern
	exclude=$(git rev-parse --git-path info/exclude)
	mkdir -p "$(dirname "$exclude")"
	for pattern in "/$STATE_REL/last_run.json" "/$STATE_REL/frontier*.jsonl"; do
		if ! grep -qxF -- "$pattern" "$exclude" 2>/dev/null; then
			printf '%s\n' "$pattern" >>"$exclude" || log "cannot write $exclude"
		fi
	done
}

# This run's WARC file (crawl.archive) to the Hub's raw/ folder with
# UPLOAD_ARCHIVE=1; it is never committed. A failed upload keeps the file in
# DATA_DIR/warc and never fails the run.
upload_archive() {
	local warc="$DATA_DIR/warc/$1.warc.gz"
	[ -n "$1" ] && [ -f "$warc" ] || return 0
	write_output warc "$warc"
	is_on "${UPLOAD_ARCHIVE-}" || return 0
	SCRAPER_CONFIG=$CONFIG "$CODE_DIR/scripts/upload-archive.sh" "$warc" </dev/null ||
		log "archive upload failed; $warc stays on this machine"
}

# Sources that `scraper health` calls broken or degraded after this run, in
# the log (and as warnings on GitHub). A failure here never fails the run.
report_health() {
	local out line
	if ! out=$("$SCRAPER_BIN" --config "$CONFIG" health --data "$DATA_DIR" --problems </dev/null 2>/dev/null); then
		log "scraper health failed; source health not reported"
		return 0
	fi
	printf '%s\n' "$out" | while IFS= read -r line; do
		[ -n "$line" ] || continue
		log "health: $line"
		case "$line" in
		broken* | degraded*)
			if [ "${GITHUB_ACTIONS-}" = true ]; then printf '::warning title=source health::%s\n' "$line" >&2; fi
			;;
		esac
	done
}

write_output() {
	if [ -n "${GITHUB_OUTPUT-}" ]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; fi
}

# ---------------------------------------------------------------- main

main() {
	START_DIR=$PWD
	CODE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P) || die "cannot find the script's folder"
	REPO_DIR=$(cd "${REPO_DIR:-$CODE_DIR}" && pwd -P) || die "REPO_DIR=${REPO_DIR-} is not a folder"
	cd "$REPO_DIR"
	CONFIG=$(abs_path "$REPO_DIR" "${CONFIG:-config.yml}")
	DATA_DIR=${DATA_DIR:-data}
	DATA_DIR=${DATA_DIR%/}
	DIST_DIR=$(abs_path "$REPO_DIR" "${DIST_DIR:-dist}")
	REMOTE=${REMOTE:-origin}
	local in_git=
	if git rev-parse --git-dir >/dev/null 2>&1; then in_git=1; fi

	case "$DATA_DIR" in /*) ;; *) DATA_DIR=$REPO_DIR/${DATA_DIR#./} ;; esac
	# Physical path, so it compares with git's top level (macOS: /tmp is /private/tmp).
	mkdir -p "$DATA_DIR" || die "cannot create the data folder $DATA_DIR"
	DATA_DIR=$(cd "$DATA_DIR" && pwd -P) || die "cannot enter the data folder $DATA_DIR"
	case "${MAX_PAGES-}${PUSH_RETRIES-}${PUSH_BACKOFF-}" in *[!0-9]*) die 2 "MAX_PAGES, PUSH_RETRIES and PUSH_BACKOFF must be whole numbers" ;; esac

	if is_on "${COMMIT-}"; then
		[ -n "$in_git" ] || die "COMMIT=1 but $REPO_DIR is not a git repository"
		case "$DATA_DIR/" in "$(git rev-parse --show-toplevel)/"*) ;; *) die "COMMIT=1 needs DATA_DIR inside the repository ($DATA_DIR)" ;; esac
		STATE_REL=${DATA_DIR#"$(git rev-parse --show-toplevel)/"}/state
		local_only
		if is_on "${PUSH-1}" && ! git remote get-url "$REMOTE" >/dev/null 2>&1; then
			die "COMMIT=1 pushes to the remote '$REMOTE', which this repository does not have (set REMOTE, or PUSH=0)"
		fi
		BRANCH=${BRANCH:-$(git symbolic-ref --quiet --short HEAD || true)}
		[ -n "$BRANCH" ] || die "COMMIT=1 needs a branch checked out (HEAD is detached); set BRANCH"
	fi
	if [ -z "${LOCK_DIR-}" ]; then
		if [ -n "$in_git" ]; then
			LOCK_DIR=$(abs_path "$REPO_DIR" "$(git rev-parse --git-path scraper-daily.lock)")
		else
			LOCK_DIR=$DATA_DIR/.daily.lock
		fi
	fi

	take_lock
	trap release_lock EXIT
	# A signal before the crawl starts (during the pull or the build) must
	# not be lost: bash would otherwise let the foreground git or cargo
	# finish and carry on as if nothing happened.
	trap 'early INT' INT
	trap 'early TERM' TERM

	if is_on "${COMMIT-}"; then
		if rebasing; then
			die "a rebase is in progress in $REPO_DIR (git status); finish or abort it, then run again"
		fi
		git_identity
		git_pull_before
	fi
	find_binary
	if [ -n "$SIGNALLED" ]; then
		log "interrupted before the crawl started: nothing to save"
		exit 130
	fi

	crawl
	case "$CRAWL_RC" in
	0) log "crawl finished" ;;
	130) log "crawl interrupted; its shard and state were saved" ;;
	"$EX_OUTAGE") die "$EX_OUTAGE" "outage: the crawler could reach no host (see its last line above); it saved nothing, so nothing is committed and the next run starts from the same state" ;;
	*) die "$CRAWL_RC" "crawl failed (exit $CRAWL_RC): nothing committed; the data folder is left as it is for the next run" ;;
	esac
	report_health
	write_output run_id "$(json_field "$DATA_DIR/state/last_run.json" run_id)"
	upload_archive "$(json_field "$DATA_DIR/state/last_run.json" run_id)"
	write_output shard "$(json_field "$DATA_DIR/state/last_run.json" shard)"

	if is_on "${COMMIT-}"; then
		COMMITTED=
		commit_and_push
		if [ -n "$COMMITTED" ]; then write_output commit "$(git rev-parse HEAD)"; fi
	fi
	trap - INT TERM
	if [ "$CRAWL_RC" -ne 0 ] || [ -n "$SIGNALLED" ]; then
		log "interrupted: skipping the dataset build and publishing"
		exit 130
	fi
	if is_on "${BUILD_DATASET-}"; then
		log "building the dataset into $DIST_DIR"
		"$SCRAPER_BIN" --config "$CONFIG" build --data "$DATA_DIR" --out "$DIST_DIR" </dev/null ||
			die "scraper build failed"
	fi
	if is_on "${PUBLISH-}"; then
		[ -d "$DIST_DIR" ] || die "PUBLISH=1 but $DIST_DIR does not exist (set BUILD_DATASET=1)"
		log "publishing $DIST_DIR"
		# publish.sh reads HF_TOKEN, HF_REPO (or dataset.hub_repo in the config) and DRY_RUN.
		DIST=$DIST_DIR SCRAPER_CONFIG=$CONFIG "$CODE_DIR/scripts/publish.sh" </dev/null || die "publishing failed"
	fi
	log "done"
}

# Everything runs from main, read whole before it starts: `git pull` may
# replace this file while it runs. (No arguments: everything comes from the environment.)
main

#!/usr/bin/env bash
# End-to-end tests of scripts/daily.sh against the fake scraper, in temporary
# git repositories that push to local bare remotes. No network.
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# --- 1. a run commits exactly the shard and state, and pushes
new_world basic
ARGS=$W/args
daily COMMIT=1 FAKE_RUN_ID=20261129T063700Z-aaaa FAKE_ARGS="$ARGS" GITHUB_OUTPUT="$W/gh_out" \
	COMMIT_AUTHOR="Crawl Bot <bot@example.test>"
if check "first run exits 0 (got $RC)" [ "$RC" -eq 0 ]; then
	files=$(cd "$REPO" && git show --name-only --format= HEAD | sort | tr '\n' ' ')
	want="data/articles/20261129T063700Z-aaaa.jsonl.zst data/state/last_run.json data/state/next_id data/state/seen/20261129T063700Z-aaaa.bin data/state/validators.json "
	check "commit holds only shard and state: [$files]" [ "$files" = "$want" ] &&
		check "remote has the commit" [ "$(remote_count)" -eq 2 ] &&
		check "frontier, crawl.log and the lock stay out" sh -c "! git --git-dir='$REMOTE' ls-tree -r --name-only main | grep -E 'frontier|crawl.log|lock'" &&
		check "author is COMMIT_AUTHOR" [ "$(git --git-dir="$REMOTE" log -1 --format='%an <%ae>' main)" = "Crawl Bot <bot@example.test>" ] &&
		check "message names the run" contains <(git --git-dir="$REMOTE" log -1 --format=%s main) "crawl 20261129T063700Z-aaaa: 2 articles from 123 requests (stopped by max_duration)" &&
		check "default limits passed" [ "$(tr '\n' ' ' <"$ARGS")" = "--config $REPO/config.yml crawl --data $REPO/data --max-duration 40m --max-pages 4000 --min-lastmod auto " ] &&
		check "GITHUB_OUTPUT has commit and shard" contains "$W/gh_out" "^commit=$(git --git-dir="$REMOTE" rev-parse main)$" &&
		check "GITHUB_OUTPUT shard" contains "$W/gh_out" '^shard=20261129T063700Z-aaaa.jsonl.zst$' &&
		check "lock released" [ ! -d "$REPO/.git/scraper-daily.lock" ] &&
		ok "a run commits the new shard and state files and pushes"
else cat "$W/out"; fi

# --- 2. the next run is incremental: a second shard, ids continue
daily COMMIT=1 FAKE_RUN_ID=20261130T063700Z-bbbb
if check "second run exits 0 (got $RC)" [ "$RC" -eq 0 ]; then
	check "two shards on the remote" [ "$(remote_files | grep -c 'jsonl.zst$')" -eq 2 ] &&
		check "next_id continued" [ "$(git --git-dir="$REMOTE" show main:data/state/next_id | head -n 1)" = 5 ] &&
		ok "a second run commits a second shard and continues the ids"
else cat "$W/out"; fi

# --- 3. limits from the environment; an empty one leaves the flag out
: >"$ARGS"
daily COMMIT=0 MAX_DURATION=90s MAX_PAGES=10 MIN_LASTMOD= MAX_HITS=5 FAKE_ARGS="$ARGS" CONFIG=config.yml DATA_DIR=./data
check "overrides run" [ "$RC" -eq 0 ] &&
	check "overrides reach the crawler: $(tr '\n' ' ' <"$ARGS")" [ "$(tr '\n' ' ' <"$ARGS")" = "--config $REPO/config.yml crawl --data $REPO/data --max-duration 90s --max-pages 10 --max-hits 5 " ] &&
	check "COMMIT=0 commits nothing" [ "$(remote_count)" -eq 3 ] &&
	ok "environment overrides reach the crawler; COMMIT=0 leaves git alone"
daily COMMIT=1 MAX_PAGES=lots
check "a non-numeric MAX_PAGES is refused (got $RC)" [ "$RC" -eq 2 ] && ok "bad numbers are refused before anything runs"
(cd "$REPO" && git stash --quiet -u 2>/dev/null; git reset --quiet --hard; git clean -qfdx data >/dev/null)

# --- 4. exit 130 (Ctrl-C, state saved) still commits; exit 1 does not
new_world codes
daily COMMIT=1 FAKE_EXIT=130 FAKE_RUN_ID=20261129T063700Z-cccc
check "interrupted crawl: daily exits 130 (got $RC)" [ "$RC" -eq 130 ] &&
	check "interrupted crawl still commits" remote_files | grep -q 20261129T063700Z-cccc.jsonl.zst &&
	ok "a crawl that exits 130 still has its shard and state committed"
before=$(remote_count)
daily COMMIT=1 FAKE_EXIT=1 BUILD_DATASET=1 FAKE_RUN_ID=20261129T073700Z-dddd
check "fatal crawl: daily fails (got $RC)" [ "$RC" -eq 1 ] &&
	check "fatal crawl commits nothing" [ "$(remote_count)" -eq "$before" ] &&
	check "fatal crawl: nothing built" [ ! -d "$REPO/dist" ] &&
	check "fatal crawl: message" contains "$W/out" "crawl failed (exit 1): nothing committed" &&
	ok "a crawl that exits 1 commits nothing and fails"
# The next good run picks up the shard the failed run left behind.
daily COMMIT=1 FAKE_RUN_ID=20261129T083700Z-eeee
check "after a failure the next run commits both shards" sh -c "git --git-dir='$REMOTE' ls-tree -r --name-only main | grep -c 'T0[78]3700Z-' | grep -qx 4" &&
	ok "shards left by a failed run are committed by the next run"

# --- 5. build and publish switches
new_world build
daily BUILD_DATASET=1 PUBLISH=1 HF_TOKEN=secret PUBLISH_LOG="$W/published"
check "build+publish run (got $RC)" [ "$RC" -eq 0 ] &&
	check "dist built" [ -f "$REPO/dist/README.md" ] &&
	check "publish.sh called with dist and token" contains "$W/published" "published $REPO/dist with token set" &&
	ok "BUILD_DATASET=1 builds dist/, PUBLISH=1 calls scripts/publish.sh"
daily PUBLISH=1 PUBLISH_LOG="$W/published2"
check "PUBLISH without HF_TOKEN fails (got $RC)" [ "$RC" -ne 0 ] && check "message" contains "$W/out" "PUBLISH=1 needs HF_TOKEN" &&
	ok "publishing without HF_TOKEN fails loudly"

# --- 6. a push race: another clone pushes during the crawl; rebase and retry
new_world race
B=$(other_clone b)
cat >"$W/hook.sh" <<HOOK
cd "$B" && echo "readme edit" >>README.md && git add README.md && git commit --quiet -m "docs from elsewhere" && git push --quiet origin main 2>/dev/null
HOOK
daily COMMIT=1 FAKE_HOOK="$W/hook.sh" FAKE_RUN_ID=20261129T063700Z-ffff
if check "race: daily exits 0 (got $RC)" [ "$RC" -eq 0 ]; then
	check "race: remote has both commits, ours on top" [ "$(git --git-dir="$REMOTE" log --format=%s main | head -n 2 | tail -n 1)" = "docs from elsewhere" ] &&
		check "race: our shard landed" remote_files | grep -q ffff.jsonl.zst &&
		check "race: log says it retried" contains "$W/out" "push rejected (attempt 1)" &&
		ok "a push rejected because another clone pushed meanwhile is rebased and lands"
else cat "$W/out"; fi

# --- 7. the remote keeps moving: retries with back-off, then gives up loudly
cat >"$REPO/.git/hooks/pre-push" <<HOOK
#!/usr/bin/env bash
n=\$(cat "$W/pushes" 2>/dev/null || echo 0); n=\$((n + 1)); echo "\$n" >"$W/pushes"
[ "\$n" -le "\$(cat "$W/advance")" ] || exit 0
cd "$B" && git pull --quiet --rebase 2>/dev/null; echo "x\$n" >>README.md && git commit --quiet -am "edit \$n" && git push --quiet origin main 2>/dev/null
exit 0
HOOK
chmod +x "$REPO/.git/hooks/pre-push"
echo 2 >"$W/advance"
daily COMMIT=1 PUSH_RETRIES=4 FAKE_RUN_ID=20261130T063700Z-aaaa
check "moving remote: lands on the 3rd push (got $RC)" [ "$RC" -eq 0 ] && check "3 pushes" [ "$(cat "$W/pushes")" = 3 ] &&
	ok "pushes are retried while the remote moves, and land"
rm -f "$W/pushes"
echo 99 >"$W/advance"
daily COMMIT=1 PUSH_RETRIES=3 FAKE_RUN_ID=20261201T063700Z-aaaa
check "always-moving remote fails (got $RC)" [ "$RC" -eq 1 ] &&
	check "gives up after 3 tries" contains "$W/out" "failed 3 times; the commit is kept locally" &&
	check "local commit kept" [ "$(cd "$REPO" && git log -1 --format=%s)" != "" ] &&
	ok "after PUSH_RETRIES rejected pushes the script fails loudly"
rm -f "$REPO/.git/hooks/pre-push"

# --- 8. two machines crawl from the same state
# 8a. only the other machine handed out ids: last_run.json and validators.json
# conflict and the later run's copy wins; next_id comes through untouched.
new_world state
B=$(other_clone b)
cat >"$W/hook.sh" <<HOOK
cd "$B" && FAKE_HOOK= SCRAPER_BIN="$FAKE" FAKE_RUN_ID=20261129T070000Z-bbbb FAKE_IDS=3 COMMIT=1 PUSH_BACKOFF=0 bash "$B/scripts/daily.sh" >"$W/b_out" 2>&1
HOOK
daily COMMIT=1 FAKE_HOOK="$W/hook.sh" FAKE_IDS=0 FAKE_RUN_ID=20261129T063700Z-aaaa
if check "state-only conflict settles (got $RC)" [ "$RC" -eq 0 ]; then
	check "later run's last_run.json kept" contains <(git --git-dir="$REMOTE" show main:data/state/last_run.json) '"run_id": "20261129T070000Z-bbbb"' &&
		check "later run's validators kept" contains <(git --git-dir="$REMOTE" show main:data/state/validators.json) 20261129T070000Z-bbbb &&
		check "next_id from the run that used ids" [ "$(git --git-dir="$REMOTE" show main:data/state/next_id | head -n 1)" = 4 ] &&
		check "both shards" [ "$(remote_files | grep -c 'jsonl.zst$')" -eq 2 ] &&
		check "log explains" contains "$W/out" "keeping the later run's copy" &&
		ok "a conflict limited to last_run.json/validators.json keeps the later run's files"
else cat "$W/out" "$W/b_out"; fi
# 8b. our run is the later one this time
cat >"$W/hook.sh" <<HOOK
cd "$B" && git pull --quiet --rebase && FAKE_HOOK= SCRAPER_BIN="$FAKE" FAKE_RUN_ID=20261130T050000Z-bbbb FAKE_IDS=0 COMMIT=1 PUSH_BACKOFF=0 bash "$B/scripts/daily.sh" >"$W/b_out" 2>&1
HOOK
daily COMMIT=1 FAKE_HOOK="$W/hook.sh" FAKE_IDS=2 FAKE_RUN_ID=20261130T063700Z-aaaa
check "later local run wins (got $RC)" [ "$RC" -eq 0 ] &&
	check "our last_run.json kept" contains <(git --git-dir="$REMOTE" show main:data/state/last_run.json) '"run_id": "20261130T063700Z-aaaa"' &&
	check "our next_id kept" [ "$(git --git-dir="$REMOTE" show main:data/state/next_id | head -n 1)" = 6 ] &&
	ok "when the local run is the later one its state files are kept"
# 8c. both handed out ids: a real conflict, refused loudly, nothing lost
cat >"$W/hook.sh" <<HOOK
cd "$B" && git pull --quiet --rebase && FAKE_HOOK= SCRAPER_BIN="$FAKE" FAKE_RUN_ID=20261201T050000Z-bbbb FAKE_IDS=3 COMMIT=1 PUSH_BACKOFF=0 bash "$B/scripts/daily.sh" >"$W/b_out" 2>&1
HOOK
before=$(git --git-dir="$REMOTE" rev-parse main)
daily COMMIT=1 FAKE_HOOK="$W/hook.sh" FAKE_IDS=2 FAKE_RUN_ID=20261201T063700Z-aaaa
check "next_id conflict fails (got $RC)" [ "$RC" -eq 1 ] &&
	check "explains the id clash" contains "$W/out" "push conflict on data/state/next_id" &&
	check "remote holds only the other run" [ "$(git --git-dir="$REMOTE" log -1 --format=%s main)" != "" ] &&
	check "our run is not on the remote" sh -c "! git --git-dir='$REMOTE' ls-tree -r --name-only main | grep -q 20261201T063700Z-aaaa" &&
	check "rebase aborted, tree clean" sh -c "cd '$REPO' && [ ! -d .git/rebase-merge ] && git diff --quiet" &&
	check "local commit kept" sh -c "cd '$REPO' && git log -1 --format=%s | grep -q 20261201T063700Z-aaaa" &&
	check "remote moved only by the other run" [ "$(git --git-dir="$REMOTE" rev-parse main)" != "$before" ] &&
	ok "two runs that both handed out ids from one next_id fail loudly and keep the local commit"

# --- 9. never twice at once; a stale lock is cleared
new_world lock
(
	set -m
	cd / && SCRAPER_BIN="$FAKE" FAKE_SLEEP=4 bash "$REPO/scripts/daily.sh" >"$W/first" 2>&1
) &
first=$!
i=0
while [ ! -f "$REPO/.git/scraper-daily.lock/pid" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
start=$(date +%s)
daily
took=$(($(date +%s) - start))
check "second daily.sh refuses with 75 (got $RC)" [ "$RC" -eq 75 ] &&
	check "at once (${took}s)" [ "$took" -le 2 ] &&
	check "clear message" contains "$W/out" "another daily.sh is already running" &&
	ok "a second daily.sh exits at once while one runs"
wait "$first"
check "first one finished fine" [ "$?" -eq 0 ]
mkdir -p "$REPO/.git/scraper-daily.lock"
sh -c 'echo $$ >"$1"' sh "$REPO/.git/scraper-daily.lock/pid" # a PID that has exited
daily
check "stale lock cleared (got $RC)" [ "$RC" -eq 0 ] && check "said so" contains "$W/out" "removing a stale lock" &&
	ok "a lock left by a dead process is cleared"

# --- 10. signals reach the crawler once each; what it saved is committed
new_world signals
sig_run() {
	: >"$W/signals"
	(
		set -m
		cd / && exec env SCRAPER_BIN="$FAKE" FAKE_SLEEP=20 FAKE_SIGNALS="$W/signals" COMMIT=1 PUSH_BACKOFF=0 FAKE_RUN_ID="$1" bash "$REPO/scripts/daily.sh" >"$W/out" 2>&1
	) &
	pid=$!
	i=0
	while ! contains "$REPO/data/state/crawl.log" run_start && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.3
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

summary

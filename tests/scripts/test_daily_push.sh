#!/usr/bin/env bash
# scripts/daily.sh pushing while others push: retries with back-off, rebases,
# state files settled by run order, and the next_id clash that must fail.
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

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

summary

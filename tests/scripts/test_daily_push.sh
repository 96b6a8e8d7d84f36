#!/usr/bin/env bash
# scripts/daily.sh pushing while others push: retries with back-off, rebases,
# runs from the same state (partitions, a laptop and an Action) that all land.
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
# 8a. two partitions: the other pushes while ours crawls; both land, no conflict
new_world state
B=$(other_clone b)
daily COMMIT=1 FAKE_RUN_ID=20261128T063700Z-0000
cat >"$W/hook.sh" <<HOOK
cd "$B" && git pull --quiet --rebase && FAKE_HOOK= SCRAPER_BIN="$FAKE" FAKE_RUN_ID=20261129T063700Z-bbbb PARTITION=1/2 COMMIT=1 PUSH_BACKOFF=0 bash "$B/scripts/daily.sh" >"$W/b_out" 2>&1
HOOK
daily COMMIT=1 FAKE_HOOK="$W/hook.sh" PARTITION=0/2 FAKE_RUN_ID=20261129T063700Z-aaaa FAKE_ARGS="$W/args"
if check "two partitions land (got $RC)" [ "$RC" -eq 0 ]; then
	check "the other partition landed first" contains "$W/b_out" "pushed " &&
		check "--partition reaches the crawler" contains "$W/args" '^--partition$' &&
		check "both shards" [ "$(remote_files | grep -c 'jsonl.zst$')" -eq 3 ] &&
		check "both run summaries" [ "$(remote_files | grep -c '^data/state/runs/20261129')" -eq 2 ] &&
		check "every run's validators file" [ "$(remote_files | grep '^data/state/validators/' | tr '\n' ' ')" = "data/state/validators/20261128T063700Z-0000.json data/state/validators/20261129T063700Z-aaaa.json data/state/validators/20261129T063700Z-bbbb.json " ] &&
		check "no conflict to settle" sh -c "! grep -q 'keeping the later run' '$W/out'" &&
		check "commit names the partition" contains <(git --git-dir="$REMOTE" log -1 --format=%s main) "(partition 0/2)" &&
		check "each partition keeps its own queue" [ -f "$REPO/data/state/frontier-0-of-2.jsonl" ] &&
		ok "two partitions crawling from the same state both land without a conflict"
else cat "$W/out" "$W/b_out"; fi
# 8b. a laptop and an Action run of the same partition on the same day
cat >"$W/hook.sh" <<HOOK
cd "$B" && git pull --quiet --rebase && FAKE_HOOK= SCRAPER_BIN="$FAKE" FAKE_RUN_ID=20261130T050000Z-bbbb COMMIT=1 PUSH_BACKOFF=0 bash "$B/scripts/daily.sh" >"$W/b_out" 2>&1
HOOK
daily COMMIT=1 FAKE_HOOK="$W/hook.sh" FAKE_RUN_ID=20261130T063700Z-aaaa
if check "same partition, same day: both land (got $RC)" [ "$RC" -eq 0 ]; then
	check "both shards of the day" [ "$(remote_files | grep -c 'articles/20261130')" -eq 2 ] &&
		check "validators of both runs kept" [ "$(remote_files | grep -c '^data/state/validators/20261130')" -eq 2 ] &&
		check "rebase aborted nothing, tree clean" sh -c "cd '$REPO' && [ ! -d .git/rebase-merge ] && git diff --quiet -- data/state/runs" &&
		ok "a laptop run and an Action run of one partition on one day both land"
else cat "$W/out" "$W/b_out"; fi

summary

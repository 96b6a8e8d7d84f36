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
	want="data/articles/20261129T063700Z-aaaa.jsonl.zst data/state/health/20261129T063700Z-aaaa.json data/state/runs/20261129T063700Z-aaaa.json data/state/seen/20261129T063700Z-aaaa.bin data/state/validators/20261129T063700Z-aaaa.json "
	check "commit holds only shard and state: [$files]" [ "$files" = "$want" ] &&
		check "remote has the commit" [ "$(remote_count)" -eq 2 ] &&
		check "frontier, last_run.json, crawl.log and the lock stay out" sh -c "! git --git-dir='$REMOTE' ls-tree -r --name-only main | grep -E 'frontier|last_run|crawl.log|lock'" &&
		check "author is COMMIT_AUTHOR" [ "$(git --git-dir="$REMOTE" log -1 --format='%an <%ae>' main)" = "Crawl Bot <bot@example.test>" ] &&
		check "message names the run" contains <(git --git-dir="$REMOTE" log -1 --format=%s main) "crawl 20261129T063700Z-aaaa: 2 articles from 123 requests (stopped by max_duration)" &&
		check "default limits passed" [ "$(tr '\n' ' ' <"$ARGS")" = "--config $REPO/config.yml crawl --data $REPO/data --max-duration 40m --max-pages 4000 --min-lastmod auto " ] &&
		check "GITHUB_OUTPUT has commit and shard" contains "$W/gh_out" "^commit=$(git --git-dir="$REMOTE" rev-parse main)$" &&
		check "GITHUB_OUTPUT shard" contains "$W/gh_out" '^shard=20261129T063700Z-aaaa.jsonl.zst$' &&
		check "lock released" [ ! -d "$REPO/.git/scraper-daily.lock" ] &&
		ok "a run commits the new shard and state files and pushes"
else cat "$W/out"; fi

# --- 2. the next run is incremental: a second shard, run summary and
# validators file; nothing of the first run's is rewritten
daily COMMIT=1 FAKE_RUN_ID=20261130T063700Z-bbbb
if check "second run exits 0 (got $RC)" [ "$RC" -eq 0 ]; then
	check "two shards on the remote" [ "$(remote_files | grep -c 'jsonl.zst$')" -eq 2 ] &&
		check "two run summaries" [ "$(remote_files | grep -c '^data/state/runs/')" -eq 2 ] &&
		check "one validators file per run" [ "$(remote_files | grep -c '^data/state/validators/')" -eq 2 ] &&
		check "the first run's files unchanged" [ "$(git --git-dir="$REMOTE" log --format=%h main -- data/state/runs/20261129T063700Z-aaaa.json data/state/validators/20261129T063700Z-aaaa.json | wc -l)" -eq 1 ] &&
		ok "a second run commits its own shard, summary and validators and rewrites nothing"
else cat "$W/out"; fi

# --- 2b. someone else's staged work in the checkout stays out of the commit;
# SCRAPER_BIN may be relative to where daily.sh was started
echo "work in progress" >"$REPO/notes.txt"
(cd "$REPO" && git add notes.txt)
RC=0
(cd "$(dirname "$FAKE")" && COMMIT=1 PUSH_BACKOFF=0 FAKE_RUN_ID=20261130T073700Z-cccc SCRAPER_BIN=./fake-scraper.sh bash "$REPO/scripts/daily.sh") >"$W/out" 2>&1 || RC=$?
check "relative SCRAPER_BIN works (got $RC)" [ "$RC" -eq 0 ] &&
	check "staged notes.txt not committed" sh -c "! git --git-dir='$REMOTE' ls-tree -r --name-only main | grep -q notes.txt" &&
	check "notes.txt still staged" sh -c "cd '$REPO' && git diff --cached --name-only | grep -qx notes.txt" &&
	ok "only the data files go into the commit, whatever else is staged"
(cd "$REPO" && git rm --quiet --cached notes.txt && rm notes.txt)
mkdir -p "$REPO/.git/rebase-merge"
daily COMMIT=1
check "refuses during a rebase (got $RC)" [ "$RC" -eq 1 ] && check "says so" contains "$W/out" "a rebase is in progress" &&
	ok "a checkout in the middle of a rebase is left alone"
rmdir "$REPO/.git/rebase-merge"

# --- 3. limits from the environment; an empty one leaves the flag out
: >"$ARGS"
daily COMMIT=0 MAX_DURATION=90s MAX_PAGES=10 MIN_LASTMOD= MAX_HITS=5 FAKE_ARGS="$ARGS" CONFIG=config.yml DATA_DIR=./data
check "overrides run" [ "$RC" -eq 0 ] &&
	check "overrides reach the crawler: $(tr '\n' ' ' <"$ARGS")" [ "$(tr '\n' ' ' <"$ARGS")" = "--config $REPO/config.yml crawl --data $REPO/data --max-duration 90s --max-pages 10 --max-hits 5 " ] &&
	check "COMMIT=0 commits nothing" [ "$(remote_count)" -eq 4 ] &&
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
check "after a failure the next run commits both shards" sh -c "git --git-dir='$REMOTE' ls-tree -r --name-only main | grep -c 'articles/20261129T0[78]3700Z-' | grep -qx 2" &&
	ok "shards left by a failed run are committed by the next run"

# --- 5. build and publish switches (the real scripts/publish.sh, dry run)
new_world build
daily BUILD_DATASET=1 PUBLISH=1 DRY_RUN=1 HF_REPO=me/ai-news
check "build+publish run (got $RC)" [ "$RC" -eq 0 ] &&
	check "dist built" [ -f "$REPO/dist/README.md" ] &&
	check "publish.sh dry run lists the card" contains "$W/out" "would upload to https://huggingface.co/datasets/me/ai-news" &&
	check "publish.sh uploads the changed files of dist" contains "$W/out" "hf upload me/ai-news <the files above> . --repo-type dataset" &&
	ok "BUILD_DATASET=1 builds dist/, PUBLISH=1 hands it to scripts/publish.sh"
daily BUILD_DATASET=1 PUBLISH=1 HF_REPO=me/ai-news
check "PUBLISH without HF_TOKEN fails (got $RC)" [ "$RC" -eq 1 ] && check "message" contains "$W/out" "HF_TOKEN is not set" &&
	check "daily says publishing failed" contains "$W/out" "error: publishing failed" &&
	ok "publishing without HF_TOKEN fails loudly"

# --- 6. the sources scraper health calls broken or degraded are printed
new_world health
daily FAKE_HEALTH_TEXT="$(printf 'broken    dead.test: feed http://dead.test/feed answers 404 since run r2\ndegraded  slow.test: 62%% of requests failed')" GITHUB_ACTIONS=true
check "run with problems exits 0 (got $RC)" [ "$RC" -eq 0 ] &&
	check "broken source printed" contains "$W/out" "daily: health: broken    dead.test: feed http://dead.test/feed answers 404 since run r2" &&
	check "degraded source printed" contains "$W/out" "daily: health: degraded  slow.test" &&
	check "as a GitHub warning" contains "$W/out" "^::warning title=source health::broken    dead.test" &&
	ok "daily.sh prints the broken and degraded sources after the crawl"

# --- 7. without SCRAPER_BIN (a laptop): the release binary of the checkout's
# version, installed once by scripts/install.sh, verified, without cargo
new_world install
cp "$ROOT/Cargo.toml" "$REPO/Cargo.toml"
cp "$ROOT/scripts/install.sh" "$REPO/scripts/install.sh"
fake_release "$T/rel" "$VERSION" "$FAKE"
serve "$T/rel" "$W/requests"
mkdir -p "$W/shim"
printf '#!/bin/sh\necho "$*" >>%s/cargo-called\nexit 101\n' "$W" >"$W/shim/cargo"
chmod +x "$W/shim/cargo"
laptop() {
	RC=0
	(cd / && env -u SCRAPER_BIN PATH="$W/shim:$PATH" SCRAPER_DOWNLOAD_BASE="$URL" "$@" bash "$REPO/scripts/daily.sh") >"$W/out" 2>&1 || RC=$?
}
laptop FAKE_RUN_ID=20261201T063700Z-aaaa
check "laptop run exits 0 (got $RC)" [ "$RC" -eq 0 ] &&
	check "installed the release binary" [ -x "$REPO/target/install/v$VERSION/scraper" ] &&
	check "says so" contains "$W/out" "daily: scraper $VERSION release-asset $REPO/target/install/v$VERSION/scraper" &&
	check "crawled with it" [ -f "$REPO/data/articles/20261201T063700Z-aaaa.jsonl.zst" ] &&
	check "cargo never called" [ ! -e "$W/cargo-called" ] &&
	ok "daily.sh without SCRAPER_BIN installs the release binary of its version with scripts/install.sh"
asked=$(grep -c 'tar.gz$' "$W/requests")
laptop FAKE_RUN_ID=20261202T063700Z-bbbb
check "second run exits 0 (got $RC)" [ "$RC" -eq 0 ] &&
	check "no second download" [ "$(grep -c 'tar.gz$' "$W/requests")" = "$asked" ] &&
	ok "the next run reuses the installed binary"
rm -rf "$REPO/target"
mkdir -p "$T/none"
serve "$T/none"
laptop SCRAPER_BUILD_FALLBACK=0 FAKE_RUN_ID=20261203T063700Z-cccc
check "no asset, no fallback: fails (got $RC)" [ "$RC" -ne 0 ] &&
	check "says why" contains "$W/out" "no release asset scraper-$VERSION-" &&
	check "and that nothing ran" contains "$W/out" "daily: error: no scraper binary: scripts/install.sh failed" &&
	ok "with SCRAPER_BUILD_FALLBACK=0 a missing asset stops daily.sh before the crawl"

summary

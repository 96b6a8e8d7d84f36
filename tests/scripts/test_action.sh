#!/usr/bin/env bash
# action.yml run the way a runner runs it (tests/scripts/gha_emulate.py), against
# shellcheck disable=SC2016 # $(...) and backticks in single quotes are the point: they must stay text
# the fake scraper: outputs, the job summary, the binary cache key, and inputs
# that try shell injection.
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# The action as a user's workflow downloads it (lib.sh: copy_action, emulate, out, step_out).
copy_action

# --- 1. a crawl that commits: outputs, summary, cache, queue
new_world run
export FAKE_ARGS=$W/args FAKE_RUN_ID=20261129T063700Z-abcd
emulate one commit=true max-pages=10
if check "action run succeeds (got $RC)" [ "$RC" -eq 0 ]; then
	check "shard output" [ "$(out one shard)" = "data/articles/20261129T063700Z-abcd.jsonl.zst" ] &&
		check "pages-fetched" [ "$(out one pages-fetched)" = 123 ] &&
		check "articles-stored" [ "$(out one articles-stored)" = 2 ] &&
		check "stopped-by" [ "$(out one stopped-by)" = max_duration ] &&
		check "run-id" [ "$(out one run-id)" = 20261129T063700Z-abcd ] &&
		check "commit output is the pushed commit" [ "$(out one commit)" = "$(git --git-dir="$REMOTE" rev-parse main)" ] &&
		check "committed as github-actions[bot]" [ "$(git --git-dir="$REMOTE" log -1 --format=%an main)" = "github-actions[bot]" ] &&
		check "inputs reach the crawler" [ "$(tr '\n' ' ' <"$FAKE_ARGS")" = "--config $REPO/config.yml crawl --data $REPO/data --max-duration 40m --max-pages 10 --min-lastmod auto " ] &&
		ok "the action crawls, commits and sets its outputs from last_run.json"
	check "summary heading" contains "$W/summary.md" "### scraper crawl 20261129T063700Z-abcd" &&
		check "summary table header" contains "$W/summary.md" '^| host | discovered | fetched | stored | errors | bytes |$' &&
		check "busiest host first" [ "$(grep -n 'example' "$W/summary.md" | head -n 1 | grep -c 'example.test')" = 1 ] &&
		check "row" contains "$W/summary.md" '^| example.test | 40 | 100 | 2 | timeout: 2 | 1500000 |$' &&
		check "empty errors as -" contains "$W/summary.md" '^| news.example | 9 | 23 | 0 | - | 2000 |$' &&
		check "one table only (the crawler's own is suppressed)" [ "$(grep -c '^| host' "$W/summary.md")" = 1 ] &&
		ok "the job summary gets one per-host table"
	check "binary restored from cache" [ "$(step_out one install source)" = cache ] &&
		check "binary-source output" [ "$(out one binary-source)" = cache ] &&
		check "summary says where the binary came from" contains "$W/summary.md" "^Binary: \`scraper $VERSION\` from the cache, ready in [0-9]* s.$" &&
		check "queue saved for the next run" contains "$W/one.log" "actions/cache/save key=scraper-queue-data-4242-1 path=data/state/frontier.jsonl" &&
		ok "the binary comes from the cache; the unfinished queue is kept in the cache"
else cat "$W/one.log"; fi

# --- 2. the cache key follows the action's own sources, not the workspace
h1=$(step_out one bin hash)
emulate two
h2=$(step_out two bin hash)
echo "// changed" >>"$A/src/lib.rs"
emulate three
h3=$(step_out three bin hash)
check "key is stable ($h1 = $h2)" [ -n "$h1" ] && [ "$h1" = "$h2" ] &&
	check "key changes with src/ ($h3)" [ "$h3" != "$h1" ] &&
	check "binary path is keyed" [ "$(step_out three bin path)" = "$HOME/.cache/scraper-action/$h3/scraper" ] &&
	ok "the binary's cache key is a hash of the action's Cargo.lock, Cargo.toml and src/"

# --- 3. inputs that try to run commands stay data
rm -f /tmp/pwned
: >"$FAKE_ARGS"
# shellcheck disable=SC2016 # the $(...) must reach the action unexpanded
emulate inject 'max-duration=$(touch /tmp/pwned)' 'min-lastmod=`touch /tmp/pwned`' \
	'commit-author=$(touch /tmp/pwned) <x@example.test>' commit=true 'max-pages=4; touch /tmp/pwned'
check "nothing ran" [ ! -e /tmp/pwned ] &&
	check "non-numeric max-pages refused by daily.sh" [ "$RC" -ne 0 ] &&
	ok "a max-pages input with shell in it is refused, nothing runs"
rm -f /tmp/pwned
: >"$FAKE_ARGS"
# Its own run id: a run's files are named by it, so a repeated id would leave nothing to commit.
# shellcheck disable=SC2016
FAKE_RUN_ID=20261129T083700Z-beef emulate inject2 'max-duration=$(touch /tmp/pwned)' 'min-lastmod=`touch /tmp/pwned`' \
	'commit-author=$(touch /tmp/pwned) <x@example.test>' commit=true
check "injection run completes (got $RC)" [ "$RC" -eq 0 ] &&
	check "nothing ran" [ ! -e /tmp/pwned ] &&
	check "values reach the crawler verbatim" contains "$FAKE_ARGS" '^\$(touch /tmp/pwned)$' &&
	check "backticks verbatim" contains "$FAKE_ARGS" '^`touch /tmp/pwned`$' &&
	check "author verbatim" [ "$(git --git-dir="$REMOTE" log -1 --format=%an main)" = '$(touch /tmp/pwned)' ] &&
	ok "inputs containing \$(...) and backticks reach the crawler as plain text"
rm -f /tmp/pwned
# shellcheck disable=SC2016
emulate inject3 'config=$(touch /tmp/pwned)' 'data-dir=data'
check "bad config fails the action" [ "$RC" -ne 0 ] &&
	check "nothing ran" [ ! -e /tmp/pwned ] &&
	check "summary says the crawl did not finish" contains "$W/summary.md" "The crawl did not finish" &&
	check "no stale outputs" [ "$(out inject3 shard)" = "" ] &&
	ok "a failed crawl reports no outputs and says so in the summary"
rm -f /tmp/pwned

# --- 4. broken and degraded sources: outputs, and first in the job summary
new_world health
: >"$W/summary.md"
export FAKE_HEALTH='{"runs":["r1","r2"],"broken":["dead.test","wall.test/news"],"degraded":["slow.test"],"sources":[{"source":"dead.test","status":"broken","findings":[{"reason":"feed http://dead.test/feed answers 404 since run r2","since":"r2"}]},{"source":"wall.test/news","status":"broken","findings":[{"reason":"403 on every request for 2 runs (since run r1)","since":"r1"}]},{"source":"slow.test","status":"degraded","findings":[{"reason":"a | b","since":"r2"}]},{"source":"fine.test","status":"ok","findings":[]}]}'
export FAKE_SEED_PROBLEMS='[{"source":"dead.test","url":"http://dead.test/feed","answer":"404","moved_to":null},{"source":"moved.test","url":"http://moved.test/rss","answer":"2xx","moved_to":"http://moved.test/feed/"}]'
emulate health
unset FAKE_HEALTH FAKE_SEED_PROBLEMS
first_section=$(grep -m 1 '^### ' "$W/summary.md")
check "action run succeeds (got $RC)" [ "$RC" -eq 0 ] &&
	check "broken-sources output" [ "$(out health broken-sources)" = "dead.test,wall.test/news" ] &&
	check "degraded-sources output" [ "$(out health degraded-sources)" = "slow.test" ] &&
	check "attention section comes first ($first_section)" [ "$first_section" = "### Sources needing attention" ] &&
	check "broken row" contains "$W/summary.md" '^| dead.test | \*\*broken\*\* | feed http://dead.test/feed answers 404 since run r2 | r2 |$' &&
	check "pipes escaped" contains "$W/summary.md" '^| slow.test | \*\*degraded\*\* | a \\| b | r2 |$' &&
	check "ok sources are not listed" [ "$(grep -c 'fine.test' "$W/summary.md")" = 0 ] &&
	ok "broken and degraded sources are action outputs and head the job summary"
check "dead seed listed" contains "$W/summary.md" '^- dead.test: `http://dead.test/feed` answers 404$' &&
	check "moved seed listed with its new URL" contains "$W/summary.md" '^- moved.test: `http://moved.test/rss` now redirects to `http://moved.test/feed/`$' &&
	ok "seeds that failed or moved are listed in the job summary with where they point"
emulate quiet
check "no broken sources: empty output" [ "$(out quiet broken-sources)" = "" ] &&
	check "no attention section" [ "$(grep -c 'Sources needing attention' "$W/summary.md")" = 1 ] &&
	ok "a healthy run adds no attention section"

summary

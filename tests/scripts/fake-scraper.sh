#!/usr/bin/env bash
# A stand-in for the `scraper` binary in the automation tests: writes what
# `scraper crawl` writes (a shard, a seen segment, the run summary
# runs/<run-id>.json and its local copy last_run.json, the validators it
# changed in validators/<run-id>.json, frontier.jsonl or frontier-<i>-of-<N>.jsonl,
# crawl.log, the .lock file) without any network. Steered by environment variables:
#   FAKE_RUN_ID    run id (default: current UTC time plus the PID)
#   FAKE_IDS       articles to store (default 2)
#   FAKE_EXIT      exit status after a normal finish (default 0)
#   FAKE_SLEEP     seconds to "crawl" before finishing (default 0)
#   FAKE_HOOK      a script run in the middle of the crawl (races, etc.)
#   FAKE_ARGS      file that receives the arguments, one per line
#   FAKE_SIGNALS   file that receives the name of every signal received
#   FAKE_GRACE     seconds a first signal leaves to finish (a second one ends
#                  the run at once); default 0: the first signal ends it
#   FAKE_HEALTH    what `scraper health --json` prints (default: no problems);
#                  `health --problems` prints FAKE_HEALTH_TEXT. Neither is
#                  recorded in FAKE_ARGS.
#   FAKE_SEED_PROBLEMS  a JSON list written as last_run.json's seed_problems
#   FAKE_VERSION   what `scraper --version` says after "scraper " (lib.sh sets
#                  the crate's version)
#   FAKE_STARTED   file that receives the time (seconds since the epoch) the
#                  crawl started
set -eu

if [ "${1-}" = --version ]; then
	printf 'scraper %s\n' "${FAKE_VERSION:-0.0.0}"
	exit 0
fi

case " $* " in
*" health "*)
	case " $* " in
	*" --json "*) printf '%s\n' "${FAKE_HEALTH:-{\"runs\":[],\"broken\":[],\"degraded\":[],\"sources\":[]\}}" ;;
	*) if [ -n "${FAKE_HEALTH_TEXT-}" ]; then printf '%s\n' "$FAKE_HEALTH_TEXT"; fi ;;
	esac
	exit 0
	;;
esac

config=
cmd=
data=data
out=dist
partition=
for a in "$@"; do
	if [ -n "${FAKE_ARGS-}" ]; then printf '%s\n' "$a" >>"$FAKE_ARGS"; fi
done
while [ $# -gt 0 ]; do
	case "$1" in
	--config) config=$2; shift 2 ;;
	--data) data=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--partition) partition=$2; shift 2 ;;
	crawl | build) cmd=$1; shift ;;
	*) shift ;;
	esac
done
[ -n "$config" ] || { echo "fake scraper: no --config" >&2; exit 1; }
[ -f "$config" ] || { echo "fake scraper: $config: no such file" >&2; exit 1; }

if [ "$cmd" = build ]; then
	mkdir -p "$out/data"
	echo "# fake dataset card" >"$out/README.md"
	echo "not really parquet" >"$out/data/train-00000-of-00001.parquet"
	printf '{\n  "revision": "%s",\n  "runs": []\n}\n' "$(date -u +%Y-%m-%d)" >"$out/build.json"
	exit 0
fi
[ "$cmd" = crawl ] || { echo "fake scraper: unknown command" >&2; exit 2; }
if [ -n "${FAKE_STARTED-}" ]; then date +%s.%N >"$FAKE_STARTED"; fi

run_id=${FAKE_RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)-$(printf '%04x' $(($$ % 65536)))}
state=$data/state
mkdir -p "$data/articles" "$state/seen"
: >"$state/.lock"
stopped=max_duration
interrupted=false
code=${FAKE_EXIT:-0}

signals=0
# shellcheck disable=SC2317,SC2329 # called from the traps below (SC2317 is older shellcheck's name)
on_signal() {
	if [ -n "${FAKE_SIGNALS-}" ]; then echo "$1" >>"$FAKE_SIGNALS"; fi
	signals=$((signals + 1))
	stopped=interrupted
	interrupted=true
	code=130
	if [ "$signals" -eq 1 ] && [ "${FAKE_GRACE:-0}" -gt 0 ]; then
		# Finish in-flight work for a while; the main loop ends at the new limit.
		limit=$((i + FAKE_GRACE * 10))
		return
	fi
	finish
}

finish() {
	local ids=${FAKE_IDS:-2} queue=frontier.jsonl part_json=
	if [ -n "$partition" ]; then
		queue="frontier-${partition%/*}-of-${partition#*/}.jsonl"
		part_json="\"partition\": \"$partition\","
	fi
	# Ids from the run's own block: its start (the run id) and its suffix.
	printf '{"id":%s,"url":"https://example.test/%s","title":"t"}\n' "$((0x${run_id##*-} + 8589934592))" "$run_id" >"$data/articles/$run_id.jsonl.zst"
	printf 'seen-%s' "$run_id" >"$state/seen/$run_id.bin"
	mkdir -p "$state/runs" "$state/validators" "$state/health"
	printf '{"run_id":"%s","started_at":"2026-11-29T06:37:00Z","sources":{}}\n' "$run_id" >"$state/health/$run_id.json"
	cat >"$state/runs/$run_id.json" <<JSON
{
  "run_id": "$run_id",
  $part_json
  "started_at": "2026-11-29T06:37:00Z",
  "finished_at": "2026-11-29T07:17:00Z",
  "stopped_by": "$stopped",
  "interrupted": $interrupted,
  "pages_fetched": 123,
  "articles_stored": $ids,
  "queue_left": 7,${FAKE_SEED_PROBLEMS:+
  \"seed_problems\": $FAKE_SEED_PROBLEMS,}
  "shard": "$run_id.jsonl.zst",
  "hosts": {
    "example.test": {"discovered": 40, "fetched": 100, "stored": $ids, "errors": {"timeout": 2}, "bytes": 1500000},
    "news.example": {"discovered": 9, "fetched": 23, "stored": 0, "errors": {}, "bytes": 2000}
  }
}
JSON
	cp "$state/runs/$run_id.json" "$state/last_run.json"
	printf '{"https://example.test/feed":{"etag":"%s"}}\n' "$run_id" >"$state/validators/$run_id.json"
	echo '{"url":"https://example.test/left"}' >"$state/$queue"
	printf '{"event":"done","stopped_by":"%s"}\n' "$stopped" >"$state/crawl.log"
	rm -f "$state/.lock"
	exit "$code"
}

trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
echo '{"event":"run_start"}' >"$state/crawl.log"
if [ -n "${FAKE_HOOK-}" ]; then bash "$FAKE_HOOK"; fi
i=0
limit=$((${FAKE_SLEEP:-0} * 10))
while [ "$i" -lt "$limit" ]; do
	sleep 0.1
	i=$((i + 1))
done
finish

#!/usr/bin/env bash
# shellcheck disable=SC2016 # $(...) in single quotes is the attack under test
# Single steps of the workflows, run offline through tests/scripts/gha_emulate.py:
# the payload check of build-dataset.yml and the repository_dispatch of
# daily-crawl.yml (with a fake `gh` that records its request).
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

W=$T/wf
mkdir -p "$W/bin"
# step WORKFLOW JOB STEP CTX...: result JSON in $W/result.
step() {
	local wf=$1 job=$2 id=$3
	shift 3
	local a=()
	for kv in "$@"; do a+=(--ctx "$kv"); done
	: >"$W/summary.md"
	PATH="$W/bin:$PATH" "$PY" "$ROOT/tests/scripts/gha_emulate.py" --workflow "$ROOT/.github/workflows/$wf" \
		--job "$job" --step "$id" --workspace "${WS:-$W}" --summary "$W/summary.md" "${a[@]}" >"$W/result" 2>"$W/log"
}
field() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$W/result" "$1"; }

SHA=0123456789abcdef0123456789abcdef01234567
OTHER=89abcdef0123456789abcdef0123456789abcdef

# --- build-dataset.yml: the SHA from the payload is checked before use
step build-dataset.yml build ref "github.event.client_payload.sha=$SHA" "github.sha=$OTHER"
check "payload sha accepted" [ "$(field 'outputs["sha"]')" = "$SHA" ] &&
	ok "a 40-hex SHA from the crawl-finished payload is used"
step build-dataset.yml build ref "github.sha=$OTHER"
check "no payload: the pushed head" [ "$(field 'outputs["sha"]')" = "$OTHER" ] &&
	ok "schedule and manual runs without a SHA build the branch head"
step build-dataset.yml build ref "inputs.sha=$SHA" "github.sha=$OTHER"
check "manual input sha" [ "$(field 'outputs["sha"]')" = "$SHA" ] && ok "a SHA given by hand is used"
rm -f /tmp/pwned
for bad in '$(touch /tmp/pwned)' "$SHA; touch /tmp/pwned" 'main' "${SHA}0" "$(printf '%s\nx' "$SHA")" '0123456789ABCDEF0123456789ABCDEF01234567'; do
	step build-dataset.yml build ref "github.event.client_payload.sha=$bad" "github.sha=$OTHER"
	check "bad payload refused: $bad" [ "$(field rc)" = 1 ] || cat "$W/log"
	check "no output for a bad payload" [ "$(field 'outputs.get("sha", "")')" = "" ]
done
check "nothing ran" [ ! -e /tmp/pwned ] && ok "payloads that are not a 40-hex SHA fail the run, and nothing in them runs"

# --- daily-crawl.yml: the dispatch goes out only with a token and a commit
cat >"$W/bin/gh" <<GH
#!/usr/bin/env bash
{ printf '%s\n' "\$*"; cat; echo "token=\$GH_TOKEN"; } >"$W/gh_request"
GH
chmod +x "$W/bin/gh"
rm -f "$W/gh_request"
step daily-crawl.yml build dispatch "secrets.ACTOR_TOKEN=tok123" "steps.head.outputs.sha=$SHA" "github.sha=$OTHER" "github.repository=me/scraper"
check "dispatch ran (rc $(field rc))" [ "$(field ran)" = True ] && [ "$(field rc)" = 0 ] &&
	check "POST to the repository's dispatches" contains "$W/gh_request" '^api --method POST repos/me/scraper/dispatches --input -$' &&
	check "event type and SHA in the payload" contains "$W/gh_request" "\"event_type\":\"crawl-finished\",\"client_payload\":{\"sha\":\"$SHA\"}" &&
	check "with the secret token" contains "$W/gh_request" '^token=tok123$' &&
	ok "with ACTOR_TOKEN set, a moved branch head sends repository_dispatch crawl-finished with its SHA, once for all partitions"
rm -f "$W/gh_request"
step daily-crawl.yml build dispatch "steps.head.outputs.sha=$SHA" "github.sha=$OTHER" "github.repository=me/scraper"
check "no token: skipped" [ "$(field ran)" = False ] && check "gh not called" [ ! -e "$W/gh_request" ] &&
	ok "without ACTOR_TOKEN the dispatch step is skipped cleanly"
step daily-crawl.yml build dispatch "secrets.ACTOR_TOKEN=tok123" "steps.head.outputs.sha=$SHA" "github.sha=$SHA" "github.repository=me/scraper"
check "nothing pushed: skipped" [ "$(field ran)" = False ] && ok "a run whose partitions pushed nothing asks for no build"

# --- daily-crawl.yml: the partitions plan
step daily-crawl.yml plan plan "inputs.partitions=4"
check "plan ran (rc $(field rc))" [ "$(field rc)" = 0 ] &&
	check "four indexes" [ "$(field 'outputs["indexes"]')" = "[0,1,2,3]" ] &&
	check "count" [ "$(field 'outputs["count"]')" = 4 ] &&
	ok "partitions=4 plans a matrix of indexes 0..3"
step daily-crawl.yml plan plan
check "default one partition" [ "$(field 'outputs["indexes"]')" = "[0]" ] && ok "by default one runner crawls every host"
for bad in 0 129 'two' '1; touch /tmp/pwned' '$(touch /tmp/pwned)'; do
	step daily-crawl.yml plan plan "inputs.partitions=$bad"
	check "bad partitions refused: $bad" [ "$(field rc)" = 1 ]
done
check "nothing ran" [ ! -e /tmp/pwned ] && ok "a partitions input that is not 1..128 fails the plan, and nothing in it runs"

# --- release.yml: which tags start it, and the assets it names are what install.sh takes
check "tag filter" "$PY" - "$ROOT/.github/workflows/release.yml" <<'PY' && ok "release.yml runs on v1.2.3 and v1.2.3-rc.1 tags, not on branches or other tags"
import re, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
on = doc.get("on", doc.get(True))
push = on["push"]
assert set(push) == {"tags"}, push
def regex(pattern):  # GitHub's filter pattern syntax: * ** + ? [..]
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            out += ".*"; i += 2; continue
        if c == "*": out += "[^/]*"
        elif c in "+?": out += c
        elif c == "[":
            j = pattern.index("]", i); out += pattern[i:j + 1]; i = j
        else: out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z")
pats = [regex(p) for p in push["tags"]]
fires = lambda tag: any(p.match(tag) for p in pats)
for tag in ["v0.1.0", "v1.2.3", "v10.20.30", "v1.2.3-rc.1"]:
    assert fires(tag), tag
for tag in ["v1", "v1.2", "1.2.3", "latest", "vx.y.z", "release-1.2.3", "nightly"]:
    assert not fires(tag), tag
PY

RW=$T/release-ws
mkdir -p "$RW"
mkdir -p "$RW/scripts"
cp "$ROOT/Cargo.toml" "$RW/"
cp "$ROOT/scripts/install.sh" "$RW/scripts/"
WS=$RW step release.yml build version "github.ref_name=v$VERSION"
check "tag v$VERSION matches Cargo.toml" [ "$(field rc)" = 0 ] && [ "$(field 'outputs["version"]')" = "$VERSION" ] &&
	WS=$RW step release.yml build version "github.ref_name=v9.9.9" &&
	check "tag v9.9.9 refused" [ "$(field rc)" = 1 ] && check "with a reason" contains "$W/log" "the tag v9.9.9 is not v<the version in Cargo.toml> (v$VERSION)" &&
	ok "a release tag must be v<the version in Cargo.toml>"

# Pack each target as the build job does, then write SHA256SUMS as the
# release job does; install.sh then installs from exactly those files.
for t in $RELEASE_TARGETS; do
	mkdir -p "$RW/target/$t/release"
	printf '#!/bin/sh\necho "scraper %s"\n' "$VERSION" >"$RW/target/$t/release/scraper"
	rm -rf "$RW/dist"
	WS=$RW step release.yml build pack "matrix.target=$t" "steps.version.outputs.version=$VERSION"
	check "pack $t (rc $(field rc))" [ "$(field rc)" = 0 ] || cat "$W/log"
	mkdir -p "$RW/all"
	mv "$RW/dist/"* "$RW/all/"
done
mkdir -p "$RW/dist"
mv "$RW/all/"* "$RW/dist/"
WS=$RW step release.yml release sums "github.ref_name=v$VERSION"
names=$(find "$RW/dist" -type f -exec basename {} \; | sort | tr '\n' ' ')
want=$(for t in $RELEASE_TARGETS SHA256SUMS; do
	case "$t" in SHA256SUMS) echo "$t" ;; *) echo "scraper-$VERSION-$t.tar.gz" ;; esac
done | sort | tr '\n' ' ')
check "sums step (rc $(field rc))" [ "$(field rc)" = 0 ] &&
	check "assets: $names" [ "$want" = "$names" ] &&
	check "each holds only scraper" [ "$(tar -tzf "$RW/dist/scraper-$VERSION-$(this_target).tar.gz")" = scraper ] &&
	check "SHA256SUMS in the job summary" contains "$W/summary.md" "scraper-$VERSION-aarch64-apple-darwin.tar.gz" &&
	ok "release.yml packs scraper-<version>-<target>.tar.gz for the four targets and writes SHA256SUMS"
mkdir -p "$T/served/v$VERSION"
cp "$RW/dist/"* "$T/served/v$VERSION/"
serve "$T/served"
RC=0
SCRAPER_DOWNLOAD_BASE=$URL sh "$ROOT/scripts/install.sh" --dir "$T/inst" >"$W/inst.out" 2>"$W/inst.err" || RC=$?
check "install.sh takes the release's files (rc $RC): $(cat "$W/inst.err")" [ "$RC" -eq 0 ] &&
	check "release-asset" contains "$W/inst.out" " release-asset " &&
	ok "scripts/install.sh installs from what release.yml publishes"
rm -f "$RW/dist/scraper-$VERSION-x86_64-apple-darwin.tar.gz"
WS=$RW step release.yml release sums "github.ref_name=v$VERSION"
check "a missing target fails the release (rc $(field rc))" [ "$(field rc)" = 1 ] &&
	check "naming it" contains "$W/log" "missing scraper-$VERSION-x86_64-apple-darwin.tar.gz" &&
	ok "a release missing one target's tarball is not published"

summary

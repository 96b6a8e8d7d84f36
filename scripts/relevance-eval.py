#!/usr/bin/env python3
"""Precision and recall of `scraper extract`'s relevance verdict on the labelled sets.

    python3 scripts/relevance-eval.py --bin target/release/scraper [--config config.yml] [--shared ../shared/eval] [--show-errors]

Sets, each scored when present:
  fixtures  tests/fixtures/relevance/ai_pages.yml: pages written for this project in the
            styles of AI labs and tech outlets and of each false-positive kind (needs PyYAML).
            Also reports the old rule (gate + strong term in title/lede or dense body) and the
            recall of the AI stories the old rule kept.
  shared    every page of <shared>/manifest.json (real pages, mostly not about AI), labelled
            by tests/fixtures/relevance/shared_eval_labels.jsonl; pages not listed there are
            not about AI (none has a strong term or an AI title).
Each page is wrapped in a minimal article page (title, og:type article, one <p> per line)
as the shared relevance scorer does, so the verdict depends on title and text alone.
For the real texts in <shared>/relevance/dev.jsonl use <shared>/relevance/score.py.
"""
import argparse
import html
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures", "relevance")


def wrap(title, text):
    paras = "".join(f"<p>{html.escape(p)}</p>" for p in text.splitlines() if p.strip())
    t = html.escape(title)
    return (f"<html><head><title>{t}</title><meta property=\"og:type\" content=\"article\">"
            f"<meta property=\"article:published_time\" content=\"2024-06-01\"></head>"
            f"<body><article><h1>{t}</h1>{paras}</article></body></html>")


def extract(binary, config, files):
    cmd = [binary] + (["--config", config] if config else []) + ["extract"] + files
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"extract failed ({out.returncode}): {out.stderr[-500:]}")
    res = {}
    for line in out.stdout.splitlines():
        o = json.loads(line)
        res[o["path"]] = o
    return res


def summary(name, pairs):
    tp = sum(1 for v, a in pairs if v and a)
    fp = sum(1 for v, a in pairs if v and not a)
    fn = sum(1 for v, a in pairs if not v and a)
    p = tp / max(1, tp + fp)
    r = tp / max(1, tp + fn)
    f1 = 2 * p * r / max(1e-9, p + r)
    print(f"{name}: n={len(pairs)} about={tp + fn} flagged={tp + fp} "
          f"precision={p:.3f} recall={r:.3f} f1={f1:.3f}")


def old_rule(o, k):
    r = o["relevance"]
    return r["gate"] and (r["strong_in_title_or_lede"] or r["density"] >= k)


def fixtures(a):
    try:
        import yaml
    except ImportError:
        print("fixtures: skipped (PyYAML not installed)")
        return
    pages = yaml.safe_load(open(os.path.join(FIX, "ai_pages.yml"), encoding="utf-8"))
    with tempfile.TemporaryDirectory() as d:
        files = []
        for i, p in enumerate(pages):
            f = os.path.join(d, f"{i:04d}.html")
            with open(f, "w", encoding="utf-8") as fh:
                fh.write(wrap(p["title"], p["text"]))
            files.append(f)
        res = extract(a.bin, a.config, files)
    new, old, kept = [], [], []
    for f, p in zip(files, pages):
        o = res[f]
        v = bool(o["relevance"]["relevant"])
        was = old_rule(o, 8.0)
        new.append((v, p["about"]))
        old.append((was, p["about"]))
        if was and p["about"]:
            kept.append((v, True))
        if a.show_errors and v != p["about"]:
            print(("  false positive" if v else "  missed        "), f"[{p['kind']}]",
                  f"{o['relevance']['score']:.2f}", p["title"][:80])
    summary("fixtures (new rule)", new)
    summary("fixtures (old rule)", old)
    summary("fixtures (AI stories the old rule kept)", kept)


def shared(a):
    manifest = os.path.join(a.shared, "manifest.json")
    if not os.path.exists(manifest):
        print(f"shared: skipped ({manifest} not found)")
        return
    labels = {}
    for line in open(os.path.join(FIX, "shared_eval_labels.jsonl"), encoding="utf-8"):
        if line.strip():
            o = json.loads(line)
            labels[o["path"]] = o["about"]
    cases = json.load(open(manifest, encoding="utf-8"))["cases"]
    paths = sorted({c["html"] for c in cases if os.path.exists(os.path.join(a.shared, c["html"]))})
    files = [os.path.join(a.shared, p) for p in paths]
    res = extract(a.bin, a.config, files)
    pairs = []
    for p, f in zip(paths, files):
        o = res.get(f, {})
        rel = o.get("relevance")
        v = bool(rel.get("relevant")) if isinstance(rel, dict) else False
        about = labels.get(p, False)
        pairs.append((v, about))
        if a.show_errors and v != about:
            print(("  false positive" if v else "  missed        "), p)
    summary("shared pages", pairs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--config", default=None)
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "eval"))
    ap.add_argument("--show-errors", action="store_true")
    a = ap.parse_args()
    fixtures(a)
    shared(a)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Does a learned word model earn a place beside the relevance evidence? Cross-validated answer.

    python3 scripts/relevance-textmodel.py --labels LABELS.jsonl --bin target/debug/scraper \\
        [--config config.yml] [--folds 5] [--seeds 1,2,3] [--check HELDOUT.jsonl]

The shipped score (config.yml `keywords.model`, fitted by scripts/relevance-fit.py) is a
logistic model over the rule's evidence features. This script asks whether a second stage
with a word model's opinion as one more feature would do better, and answers with repeated
stratified k-fold cross-validation on LABELS alone (the same file format as relevance-fit.py;
each text wrapped in the same minimal page and read back through `BIN extract`, so the words
are the ones the rule sees). Candidates:

  evidence   the shipped design: the evidence features, L2 1 (relevance-fit.py's choice)
  body-nb    + a binarised multinomial naive Bayes over the word unigrams and bigrams of the
             paragraphs of at least 30 words (menus and headline lists left out), words in at
             least 5 training texts, its log-odds over sqrt(words) as the feature
  title-nb   + the same over the title's words

A word model is stacked honestly: its feature for the second stage's training rows comes from
an inner k-fold (each row scored by a model that did not see it), and inside each outer fold
everything, vocabulary included, is fitted on that fold's training rows only. The probability
threshold is chosen per candidate as relevance-fit.py chooses it (best F1 with precision not
below recall by more than 0.03). Each seed reshuffles the folds: the spread across seeds is
the noise a difference has to beat. --check fits each candidate on all of LABELS and reports
it on a held-out file (never fitted on). No third-party packages; nothing is written.
"""
import argparse
import importlib.util
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("relevance_fit", os.path.join(HERE, "relevance-fit.py"))
rf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rf)

WORD = re.compile(r"[^\W_]+")
PROSE_WORDS = 30
MIN_DF = 5
THRESHOLDS = [round(0.3 + 0.05 * i, 2) for i in range(9)]


def read(labels, binary, config):
    """Rows {"about", "floor", "x", "title", "text"} as `BIN extract` sees each labelled page."""
    recs = [json.loads(line) for line in open(labels, encoding="utf-8") if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        files = []
        for i, rec in enumerate(recs):
            f = os.path.join(d, f"{i:06d}.html")
            with open(f, "w", encoding="utf-8") as fh:
                fh.write(rf.page(rec))
            files.append(f)
        got = {}
        for start in range(0, len(files), 400):
            cmd = [binary] + (["--config", config] if config else []) + ["extract"] + files[start:start + 400]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"extract failed ({out.returncode}): {out.stderr[-500:]}")
            for line in out.stdout.splitlines():
                o = json.loads(line)
                got[int(os.path.basename(o["path"]).split(".")[0])] = o
    for i, rec in enumerate(recs):
        o = got[i]
        rel = o.get("relevance") or {}
        rows.append({
            "about": rf.label_of(rec),
            "floor": bool(rel.get("gate")) and not rel.get("thin"),
            "x": {f["feature"]: f["value"] for f in rel.get("features", [])},
            "title": o.get("title") or "",
            "text": o.get("text") or "",
        })
    return rows


def body_words(row):
    out = set()
    for line in row["text"].split("\n"):
        ws = [w.lower() for w in WORD.findall(line)]
        if len(ws) >= PROSE_WORDS:
            out.update(ws)
            out.update(a + " " + b for a, b in zip(ws, ws[1:]))
    return out


def title_words(row):
    ws = [w.lower() for w in WORD.findall(row["title"])]
    return set(ws) | {a + " " + b for a, b in zip(ws, ws[1:])}


def nb_fit(docs, ys):
    """Log-count ratios of a binarised multinomial naive Bayes (add-one smoothing)."""
    df, pos = Counter(), Counter()
    for d, y in zip(docs, ys):
        df.update(d)
        if y:
            pos.update(d)
    vocab = [t for t, c in df.items() if c >= MIN_DF]
    p = sum(pos[t] + 1 for t in vocab)
    n = sum(df[t] - pos[t] + 1 for t in vocab)
    return {t: math.log((pos[t] + 1) / p) - math.log((df[t] - pos[t] + 1) / n) for t in vocab}


def nb_feature(weights, doc):
    return sum(weights.get(t, 0.0) for t in doc) / math.sqrt(max(1, len(doc)))


def folds(rows, k, seed):
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    order.sort(key=lambda i: rows[i]["about"])
    return [k_ % k for k_, _ in sorted(enumerate(order), key=lambda p: p[1])]


def with_text(rows, words, seed, k):
    """Copies of rows with x["text"]: each scored by a word model fitted without it."""
    fold = folds(rows, k, seed + 7)
    out = [dict(r, x=dict(r["x"])) for r in rows]
    for f in range(k):
        rest = [r for r, g in zip(rows, fold) if g != f]
        w = nb_fit([words(r) for r in rest], [r["about"] for r in rest])
        for o, r, g in zip(out, rows, fold):
            if g == f:
                o["x"]["text"] = nb_feature(w, words(r))
    return out


def train(rows, words, names, seed, k):
    """(word weights or None, second-stage model) fitted on rows."""
    if words is None:
        return None, rf.fit([r for r in rows if r["floor"]], names, 1.0)
    w = nb_fit([words(r) for r in rows], [r["about"] for r in rows])
    stacked = with_text(rows, words, seed, k)
    return w, rf.fit([r for r in stacked if r["floor"]], names + ["text"], 1.0)


def probability(model, row, words):
    w, (bias, weights) = model
    if not row["floor"]:
        return 0.0
    x = dict(row["x"])
    if w is not None:
        x["text"] = nb_feature(w, words(row))
    return rf.sigmoid(bias + sum(weights[f] * x.get(f, 0.0) for f in weights))


def choose(rows, ps):
    best = None
    for t in THRESHOLDS:
        p, r, f1 = rf.scores([(q >= t, x["about"]) for q, x in zip(ps, rows)])
        key = (p >= r - 0.03, round(f1, 3), -abs(t - 0.5))
        if best is None or key > best[0]:
            best = (key, t, (p, r, f1))
    return best[1], best[2]


def cross_validate(rows, words, names, k, seed):
    fold = folds(rows, k, seed)
    ps = [0.0] * len(rows)
    for f in range(k):
        model = train([r for r, g in zip(rows, fold) if g != f], words, names, seed, k)
        for i, (r, g) in enumerate(zip(rows, fold)):
            if g == f:
                ps[i] = probability(model, r, words)
    return choose(rows, ps)


CANDIDATES = [("evidence", None), ("body-nb", body_words), ("title-nb", title_words)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--config", default="config.yml")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", default="20261203,1,2,3")
    ap.add_argument("--check", help="a held-out labelled file: each candidate fitted on all of --labels, scored here")
    a = ap.parse_args()
    rows = read(a.labels, a.bin, a.config)
    names = sorted({f for r in rows for f in r["x"]})
    held = read(a.check, a.bin, a.config) if a.check else None
    seeds = [int(s) for s in a.seeds.split(",")]
    for name, words in CANDIDATES:
        f1s, chosen = [], []
        for seed in seeds:
            t, (p, r, f1) = cross_validate(rows, words, names, a.folds, seed)
            f1s.append(f1)
            chosen.append(t)
            print(f"{name:<9} seed {seed:<9} threshold {t:.2f} CV precision={p:.3f} recall={r:.3f} f1={f1:.3f}",
                  flush=True)
        line = f"{name:<9} mean CV f1={sum(f1s) / len(f1s):.3f} (min {min(f1s):.3f}, max {max(f1s):.3f})"
        if held:
            t = chosen[0]
            model = train(rows, words, names, seeds[0], a.folds)
            p, r, f1 = rf.scores([(probability(model, x, words) >= t, x["about"]) for x in held])
            line += f"; held out at {t:.2f}: precision={p:.3f} recall={r:.3f} f1={f1:.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()

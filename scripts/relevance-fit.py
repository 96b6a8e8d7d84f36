#!/usr/bin/env python3
"""Fit the relevance model's weights (config.yml `keywords.model`) on labelled articles.

    python3 scripts/relevance-fit.py --labels LABELS.jsonl --bin target/debug/scraper \\
        [--config config.yml] [--save-features FEATURES.jsonl] [--write | --check]
    python3 scripts/relevance-fit.py --features tests/fixtures/relevance/train_features.jsonl \\
        [--config config.yml] [--write | --check]

LABELS.jsonl: one JSON object a line, {"title", "text", "about_ai"} ("about" also accepted;
"url" and "year" optional), the format of ../shared/eval/relevance/train.jsonl. Each text
is wrapped in a minimal article page (one <p> per line) and `BIN --config CONFIG extract`
reports the evidence features of every page (`relevance.features`) and whether it passed
the floor (the two-tier gate and the thin-page test). The model is a logistic regression
(L2-regularised, fitted by Newton's method: deterministic) on the pages past the floor; a
page is relevant when it passes the floor and the model's probability reaches
`keywords.min_relevance_score`.

The L2 penalty and min_relevance_score are chosen by stratified k-fold cross-validation on
the labelled set (each fold's weights fitted without it), repeated over --select N fold
shuffles (default 16: one shuffle's F1 moves by about 0.005 with the shuffle alone, enough
to pick a penalty by luck): the pair with the best mean F1 whose mean precision is not below
mean recall by more than 0.03, ties to the threshold nearest 0.5 and the larger penalty
(--l2 and --threshold fix either). Prints the weights, the fit on the whole set and the
cross-validated precision, recall and F1 of the chosen pair (chosen on the same shuffles,
so slightly optimistic: check on a held-out set). --repeat N adds the chosen pair's mean
over N other fold shuffles: judge a new feature by that figure. Only numbers and labels
are saved by --save-features, never texts.

--write   replaces the lines between `# relevance-fit: begin` and `# relevance-fit: end` in the
          config with min_relevance_score and the fitted model (put the two marker lines under
          `keywords:` first, with nothing between them).
--check   exits 1 unless the config's block equals the fit to 3 decimals (CI runs this on the
          shipped features table, so weights that no longer reproduce fail the build).
Whether a learned word model would add to these features: scripts/relevance-textmodel.py.
No third-party packages.
"""
import argparse
import html
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

BEGIN = "# relevance-fit: begin"
END = "# relevance-fit: end"


def page(rec):
    paras = "".join(f"<p>{html.escape(p)}</p>" for p in rec["text"].splitlines() if p.strip())
    title = html.escape(rec.get("title") or "")
    year = rec.get("year") or "2020"
    return (f"<html><head><title>{title}</title><meta property=\"og:type\" content=\"article\">"
            f"<meta property=\"article:published_time\" content=\"{year}-06-01\"></head>"
            f"<body><article><h1>{title}</h1>{paras}</article></body></html>")


def label_of(rec):
    for key in ("about_ai", "about", "label", "relevant"):
        if key in rec:
            return bool(rec[key])
    sys.exit("a labelled row needs about_ai (or about): true or false")


def extract_features(labels, binary, config):
    """One row per labelled page: {"i", "about", "floor", "x": {feature: value}}."""
    recs = [json.loads(line) for line in open(labels, encoding="utf-8") if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for start in range(0, len(recs), 400):
            files = []
            for i in range(start, min(start + 400, len(recs))):
                f = os.path.join(d, f"{i:06d}.html")
                with open(f, "w", encoding="utf-8") as fh:
                    fh.write(page(recs[i]))
                files.append(f)
            cmd = [binary] + (["--config", config] if config else []) + ["extract"] + files
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"extract failed ({out.returncode}): {out.stderr[-500:]}")
            got = {}
            for line in out.stdout.splitlines():
                o = json.loads(line)
                got[int(os.path.basename(o["path"]).split(".")[0])] = o.get("relevance") or {}
            for i in range(start, min(start + 400, len(recs))):
                rel = got.get(i)
                if not rel or "features" not in rel:
                    sys.exit(f"row {i}: no relevance.features in extract's output (a newer binary?)")
                rows.append({
                    "i": i,
                    "about": label_of(recs[i]),
                    "floor": bool(rel["gate"]) and not rel["thin"],
                    "x": {f["feature"]: f["value"] for f in rel["features"]},
                })
    return rows


def sigmoid(z):
    if z < -40:
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


def solve(a, b):
    """Gaussian elimination with partial pivoting: a x = b."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def fit(rows, names, l2):
    """Bias and weights minimising the log loss plus l2/2 * |weights|^2 (bias not penalised)."""
    xs = [[1.0] + [r["x"].get(f, 0.0) for f in names] for r in rows]
    ys = [1.0 if r["about"] else 0.0 for r in rows]
    n = len(names) + 1
    w = [0.0] * n
    for _ in range(100):
        g = [0.0] * n
        h = [[0.0] * n for _ in range(n)]
        for x, y in zip(xs, ys):
            p = sigmoid(sum(a * b for a, b in zip(w, x)))
            d = p - y
            s = p * (1 - p)
            for j in range(n):
                g[j] += d * x[j]
                sx = s * x[j]
                for k in range(j, n):
                    h[j][k] += sx * x[k]
        for j in range(n):
            for k in range(j):
                h[j][k] = h[k][j]
        for j in range(1, n):
            g[j] += l2 * w[j]
            h[j][j] += l2
        step = solve(h, g)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(s) for s in step) < 1e-12:
            break
    return w[0], dict(zip(names, w[1:]))


def predict(model, row, threshold):
    bias, weights = model
    if not row["floor"]:
        return False
    z = bias + sum(weights[f] * row["x"].get(f, 0.0) for f in weights)
    return sigmoid(z) >= threshold


def scores(pairs):
    tp = sum(1 for v, a in pairs if v and a)
    fp = sum(1 for v, a in pairs if v and not a)
    fn = sum(1 for v, a in pairs if a and not v)
    p = tp / max(1, tp + fp)
    r = tp / max(1, tp + fn)
    return p, r, 2 * p * r / max(1e-9, p + r)


L2_GRID = [0.1, 0.3, 1.0, 3.0]
# The first fold shuffle --select averages over; --repeat's shuffles (1, 2, ...) are others.
SELECT_SEED = 101
THRESHOLD_GRID = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7]


def cross_validate(rows, names, l2, folds, thresholds, seed=20261203):
    """{threshold: (precision, recall, f1)} over the k folds (shuffled by `seed`)."""
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    order.sort(key=lambda i: rows[i]["about"])
    fold = {i: k % folds for k, i in enumerate(order)}
    pairs = {t: [] for t in thresholds}
    for f in range(folds):
        train = [r for i, r in enumerate(rows) if fold[i] != f and r["floor"]]
        model = fit(train, names, l2)
        for t in thresholds:
            pairs[t] += [(predict(model, r, t), r["about"])
                         for i, r in enumerate(rows) if fold[i] == f]
    return {t: scores(p) for t, p in pairs.items()}


def choose(rows, names, l2s, thresholds, folds, seeds):
    """(l2, threshold, (p, r, f1)): the best cross-validated F1 with precision >= recall - 0.03,
    precision, recall and F1 each the mean over the fold shuffles `seeds`."""
    best = None
    for l2 in l2s:
        runs = [cross_validate(rows, names, l2, folds, thresholds, seed=s) for s in seeds]
        for t in thresholds:
            p, r, f1 = (sum(run[t][k] for run in runs) / len(runs) for k in range(3))
            ok = p >= r - 0.03
            key = (ok, round(f1, 3), -abs(t - 0.5), l2)
            if best is None or key > best[0]:
                best = (key, l2, t, (p, r, f1))
    return best[1], best[2], best[3]


def rounded(model):
    bias, weights = model
    return round(bias, 3), {f: round(w, 3) for f, w in weights.items()}


def block(model, threshold, note):
    bias, weights = rounded(model)
    lines = [BEGIN] + [f"# {n}" for n in note]
    lines += [f"min_relevance_score: {threshold}", "model:", f"  bias: {bias}", "  weights:"]
    lines += [f"    {f}: {w}" for f, w in weights.items()]
    return lines + [END]


def config_block(path):
    """(indent, start, end, lines) of the marked block in the config."""
    lines = open(path, encoding="utf-8").read().split("\n")
    starts = [i for i, l in enumerate(lines) if l.strip() == BEGIN]
    ends = [i for i, l in enumerate(lines) if l.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        sys.exit(f"{path}: expected one `{BEGIN}` line and one `{END}` line after it, under keywords:")
    indent = lines[starts[0]][: len(lines[starts[0]]) - len(lines[starts[0]].lstrip())]
    return indent, starts[0], ends[0], lines


def shipped_model(path):
    """(min_relevance_score, bias, weights) in the config's block."""
    _, s, e, lines = config_block(path)
    threshold, bias, weights = None, None, {}
    for l in lines[s + 1:e]:
        m = re.match(r"\s*(\w+):\s*(-?[0-9.eE+-]+)\s*$", l)
        if not m:
            continue
        if m.group(1) == "bias":
            bias = float(m.group(2))
        elif m.group(1) == "min_relevance_score":
            threshold = float(m.group(2))
        else:
            weights[m.group(1)] = float(m.group(2))
    return threshold, bias, weights


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", help="labelled articles (JSON lines)")
    ap.add_argument("--bin", help="the scraper binary (with --labels)")
    ap.add_argument("--features", help="a features table saved by --save-features, instead of --labels")
    ap.add_argument("--save-features", help="write the features table here")
    ap.add_argument("--config", default="config.yml")
    ap.add_argument("--name", help="what the config's note calls the labelled set (default: the file's name)")
    ap.add_argument("--l2", type=float, default=None,
                    help=f"L2 penalty on the weights (default: chosen from {L2_GRID})")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--select", type=int, default=16,
                    help="choose the penalty and threshold by the mean over this many fold "
                         "shuffles (default 16; one shuffle's F1 moves by about 0.005 alone)")
    ap.add_argument("--repeat", type=int, default=0,
                    help="also report the chosen pair's cross-validated F1 over this many other "
                         "fold shuffles (the noise a change in features has to beat)")
    ap.add_argument("--threshold", type=float, default=None,
                    help=f"probability a relevant page needs (default: chosen from {THRESHOLD_GRID})")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true")
    group.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.features:
        rows = [json.loads(l) for l in open(a.features, encoding="utf-8") if l.strip()]
        source = os.path.basename(a.features)
    elif a.labels and a.bin:
        rows = extract_features(a.labels, a.bin, a.config)
        source = os.path.basename(a.labels)
    else:
        sys.exit("give --labels FILE --bin BINARY, or --features FILE")
    source = a.name or source
    if a.save_features:
        with open(a.save_features, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, sort_keys=True) + "\n")
    names = sorted({f for r in rows for f in r["x"]})
    past = [r for r in rows if r["floor"]]
    l2s = [a.l2] if a.l2 is not None else L2_GRID
    thresholds = [a.threshold] if a.threshold is not None else THRESHOLD_GRID
    seeds = [SELECT_SEED + k for k in range(max(1, a.select))]
    l2, threshold, (cp, cr, cf1) = choose(rows, names, l2s, thresholds, a.folds, seeds)
    model = fit(past, names, l2)
    p, r, f1 = scores([(predict(model, x, threshold), x["about"]) for x in rows])
    about = sum(1 for x in rows if x["about"])
    note = ["Written by scripts/relevance-fit.py. Labelled set:",
            f"  {source}",
            f"{len(rows)} pages ({about} about the topic, {len(past)} past the gate). "
            f"Chosen by {a.folds}-fold cross-validation",
            f"over {len(seeds)} fold shuffles: L2 {l2:g}, min_relevance_score {threshold} (the "
            f"probability a relevant page needs);",
            f"cross-validated precision {cp:.3f} recall {cr:.3f} F1 {cf1:.3f} (means over the shuffles)."]
    bias, weights = rounded(model)
    print(f"bias {bias:+.3f}")
    for f, w in sorted(weights.items(), key=lambda kv: -abs(kv[1])):
        print(f"  {f:<12} {w:+.3f}")
    print(f"FIT n={len(rows)} about={about} past_gate={len(past)} l2={l2:g} threshold={threshold} "
          f"precision={p:.3f} recall={r:.3f} f1={f1:.3f}")
    print(f"CV folds={a.folds} shuffles={len(seeds)} precision={cp:.3f} recall={cr:.3f} f1={cf1:.3f}")
    if a.repeat > 0:
        runs = [cross_validate(rows, names, l2, a.folds, [threshold], seed=s)[threshold]
                for s in range(1, a.repeat + 1)]
        mean = [sum(x[k] for x in runs) / len(runs) for k in range(3)]
        f1s = [x[2] for x in runs]
        print(f"REPEATED CV shuffles={a.repeat} l2={l2:g} threshold={threshold} "
              f"precision={mean[0]:.3f} recall={mean[1]:.3f} f1={mean[2]:.3f} "
              f"(min {min(f1s):.3f}, max {max(f1s):.3f})")
    if a.write:
        indent, s, e, lines = config_block(a.config)
        lines[s:e + 1] = [indent + l for l in block(model, threshold, note)]
        with open(a.config, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
        print(f"wrote keywords.model into {a.config}")
    if a.check:
        have_t, have_b, have_w = shipped_model(a.config)
        bad = []
        if have_t != threshold:
            bad.append(f"min_relevance_score: {a.config} has {have_t}, the fit chooses {threshold}")
        if have_b is None or abs(have_b - bias) > 0.0015:
            bad.append(f"bias: {a.config} has {have_b}, the fit gives {bias}")
        for f in sorted(set(weights) | set(have_w)):
            have, new = have_w.get(f), weights.get(f)
            if have is None or new is None or abs(have - new) > 0.0015:
                bad.append(f"weights.{f}: {a.config} has {have}, the fit gives {new}")
        if bad:
            print("the shipped keywords.model does not reproduce:\n  " + "\n  ".join(bad), file=sys.stderr)
            sys.exit(1)
        print(f"CHECK ok: {a.config}'s keywords.model reproduces ({len(weights)} weights)")


if __name__ == "__main__":
    main()

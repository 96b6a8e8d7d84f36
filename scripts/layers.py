#!/usr/bin/env python3
"""The layering check: no import circle between top-level modules of src/, and
no import that runs up the layer order ARCHITECTURE.md states ("Layers").

Reads every `crate::<module>` path (and `use crate::{a, b}` groups) in src/,
comments and `#[cfg(test)]` code left out, and maps each file to its top-level
module (`src/x.rs` and `src/x/...` are `x`). Files that lib.rs does not declare
are the binary's and sit on the top floor. A module may import any module on
a lower floor and, without a circle, one on its own floor; never one above.

Usage: python3 scripts/layers.py [SRC]   (exit 0: clean; 1: violations listed)
Only the standard library is needed.
"""

import os
import re
import sys

# Bottom floor first. Keep in step with ARCHITECTURE.md's "Layers".
FLOORS = [
    ["date", "xorshift", "consent", "gated", "phrases"],
    ["url"],
    ["partition", "source"],
    ["record"],
    ["net", "extract", "discover", "relevance", "frontier", "health"],
    ["store", "render"],
    ["config"],
    ["reextract", "dataset"],
    ["crawl"],
    ["report", "inspect"],
]
BIN = "(binary)"


CHAR = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^'\\\n])'")
RAW = re.compile(r'b?r(#*)"')


def blank(text):
    """The code with comments, strings and char literals blanked out."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif (m := RAW.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            i = n if j < 0 else j + len(end)
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and (m := CHAR.match(text, i)):
            i = m.end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip(text):
    """The code without comments, literals and `#[cfg(test)]` items."""
    text = blank(text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        j = m.end()
        # Skip the item: up to its `;` or through its balanced `{ ... }`.
        while j < len(text) and text[j] not in "{;":
            j += 1
        if j < len(text) and text[j] == "{":
            depth = 0
            while j < len(text):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
        else:
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def test_files(src):
    """Files declared `#[cfg(test)] mod x;` (they are test code as a whole)."""
    found = set()
    for d, _, names in os.walk(src):
        for n in names:
            if not n.endswith(".rs"):
                continue
            path = os.path.join(d, n)
            text = open(path, encoding="utf-8").read()
            for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+(\w+)\s*;", text):
                base = d if n in ("mod.rs", "lib.rs", "main.rs") else os.path.join(d, n[:-3])
                found.add(os.path.join(base, m.group(1) + ".rs"))
                found.add(os.path.join(base, m.group(1), "mod.rs"))
    return found


def lib_modules(src):
    text = open(os.path.join(src, "lib.rs"), encoding="utf-8").read()
    return set(re.findall(r"^\s*pub\s+mod\s+(\w+)\s*;", text, re.M)) | set(
        re.findall(r"^\s*mod\s+(\w+)\s*;", text, re.M)
    )


def imports(src):
    """{module: {imported module: [file, ...]}} over src/."""
    lib = lib_modules(src)
    skip = test_files(src)
    edges = {}
    for d, _, names in os.walk(src):
        for n in sorted(names):
            path = os.path.join(d, n)
            if not n.endswith(".rs") or path in skip or n in ("lib.rs", "main.rs"):
                continue
            parts = os.path.relpath(path, src).split(os.sep)
            top = parts[0][:-3] if len(parts) == 1 else parts[0]
            if top not in lib:
                top = BIN
            code = strip(open(path, encoding="utf-8").read())
            names_used = set(re.findall(r"\bcrate::(\w+)", code))
            for group in re.findall(r"\bcrate::\{([^}]*)\}", code):
                names_used |= set(re.findall(r"(?:^|,)\s*(\w+)", group))
            for t in names_used:
                if t in lib and t != top:
                    edges.setdefault(top, {}).setdefault(t, []).append(os.path.relpath(path, src))
    return lib, edges


def circles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(edges) | {w for e in edges.values() for w in e}):
        if v not in index:
            visit(v)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    lib, edges = imports(src)
    floor = {m: i for i, f in enumerate(FLOORS) for m in f}
    floor[BIN] = len(FLOORS)
    problems = []
    for m in sorted(lib - set(floor)):
        problems.append(f"unplaced: `{m}` is in lib.rs but on no floor of scripts/layers.py")
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if a in floor and b in floor and floor[b] > floor[a]:
                files = ", ".join(sorted(set(edges[a][b])))
                problems.append(f"upward: {a} (floor {floor[a]}) -> {b} (floor {floor[b]}) in {files}")
    for comp in circles(edges):
        # The ties that close it: the upward ones, else those on one floor.
        inner = [(a, b) for a in comp for b in sorted(edges.get(a, {})) if b in comp]
        up = [(a, b) for a, b in inner if floor.get(b, 0) > floor.get(a, 0)]
        side = [(a, b) for a, b in inner if floor.get(b, 0) == floor.get(a, 0)]
        ties = [f"{a} -> {b} ({', '.join(sorted(set(edges[a][b])))})" for a, b in up or side]
        problems.append(f"circle: {', '.join(comp)}, closed by " + " ; ".join(ties))
    for p in problems:
        print(p)
    if problems:
        print(f"layers: {len(problems)} violation(s)")
        return 1
    print(f"layers: clean ({len(lib)} modules, {len(FLOORS)} floors, no circle, no upward import)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The layering check: no import circle between top-level modules of src/, no
import that runs up the layer order ARCHITECTURE.md states ("Layers"), and no
import circle between the files of one folder.

Reads every `crate::<module>` path (and `use crate::{a, b}` groups) in src/,
comments and `#[cfg(test)]` code left out, and maps each file to its top-level
module (`src/x.rs` and `src/x/...` are `x`). Files that lib.rs does not declare
are the binary's and sit on the top floor. A module may import any module on
a lower floor and, without a circle, one on its own floor; never one above.

Inside each folder, the nodes are its files and sub-folders other than its
`mod.rs` (a sub-folder stands for everything under it). A file names a sibling
by `super::x` or `crate::a::b::x`, in a `use` tree or a path in the code
(inline `mod m { }` blocks read from their file); `mod x;` only makes a child. A child naming its parent
(`super::Item`) and a parent naming its children are the parent/child pattern,
not a circle: only ties between siblings count. Names reached through a
parent's `pub use` count as the parent's, so a circle through a re-export is
not seen.

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

# File circles known and being fixed: folder -> the files in it (none now:
# the last, src/extract/text's chrome, emit and stats, is gone). A circle is
# excused only if all its files are listed here; the script notes an entry
# that no longer matches.
KNOWN_FILE_CIRCLES: dict = {}


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


def module_path(src, path):
    """The module path of a file: src/a/b.rs and src/a/b/mod.rs are ["a", "b"]."""
    parts = os.path.relpath(path, src).split(os.sep)
    parts[-1] = parts[-1][:-3]
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return parts


def inline_mods(code):
    """The spans of inline `mod name { ... }` blocks (nested ones included)."""
    spans = []
    for m in re.finditer(r"\bmod\s+\w+\s*\{", code):
        j, depth = m.end() - 1, 0
        while j < len(code):
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
            if depth == 0:
                break
        spans.append((m.start(), j))
    return spans


def use_paths(code):
    """Every path that starts at `crate`, `super` or `self`, use groups expanded.
    Inside an inline `mod x { ... }`, its leading `super`s that only climb
    back to the file are dropped, so the path is read from the file."""
    out = []
    spans = inline_mods(code)
    for m in re.finditer(r"(?<![\w:])(crate|super|self)\s*::", code):
        depth = sum(1 for a, b in spans if a < m.start() < b)
        for p in tree(code, m.start(), []):
            k = 0
            while k < depth and k < len(p) and p[k] == "super":
                k += 1
            if k:
                p = ["self"] + p[k:]
            out.append(p)
    return out


def tree(code, i, prefix):
    """The paths of the use tree or path at code[i:], each a list of segments."""
    path = list(prefix)
    n = len(code)
    while True:
        while i < n and code[i].isspace():
            i += 1
        if i < n and code[i] == "{":
            out, i = [], i + 1
            while i < n:
                # One item of the group, up to its `,` or the closing `}`.
                j, depth = i, 0
                while j < n and not (depth == 0 and code[j] in ",}"):
                    depth += {"{": 1, "}": -1}.get(code[j], 0)
                    j += 1
                item = code[i:j].strip()
                if item:
                    if item == "self":
                        out.append(path)
                    else:
                        out.extend(tree(code[i:j], 0, path))
                if j >= n or code[j] == "}":
                    break
                i = j + 1
            return out
        m = re.compile(r"(\w+|\*)").match(code, i)
        if not m:
            return [path] if path else []
        path.append(m.group(1))
        i = m.end()
        while i < n and code[i].isspace():
            i += 1
        if code.startswith("::", i):
            i += 2
        else:
            return [path]


def resolve(here, path, modules):
    """The module a path names, from a file at module path `here` (None if none).
    `self` is the file's module and `super` its parent, for `mod.rs` files too."""
    base = list(here)
    segs = list(path)
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] == "self":
        segs = segs[1:]
    while segs and segs[0] == "super":
        if not base:
            return None
        base, segs = base[:-1], segs[1:]
    full = base + [s for s in segs if s != "*"]
    # The longest prefix that is a module of src/.
    for k in range(len(full), -1, -1):
        if tuple(full[:k]) in modules:
            return full[:k]
    return None


def file_circles(src):
    """{folder: [sorted circle, ...]}: import circles between a folder's files."""
    skip = test_files(src)
    files = {}
    for d, _, names in os.walk(src):
        for n in sorted(names):
            path = os.path.join(d, n)
            if n.endswith(".rs") and path not in skip and n not in ("lib.rs", "main.rs"):
                files[path] = module_path(src, path)
    modules = {tuple(m) for m in files.values()} | {()}
    edges = {}
    for path, here in files.items():
        code = strip(open(path, encoding="utf-8").read())
        for p in use_paths(code):
            there = resolve(here, p, modules)
            if there is None:
                continue
            k = 0
            while k < min(len(here), len(there)) and here[k] == there[k]:
                k += 1
            # Siblings only: both strictly below their common folder, not at its top.
            if k >= len(here) or k >= len(there) or k == 0:
                continue
            folder = "/".join(here[:k])
            edges.setdefault(folder, {}).setdefault(here[k], {}).setdefault(there[k], set()).add(
                os.path.relpath(path, src)
            )
    out = {}
    for folder, e in sorted(edges.items()):
        for comp in circles(e):
            out.setdefault(folder, []).append((comp, e))
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
    nfolders = 0
    circled = file_circles(src)
    for folder, found in circled.items():
        for comp, e in found:
            ties = " ; ".join(
                f"{a} -> {b} ({', '.join(sorted(e[a][b]))})" for a in comp for b in sorted(e[a]) if b in comp
            )
            line = f"file circle in src/{folder}: {', '.join(comp)}, by " + ties
            if set(comp) <= set(KNOWN_FILE_CIRCLES.get(folder, [])):
                print("known (being fixed elsewhere): " + line)
                nfolders += 1
            else:
                problems.append(line)
    for folder in sorted(set(KNOWN_FILE_CIRCLES) - set(circled)):
        print(f"note: src/{folder} has no file circle now: remove its KNOWN_FILE_CIRCLES entry")
    for p in problems:
        print(p)
    if problems:
        print(f"layers: {len(problems)} violation(s)")
        return 1
    print(
        f"layers: clean ({len(lib)} modules, {len(FLOORS)} floors, no circle, no upward import, "
        f"no file circle but {nfolders} known)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

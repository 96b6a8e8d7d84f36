#!/usr/bin/env python3
"""How many of the engine's fields each file under src/crawl/engine/ touches.

Reads the field list of `struct Engine` in src/crawl/engine/mod.rs, then, in
every other file of the folder (comments, strings and `#[cfg(test)]` code left
out, as scripts/layers.py does; `#[cfg(test)] mod` files skipped), counts the
distinct fields reached as `self.<field>` or `engine.<field>` (save.rs's free
functions take the engine as `engine`), and the number of such reaches.

Usage: python3 scripts/engine_fields.py [ENGINE_DIR]   (prints a table; exit 0)
Only the standard library is needed.
"""

import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers import strip, test_files  # noqa: E402


def engine_fields(mod_rs):
    """The names of `struct Engine`'s fields, in declaration order."""
    code = strip(open(mod_rs, encoding="utf-8").read())
    m = re.search(r"\bstruct\s+Engine\s*\{", code)
    if not m:
        sys.exit(f"no `struct Engine` in {mod_rs}")
    i, depth = m.end(), 1
    body_start = i
    while depth:
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        i += 1
    body = code[body_start : i - 1]
    # Fields at depth 0 of the body: `name: Type,` (attributes and pub allowed).
    fields, depth, item = [], 0, []
    for c in body:
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        if c == "," and depth == 0:
            fields.append("".join(item))
            item = []
        else:
            item.append(c)
    fields.append("".join(item))
    names = []
    for f in fields:
        f = re.sub(r"#\[[^\]]*\]", "", f)
        m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(\w+)\s*:", f)
        if m:
            names.append(m.group(1))
    return names


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "src/crawl/engine"
    fields = engine_fields(os.path.join(root, "mod.rs"))
    src = os.path.dirname(os.path.dirname(os.path.abspath(root)))
    skip = {os.path.abspath(p) for p in test_files(src)}
    rows = []
    for n in sorted(os.listdir(root)):
        path = os.path.join(root, n)
        if not n.endswith(".rs") or os.path.abspath(path) in skip:
            continue
        code = strip(open(path, encoding="utf-8").read())
        hits = re.findall(r"\b(?:self|engine)\s*\.\s*(\w+)\b(?!\s*\()", code)
        used = [h for h in hits if h in fields]
        distinct = sorted(set(used), key=fields.index)
        rows.append((n, len(distinct), len(used), distinct))
    print(f"Engine: {len(fields)} fields ({', '.join(fields)})")
    print(f"{'file':<14} {'fields':>6} {'reaches':>7}  which")
    for n, d, u, which in rows:
        print(f"{n:<14} {d:>6} {u:>7}  {', '.join(which)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How many of the engine's fields each file under src/crawl/engine/ touches.

Reads the field list of `struct Engine` in src/crawl/engine/mod.rs (and prints
each field's type: the engine is a handful of parts, `Facts`, `Work`, `Book`,
`Sink`, `Ledger`..., that own their state). Then, in every file of the folder
(comments, strings and `#[cfg(test)]` code left out, as scripts/layers.py does;
`#[cfg(test)] mod` files skipped), counts the distinct engine fields reached
as `self.<field>` inside an `impl Engine` block, or as `engine.<field>`
anywhere (save.rs's free functions take the engine as `engine`), and the
number of such reaches.

How it counts, so the count stays honest:
* a field reached through another, `self.facts.config().crawl` or
  `self.work.len()`, counts as the engine field it starts from (`facts`,
  `work`): a part is one field however much of it a file uses;
* `self.x` inside a part's own `impl` (say `impl Work` in work.rs) is the
  part's field, not the engine's, and is not counted: a part's file reaches
  no engine field;
* a call of an engine method (`self.now()`) is not a reach; the file that
  defines the method counts the fields it reaches.

Last, each part's own state: the struct of each engine field's type (found
where mod.rs's `use` names it), its field count and how many are `pub`.

Usage: python3 scripts/engine_fields.py [ENGINE_DIR]   (prints the tables; exit 0)
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


def engine_types(mod_rs, names):
    """`name: Type` of each engine field, as written."""
    code = strip(open(mod_rs, encoding="utf-8").read())
    body = code[re.search(r"\bstruct\s+Engine\s*\{", code).end():]
    out = []
    for n in names:
        m = re.search(r"\b" + n + r"\s*:\s*([^,]+),", body)
        out.append(f"{n}: {' '.join(m.group(1).split())}" if m else n)
    return out


def impl_engine_blocks(code):
    """The text of every `impl Engine { ... }` block in `code`."""
    blocks = []
    for m in re.finditer(r"\bimpl\s+Engine\s*\{", code):
        i, depth = m.end(), 1
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        blocks.append(code[m.end() : i - 1])
    return blocks


def struct_fields(code, name):
    """(fields, pub fields) of `struct <name> { ... }` in `code`, or None."""
    m = re.search(r"\bstruct\s+" + name + r"\s*\{", code)
    if not m:
        return None
    i, depth = m.end(), 1
    while depth:
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        i += 1
    body = re.sub(r"<[^<>]*>", "", code[m.end() : i - 1])
    body = re.sub(r"<[^<>]*>", "", body)
    items = [f for f in body.split(",") if re.search(r"\w+\s*:", f)]
    pub = [f for f in items if re.match(r"\s*pub\b", re.sub(r"#\[[^\]]*\]", "", f))]
    return len(items), len(pub)


def parts(src, root, types):
    """For each engine field's type that is a struct of src/ (found where
    mod.rs's `use` says, else in the engine folder): its file, its fields
    and how many are `pub` (a part that owns its state has none)."""
    mod = strip(open(os.path.join(root, "mod.rs"), encoding="utf-8").read())
    rel_root = os.path.relpath(root, src)
    out = []
    for t in types:
        m = re.search(r"\buse\s+((?:crate::)?[\w:]*?)::" + t + r"\s*;", mod)
        if m and m.group(1).startswith("crate::"):
            base = m.group(1)[len("crate::"):].replace("::", "/")
        elif m:
            base = os.path.join(rel_root, m.group(1).replace("::", "/"))
        else:
            base = os.path.join(rel_root, "mod")
        for cand in (base + ".rs", os.path.join(base, "mod.rs")):
            path = os.path.join(src, cand)
            if os.path.exists(path):
                r = struct_fields(strip(open(path, encoding="utf-8").read()), t)
                if r:
                    out.append((t, cand, r[0], r[1]))
                break
    return out


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
        reach = r"\s*\.\s*(\w+)\b(?!\s*\()"
        hits = re.findall(r"\bengine" + reach, code)
        for block in impl_engine_blocks(code):
            hits += re.findall(r"\bself" + reach, block)
        used = [h for h in hits if h in fields]
        distinct = sorted(set(used), key=fields.index)
        rows.append((n, len(distinct), len(used), distinct))
    print(f"Engine: {len(fields)} fields")
    for t in engine_types(os.path.join(root, "mod.rs"), fields):
        print(f"  {t}")
    print(f"{'file':<14} {'fields':>6} {'reaches':>7}  which")
    for n, d, u, which in rows:
        print(f"{n:<14} {d:>6} {u:>7}  {', '.join(which)}")
    types = [t.split(": ", 1)[1] for t in engine_types(os.path.join(root, "mod.rs"), fields) if ": " in t]
    found = parts(src, root, [t for t in types if re.fullmatch(r"\w+", t)])
    if found:
        print("parts (their own state: fields, of which pub)")
        for t, path, n, pub in found:
            print(f"  {t:<8} {path:<26} {n:>3} fields, {pub} pub")
    return 0


if __name__ == "__main__":
    sys.exit(main())

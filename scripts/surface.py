#!/usr/bin/env python3
"""The library's public surface: which `pub` items could be narrower.

Two lists, per top-level module of src/ (the binary's files, src/cli/ and
src/main.rs, are not the library and are left out):

1. `unreachable_pub`: `pub` items no path from outside the crate reaches (a
   `pub` item in a private module or in a `pub(crate)` type). rustc finds them:
   `cargo rustc --lib --profile check -- -W unreachable_pub` (passing the lint
   to this crate only, so no dependency is rebuilt, unlike RUSTFLAGS).
2. candidates: `pub` items (fn, struct, enum, const, static, type, trait,
   mod, field) of the library whose name occurs nowhere in the library's
   outside users: the binary (src/cli/, src/main.rs), tests/, benches/ and
   fuzz/fuzz_targets/. A name is matched as a bare identifier anywhere in
   those files (comments and strings too), so the list errs on the side of
   keeping `pub`. A candidate may still need `pub`: it appears in the
   signature of an item they use (rustc then warns `private_interfaces`), or
   its struct is built outside with `..Default::default()` (E0451), or a
   `pub use` re-exports it (E0364/E0365: make that re-export `pub(crate)`).

Usage: python3 scripts/surface.py [--no-rustc] [MODULE...]
Prints both lists and their counts; exits 0 (a report, not a gate).
Only the standard library is needed.
"""

import glob
import os
import re
import subprocess
import sys

OUTSIDE = [
    "src/cli/**/*.rs",
    "src/main.rs",
    "tests/**/*.rs",
    "benches/**/*.rs",
    "fuzz/fuzz_targets/*.rs",
]
ITEM = re.compile(
    r"^\s*pub ((?:async |const |unsafe )*(?:fn|struct|enum|const|static|type|trait|mod|union) +"
    r"(?:r#)?([A-Za-z_]\w*))"
)
FIELD = re.compile(r"^\s*pub ((?:r#)?([A-Za-z_]\w*)\s*:)")
IDENT = re.compile(r"[A-Za-z_]\w*")


def module_of(path):
    parts = path.split("/")
    return parts[1].removesuffix(".rs")


def library_files():
    out = []
    for f in sorted(glob.glob("src/**/*.rs", recursive=True)):
        if f == "src/main.rs" or f.startswith("src/cli/"):
            continue
        out.append(f)
    return out


def outside_names():
    names = set()
    for pat in OUTSIDE:
        for f in glob.glob(pat, recursive=True):
            with open(f, encoding="utf-8", errors="replace") as fh:
                names |= set(IDENT.findall(fh.read()))
    return names


def candidates(wanted):
    names = outside_names()
    found = []
    for f in library_files():
        if wanted and module_of(f) not in wanted:
            continue
        with open(f, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                m = ITEM.match(line) or FIELD.match(line)
                if m and m.group(2) not in names:
                    found.append(f"{f}:{i}: {line.strip()[:100]}")
    return found


def unreachable(wanted):
    cmd = [
        "cargo", "rustc", "--lib", "--profile", "check", "--message-format", "short",
        "--", "-W", "unreachable_pub",
    ]
    run = subprocess.run(cmd, capture_output=True, text=True)
    found = []
    for line in run.stderr.splitlines():
        if "unreachable `pub` item" in line and line.startswith("src/"):
            if not wanted or module_of(line.split(":")[0]) in wanted:
                found.append(line)
    return found


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    wanted = set(args)
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if "--no-rustc" not in sys.argv:
        found = unreachable(wanted)
        print("\n".join(found))
        print(f"unreachable_pub: {len(found)}\n")
    found = candidates(wanted)
    print("\n".join(found))
    print(f"pub items no outside user names: {len(found)}")


if __name__ == "__main__":
    main()

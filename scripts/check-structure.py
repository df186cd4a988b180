#!/usr/bin/env python3
"""The shape of the source tree: import cycles, upward arrows, and files that grew too large.

Prints the module graph (an arrow from one top-level module to another where the first names
something of the second), every import cycle among top-level modules and among files, every
arrow that runs upward in the layering below (the one DESIGN.md draws), and the largest
production files. Exits 1 if there is a cycle, an upward arrow or a production file over
MAX_LINES lines; 0 otherwise.

What counts as an import: a `use` of a path of this crate, and any path written out in code
(`crate::a::b`, `super::x`, or a child module's name `child::x` in the file that declares it).
A `mod child;` declaration is not an import. Test code is left out: everything from a file's
first `#[cfg(test)]` at the start of a line (the tests sit at the bottom of each file), or
the whole of a file that starts its code with `#![cfg(test)]`.

Standard library only, so CI needs nothing but Python 3.
"""

import re
import sys
from pathlib import Path

MAX_LINES = 800

# Lowest first. A module may use modules of its own layer and of the layers below, never
# above; within a layer, arrows must not form a cycle.
LAYERS = [
    # Plain types and tables that everything may use.
    ["units", "device", "i18n", "setting", "job", "files", "build_info", "platform"],
    # Accounting and formats the backends report in; spans and their analysis.
    ["memory", "precision", "trace"],
    # The devices.
    ["backend"],
    # Data sets and the model written once against the backend trait.
    ["data", "nn"],
    # What a model would need, predicted: below training, which names what fits a budget.
    ["sim"],
    # Energy: counters read, or rated power from the profiles times the busy time.
    ["energy"],
    # Training runs, and the benchmarks built on them.
    ["train"],
    ["bench"],
    # Guided lessons: presets, the probes that measure them, headlines filled from figures.
    ["lesson"],
    # The window: panels draw state, the app owns it.
    ["ui"],
    ["app"],
    # The command line opens the app or runs the core headless; a browser's page starts the app
    # or its self-test (src/web, built for wasm32 only).
    ["cli", "web"],
]

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"


def module_path(file: Path) -> tuple:
    """`src/a/b.rs` → ('a', 'b'); `src/a/mod.rs` → ('a',); `src/lib.rs` → ()."""
    parts = list(file.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


def production_code(text: str) -> str:
    """The text before the first `#[cfg(test)]` at the start of a line, without comments and
    string literals (which may hold paths that are not imports)."""
    cut = re.search(r"^#!?\[cfg\(test\)\]", text, re.M)
    if cut:
        text = text[: cut.start()]
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not text[i - 1].isalnum()):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + 2 + len(hashes))
            i = n if j < 0 else j + len(end)
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", text[i:]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def production_lines(text: str) -> int:
    cut = re.search(r"^#!?\[cfg\(test\)\]", text, re.M)
    return text[: cut.start()].count("\n") if cut else text.count("\n")


def expand_use_tree(tree: str) -> list:
    """`a::{b, c::{d, e}}` → ['a::b', 'a::c::d', 'a::c::e'] (aliases and globs kept as written)."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [re.sub(r"as\w+$", "", tree)] if tree else []
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    items, depth, start = [], 0, 0
    for k, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(inner[start:k])
            start = k + 1
    items.append(inner[start:])
    paths = []
    for item in items:
        for p in expand_use_tree(item):
            paths.append(prefix + p if p != "self" else prefix.rstrip(":"))
    return paths


def referenced_paths(code: str, here: tuple, children: set) -> list:
    """Absolute module paths (tuples of segments) that `code`, in module `here`, names."""
    found = []

    def absolute(path: str):
        segs = [s for s in path.split("::") if s]
        if not segs:
            return None
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] in ("self", "super"):
            base = list(here)
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    if not base:
                        return None
                    base.pop()
                segs.pop(0)
            return tuple(base + segs)
        if segs[0] in children:
            return tuple(list(here) + segs)
        return None

    for m in re.finditer(r"\buse\s+([^;]+);", code):
        for p in expand_use_tree(m.group(1)):
            a = absolute(p)
            if a is not None:
                found.append(a)
    # Paths written out in code (not in `use`).
    body = re.sub(r"\buse\s+[^;]+;", "", code)
    heads = ["crate", "super", "self"] + sorted(children)
    pattern = r"(?<![\w:])((?:%s)(?:::\w+)+)" % "|".join(re.escape(h) for h in heads)
    for m in re.finditer(pattern, body):
        a = absolute(m.group(1))
        if a is not None:
            found.append(a)
    return found


def resolve(path: tuple, modules: dict):
    """The file of the longest prefix of `path` that is a module with a file of its own."""
    for k in range(len(path), -1, -1):
        if path[:k] in modules:
            return modules[path[:k]]
    return None


def cycles(nodes, edges) -> list:
    """Strongly connected components with more than one node (Tarjan), each as a cycle path."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return [one_cycle(c, edges) for c in out]


def one_cycle(component, edges) -> list:
    """A shortest cycle through the component's first node, for the message."""
    members, start = set(component), component[0]
    paths, seen = [[start]], {start}
    while paths:
        nxt = []
        for p in paths:
            for w in sorted(edges.get(p[-1], ())):
                if w == start:
                    return p + [start]
                if w in members and w not in seen:
                    seen.add(w)
                    nxt.append(p + [w])
        paths = nxt
    return component


def main() -> int:
    files = sorted(p for p in SRC.rglob("*.rs") if p.name != "main.rs")
    modules = {module_path(f): f for f in files}
    file_edges, module_edges = {}, {}
    for f in files:
        here = module_path(f)
        code = production_code(f.read_text(encoding="utf-8"))
        children = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code, re.M))
        for path in referenced_paths(code, here, children):
            target = resolve(path, modules)
            if target is None or target == f:
                continue
            file_edges.setdefault(f, set()).add(target)
            a, b = module_path(f)[:1], module_path(target)[:1]
            if a and b and a != b:
                module_edges.setdefault(a[0], set()).add(b[0])

    rank = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    top = sorted({m[0] for m in modules if m})
    failed = False

    print("Module graph (an arrow: the first module uses the second):")
    for m in sorted(top, key=lambda m: (rank.get(m, -1), m)):
        print(f"  {m:10} → {', '.join(sorted(module_edges.get(m, ()))) or '-'}")

    unplaced = [m for m in top if m not in rank]
    if unplaced:
        failed = True
        print(f"\nModules missing from the layering in {Path(__file__).name}: {', '.join(unplaced)}")

    upward = [
        (a, b)
        for a in sorted(module_edges)
        for b in sorted(module_edges[a])
        if a in rank and b in rank and rank[b] > rank[a]
    ]
    print(f"\nUpward arrows (a lower layer using a higher one): {len(upward)}")
    for a, b in upward:
        failed = True
        print(f"  {a} → {b}")

    module_cycles = cycles(top, module_edges)
    print(f"\nImport cycles among modules: {len(module_cycles)}")
    for c in module_cycles:
        failed = True
        print("  " + " → ".join(c))

    rel = lambda f: str(f.relative_to(ROOT))
    file_cycles = cycles(files, file_edges)
    print(f"\nImport cycles among files: {len(file_cycles)}")
    for c in file_cycles:
        failed = True
        print("  " + " → ".join(rel(f) for f in c))

    sizes = sorted(
        ((production_lines(f.read_text(encoding="utf-8")), f) for f in files), reverse=True
    )
    over = [(n, f) for n, f in sizes if n > MAX_LINES]
    print(f"\nLargest production files (lines before the tests; limit {MAX_LINES}):")
    for n, f in sizes[:10]:
        print(f"  {n:5}  {rel(f)}{'   ← over the limit' if n > MAX_LINES else ''}")
    if over:
        failed = True

    print("\n" + ("FAILED: see above" if failed else "OK: no cycle, no upward arrow, no file too large"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

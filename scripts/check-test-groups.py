#!/usr/bin/env python3
"""The timing tests are one list: those that take `common::alone()` under `cargo test` are
exactly those in nextest's `timing` group (.config/nextest.toml), so a test added to one and
not the other fails here rather than sharing the cores with a neighbour under one runner only.

A test takes the lock if its body calls `alone()` or its file's `one_at_a_time()`; a case run
on both devices by `on_both_devices!` (`name => super::case;`) gives `name::cpu` and
`name::gpu`. Exits 1 with the differences, 0 when the two agree. Standard library only.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAKES_LOCK = re.compile(r"\b(alone|one_at_a_time)\(\)")


def bodies(text):
    """Each top-level function of `text`: (name, whether it is a #[test], its body)."""
    for m in re.finditer(r"^((?:#\[[^\]]*\]\s*)*)(?:pub\s+)?fn (\w+)\b[^{]*\{", text, re.M):
        end = text.find("\n}\n", m.end())
        yield m.group(2), "#[test]" in m.group(1), text[m.end() : end if end >= 0 else None]


def lock_takers():
    """Every integration test that takes the lock, as nextest names it."""
    names = set()
    for path in sorted((ROOT / "tests" / "integration").glob("*.rs")):
        module = path.stem
        text = path.read_text(encoding="utf-8")
        cases = set()
        for name, is_test, body in bodies(text):
            if name == "one_at_a_time" or not TAKES_LOCK.search(body):
                continue
            if is_test:
                names.add(f"{module}::{name}")
            else:
                cases.add(name)
        for m in re.finditer(r"(\w+)\s*=>\s*super::(\w+)\s*;", text):
            if m.group(2) in cases:
                names.update(f"{module}::{m.group(1)}::{d}" for d in ("cpu", "gpu"))
    return names


def grouped():
    """The tests nextest's `timing` group names."""
    text = (ROOT / ".config" / "nextest.toml").read_text(encoding="utf-8")
    block = re.search(r'test-group = "timing"\s*filter = """(.*?)"""', text, re.S)
    return set(re.findall(r"test\(=([\w:]+)\)", block.group(1))) if block else set()


def main():
    takers, group = lock_takers(), grouped()
    if not takers:
        print("no test takes common::alone(): has the lock moved?", file=sys.stderr)
        return 1
    ok = True
    for name in sorted(takers - group):
        print(f"{name} takes common::alone() but is not in nextest's timing group", file=sys.stderr)
        ok = False
    for name in sorted(group - takers):
        print(f"{name} is in nextest's timing group but does not take common::alone()", file=sys.stderr)
        ok = False
    if ok:
        print(f"{len(takers)} timing tests, one at a time under cargo test and under nextest")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

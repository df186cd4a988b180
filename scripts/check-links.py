#!/usr/bin/env python3
"""Every internal link of the built guide and of the repository's front pages leads somewhere.

In the HTML mdBook built (docs/guide/book by default): every href and src that is not an
external address must name a file that exists, and its #fragment an id in that file. In README.md
and ARCHITECTURE.md: every relative Markdown link must name a file or folder of the repository.
Exits 1 with each broken link, where it is and what it points to; 0 when none is broken.
Standard library only.
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
FRONT_PAGES = ["README.md", "ARCHITECTURE.md"]


class Page(HTMLParser):
    """The links and the ids of one HTML page."""

    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value:
                self.links.append(value)


def parsed(path, cache={}):
    if path not in cache:
        page = Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = page
    return cache[path]


def external(link):
    return bool(urlsplit(link).scheme) or link.startswith("//")


def check_book(book):
    broken = []
    pages = sorted(book.rglob("*.html"))
    if not pages:
        return [f"{book}: no HTML pages (was `mdbook build docs/guide` run?)"]
    for page in pages:
        for link in parsed(page).links:
            if external(link):
                continue
            parts = urlsplit(link)
            if not parts.path:
                target = page
            elif parts.path.startswith("/"):
                # Site-relative (mdBook's 404 page): from the book's root.
                target = (book / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(book)}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parsed(target).ids:
                broken.append(f"{page.relative_to(book)}: {link} (no such anchor)")
    return broken


def check_front_pages():
    broken = []
    for name in FRONT_PAGES:
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        # Links outside code spans and blocks.
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if external(link) or link.startswith("#"):
                continue
            target = (path.parent / unquote(urlsplit(link).path)).resolve()
            if not target.exists():
                broken.append(f"{name}: {link} (no such file)")
    return broken


def main():
    book = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "guide" / "book"
    broken = check_book(book.resolve()) + check_front_pages()
    for b in broken:
        print(f"broken link: {b}", file=sys.stderr)
    if broken:
        return 1
    pages = len(list(book.rglob("*.html")))
    print(f"every internal link leads somewhere: {pages} pages of the guide, {', '.join(FRONT_PAGES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

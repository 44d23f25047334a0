"""Check the internal links of the built HTML site: every relative href (and its #anchor) must exist.

Usage: ``python docs/check_links.py docs/_build/html``. External links (http, https, mailto) are not followed:
the build is offline. Exits with status 1 and one line per broken link.
"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        url = attrs.get("href") if tag in ("a", "link") else attrs.get("src") if tag in ("img", "script") else None
        if url:
            self.links.append(url)


def _parse(path, cache):
    if path not in cache:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = page
    return cache[path]


def broken_links(root):
    """Return ``(page, link, reason)`` for every internal link of the HTML files under `root` that does not resolve."""
    root = Path(root).resolve()
    cache, broken = {}, []
    for page in sorted(root.rglob("*.html")):
        if page.relative_to(root).parts[0] in ("_static", "_sources"):  # the theme's templates, not pages
            continue
        for link in _parse(page, cache).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append((page.relative_to(root), link, "missing file"))
            elif (parts.fragment and target.suffix == ".html"
                  and unquote(parts.fragment) not in _parse(target, cache).ids):
                broken.append((page.relative_to(root), link, "missing anchor"))
    return broken


def main(argv=None):
    root = Path((argv or sys.argv[1:] or ["docs/_build/html"])[0])
    if not (root / "index.html").exists():
        print(f"no built site at {root}: run make docs first")
        return 1
    broken = broken_links(root)
    for page, link, reason in broken:
        print(f"{page}: {link} ({reason})")
    n_pages = len(list(root.rglob("*.html")))
    print(f"{n_pages} pages, {len(broken)} broken internal links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

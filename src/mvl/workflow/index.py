"""The results index (``results/index.html``) and the HTML export of executed notebooks.

:func:`build_index` writes one plain HTML page linking every report (its HTML export and the executed
notebook) and every figure of a run, with the profile name, a hash of the merged config, the package version,
the date and the datasets; every link is relative to the page. :func:`check_links` lists the links of a page
that do not resolve to a file, lead to a file whose content no longer matches its checksum sidecar, or lead to a
figure that does not decode. :func:`export_html` converts an executed notebook to HTML with nbconvert (titled by
its heading, code cells left out, figures' alt text from their captions) and writes it atomically, with its
checksum sidecar (as :func:`write_index` the page). No paper section (presentation of the results).

The workflow's rules ``index`` and ``notebook_html`` call :func:`write_index` and :func:`export_html` (through
:mod:`mvl.workflow.jobs`); ``make ci-workflow`` checks the page's links::

    python -m mvl.workflow.index check results/index.html
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import html
import json
import os
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from . import io

__all__ = ["config_hash", "report_entries", "build_index", "write_index", "check_links", "undecodable",
           "export_html", "FIGURE_SUFFIXES"]

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
"""Files counted as figures (in a report's folder or its ``figures/`` subfolder)."""


def config_hash(config):
    """sha256 (hex) of the merged config dumped as JSON with sorted keys."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _figures(folder):
    """Figures of a report folder: ``folder/*`` and ``folder/figures/*`` with a figure suffix, grouped by
    stem (``{stem: [paths]}``, PNG first), hidden and temporary files left out."""
    groups = {}
    for sub in (folder, folder / "figures"):
        if not sub.is_dir():
            continue
        for p in sorted(sub.iterdir()):
            if p.is_file() and p.suffix.lower() in FIGURE_SUFFIXES and not p.name.startswith(".") \
                    and ".tmp" not in p.name:
                groups.setdefault(str(p.with_suffix("")), []).append(p)
    order = {s: k for k, s in enumerate(FIGURE_SUFFIXES)}
    return {stem: sorted(paths, key=lambda p: order[p.suffix.lower()]) for stem, paths in sorted(groups.items())}


def report_entries(notebooks):
    """One entry per executed notebook: its title (first markdown heading), the notebook, the HTML beside it
    and the figures of its folder."""
    out = []
    for nb in map(Path, notebooks):
        out.append({"notebook": nb, "html": nb.with_suffix(".html"), "title": _title(nb),
                    "figures": _figures(nb.parent)})
    return out


def _title(notebook):
    try:
        cells = json.loads(Path(notebook).read_text()).get("cells", [])
    except (OSError, ValueError):
        return Path(notebook).stem
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            src = "".join(cell.get("source", []))
            for line in src.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return Path(notebook).stem


def _link(target, base):
    return quote(os.path.relpath(target, base).replace(os.sep, "/"))


_CSS = """
body { font-family: sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table.run td, table.run th { text-align: left; padding: 2px 12px 2px 0; vertical-align: top; }
code { background: #f3f3f3; padding: 0 3px; }
ul.figures { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 1.5em; }
ul.figures li { width: 20em; }
ul.figures img { width: 100%; border: 1px solid #ddd; }
"""


def build_index(out, notebooks, *, profile="default", config_sha="", version="", date=None, datasets=()):
    """The HTML text of the index page ``out`` (links relative to its folder) for the executed
    ``notebooks``."""
    base = Path(out).parent
    date = date or _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>mvl results</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>mvl results: vector-valued multi-view learning (Minh, Bazzani &amp; Murino, JMLR 2016)</h1>",
        '<table class="run">',
        f"<tr><th>profile</th><td>{e(profile)}</td></tr>",
        f"<tr><th>config hash</th><td><code>sha256:{e(config_sha)}</code> (merged config as JSON, sorted keys)"
        "</td></tr>",
        f"<tr><th>mvl version</th><td>{e(version)}</td></tr>",
        f"<tr><th>date</th><td>{e(date)}</td></tr>",
        f"<tr><th>datasets</th><td>{e(', '.join(datasets)) if datasets else '(none)'}</td></tr>",
        "</table>",
    ]
    entries = report_entries(notebooks)
    if not entries:
        parts.append("<p>No report in this run.</p>")
    parts.append("<h2>Reports</h2><ul>")
    for ent in entries:
        folder = os.path.relpath(ent["notebook"].parent, base).replace(os.sep, "/")
        links = [f'<a href="{_link(ent["html"], base)}">HTML</a>']
        links.append(f'<a href="{_link(ent["notebook"], base)}">notebook</a>')
        parts.append(f"<li><strong>{e(folder)}</strong>: {e(ent['title'])} ({', '.join(links)})</li>")
    parts.append("</ul>")
    for ent in entries:
        if not ent["figures"]:
            continue
        folder = os.path.relpath(ent["notebook"].parent, base).replace(os.sep, "/")
        parts.append(f"<h2>Figures: {e(folder)}</h2>")
        parts.append('<ul class="figures">')
        for stem, paths in ent["figures"].items():
            name = e(Path(stem).name)
            first = paths[0]
            thumb = (f'<a href="{_link(first, base)}"><img src="{_link(first, base)}" alt="{name}"></a><br>'
                     if first.suffix.lower() in (".png", ".svg") else "")
            formats = ", ".join(f'<a href="{_link(p, base)}">{e(p.suffix[1:].upper())}</a>' for p in paths)
            parts.append(f"<li>{thumb}{name} ({formats})</li>")
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _write_page(out, text):
    """``text`` to ``out`` atomically, with its checksum sidecar (:func:`mvl.workflow.io.atomic_path`)."""
    with io.atomic_path(out, checksum=True) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_index(out, notebooks, **kw):
    """Write :func:`build_index` to ``out`` atomically, with its checksum sidecar."""
    _write_page(out, build_index(out, notebooks, **kw))


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)


def undecodable(path):
    """Why the figure ``path`` does not decode (one line), or None: a PNG is decoded in full (every chunk's CRC
    checked, then every pixel read: a truncated file fails), an SVG parsed as XML, a PDF must start with
    ``%PDF-`` and end with ``%%EOF`` (a truncated one does not). Other files: None."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".png":
            from PIL import Image

            with Image.open(path) as im:
                im.verify()  # structure and CRCs
            with Image.open(path) as im:
                im.load()  # every pixel
        elif suffix == ".svg":
            import xml.etree.ElementTree as ET

            ET.parse(path)
        elif suffix == ".pdf":
            data = path.read_bytes()
            if not data.startswith(b"%PDF-"):
                return "not a PDF (no %PDF- header)"
            if b"%%EOF" not in data[-1024:]:
                return "truncated PDF (no %%EOF at the end)"
    except Exception as exc:  # noqa: BLE001  (PIL and expat raise many kinds; each is a bad file)
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    return None


def check_links(page):
    """Links (``href``, ``src``) of the HTML file ``page`` that are not relative paths to an existing file:
    absolute URLs, absolute paths and missing targets, links to a file whose content no longer matches its checksum
    sidecar (:func:`mvl.workflow.io.verify_file`; ``"<link> (content does not match its checksum sidecar ...)"``)
    and links to a figure that does not decode (:func:`undecodable`; listed as
    ``"<link> (does not decode: <reason>)"``). Empty list: every link resolves."""
    page = Path(page)
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    bad = []
    for link in parser.links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or link.startswith("/"):
            bad.append(link)
            continue
        target = page.parent / unquote(parts.path)
        if not target.is_file():
            bad.append(link)
        elif io.verify_file(target) is False:
            bad.append(f"{link} (content does not match its checksum sidecar {io.sidecar_path(target).name})")
        elif target.suffix.lower() in FIGURE_SUFFIXES and (reason := undecodable(target)) is not None:
            bad.append(f"{link} (does not decode: {reason})")
    return bad


HIDDEN_TAGS = ("plumbing", "parameters", "injected-parameters")
"""Cells left out of the HTML page (kept in the notebook): imports and helper definitions (tag "plumbing"), the
notebook's default parameters and papermill's injected values (the report's settings table states them)."""


DEFAULT_ALT = "No description has been provided for this image"
"""The alt text nbconvert gives an image it knows nothing about (replaced by :func:`export_html`)."""


def notebook_title(nb):
    """The text of the notebook's first level-1 heading (a markdown line ``# Title``), or None."""
    for cell in nb.cells:
        if cell.get("cell_type") == "markdown":
            for line in str(cell.get("source", "")).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None


def _markdown_text(cell):
    """A markdown cell's source as plain text: emphasis marks, heading marks and line breaks removed."""
    import re

    text = " ".join(line.lstrip("#").strip() for line in str(cell.get("source", "")).splitlines())
    return re.sub(r"\s+", " ", re.sub(r"[*`]", "", text)).strip()  # blank lines leave no double space


def figure_captions(cells):
    """The alt text of every image output of ``cells``, in order: the caption (the markdown cell right after the
    figure's cell when it starts with "Figure"), else the markdown cell before it (the section that introduces it),
    else "Figure"."""
    out = []
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        n = sum(1 for o in cell.get("outputs", []) if set(o.get("data", {})) & {"image/png", "image/jpeg"})
        if not n:
            continue
        nxt = next((c for c in cells[i + 1:] if c.get("cell_type") == "markdown"), None)
        before = next((c for c in reversed(cells[:i]) if c.get("cell_type") == "markdown"), None)
        if nxt is not None and _markdown_text(nxt).startswith("Figure"):
            alt = _markdown_text(nxt)
        elif before is not None and _markdown_text(before):
            alt = _markdown_text(before)
        else:
            alt = "Figure"
        out += [alt] * n
    return out


def export_html(notebook, out):
    """An executed notebook as a report page (nbconvert's HTML exporter), written atomically: titled by the
    notebook's first heading, outputs and text shown, code left out (the notebook keeps it, and the cells tagged
    with one of :data:`HIDDEN_TAGS` are left out entirely), and every figure's alt text its caption
    (:func:`figure_captions`); the page gets a checksum sidecar like every output."""
    import nbformat
    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)
    nb.cells = [c for c in nb.cells if not set(c.get("metadata", {}).get("tags", [])) & set(HIDDEN_TAGS)]
    title = notebook_title(nb)
    if title:
        nb.metadata["title"] = title
    body, _ = HTMLExporter(exclude_input=True, exclude_input_prompt=True,
                           exclude_output_prompt=True).from_notebook_node(nb)
    soup = BeautifulSoup(body, features="html.parser")
    images = soup.select("div.jp-RenderedImage img")
    captions = figure_captions(nb.cells)
    for img, alt in zip(images, captions, strict=False):
        img["alt"] = alt
    for img in soup.select("img"):  # any image the captions did not reach: the page's title, never the default
        if img.get("alt", DEFAULT_ALT) == DEFAULT_ALT:
            img["alt"] = f"Figure of the report {title}" if title else "Figure of the report"
    _write_page(out, str(soup))


def main(argv=None):
    """``python -m mvl.workflow.index check PAGE``: exit 1 listing the links of PAGE that do not resolve (or
    whose figure does not decode)."""
    p = argparse.ArgumentParser(prog="python -m mvl.workflow.index", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("check", help="fail unless every link of an HTML page resolves to a file and every linked "
                                     "figure decodes")
    s.add_argument("page")
    a = p.parse_args(argv)
    bad = check_links(a.page)
    for link in bad:
        print(f"{a.page}: broken link {link}", file=sys.stderr)
    if bad:
        return 1
    print(f"{a.page}: every link resolves, every figure decodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

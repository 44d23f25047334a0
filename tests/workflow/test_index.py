"""mvl.workflow.index: the results page, its link checker and the HTML export of notebooks; and, on a CI
workflow run, that every link of results/index.html resolves."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest
from conftest import copy_workflow, run_snakemake

from mvl.workflow import index as I
from mvl.workflow.io import verify_file



def test_config_hash_is_sha256_of_sorted_json():
    by_hand = hashlib.sha256(b'{"a": 1, "b": {"c": [2, 3], "d": null}}').hexdigest()
    assert I.config_hash({"b": {"d": None, "c": [2, 3]}, "a": 1}) == by_hand
    assert I.config_hash({"a": 1}) != I.config_hash({"a": 2})


def _notebook(path, title, executed=True):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\nText."),
                nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("x = 2", metadata={"tags": ["injected-parameters"]}),
                nbformat.v4.new_code_cell("import os\n\ndef helper(): pass", metadata={"tags": ["plumbing"]}),
                nbformat.v4.new_code_cell("print(x + 40)")]
    if executed:
        nb.cells[4].outputs = [nbformat.v4.new_output("stream", name="stdout", text="42\n")]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def _figure(path):
    """A small real figure (matplotlib, format from the suffix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.5, 1))
    ax.plot([0, 1, 2], [1, 0, 1])
    fig.savefig(path)
    plt.close(fig)
    return path


def _run_tree(root):
    res = root / "results"
    _notebook(res / "mfeat" / "report.ipynb", "Single-view vs multi-view")
    (res / "mfeat" / "report.html").write_text("<html></html>")
    figs = res / "mfeat" / "figures"
    figs.mkdir()
    for name in ("accuracy_vs_labels.png", "accuracy_vs_labels.pdf", "optc weights.png"):
        _figure(figs / name)
    for name in (".hidden.png", ".accuracy_vs_labels.png.x1.png"):
        (figs / name).write_bytes(b"x")
    _notebook(res / "coreg" / "report.ipynb", "Co-regularization")
    (res / "coreg" / "report.html").write_text("<html></html>")
    return res


def test_index_page_links_reports_and_figures(tmp_path):
    res = _run_tree(tmp_path)
    out = res / "index.html"
    I.write_index(out, [res / "mfeat" / "report.ipynb", res / "coreg" / "report.ipynb"], profile="ci",
                  config_sha="abc123", version="9.9", date="1999-12-31", datasets=["mfeat"])
    page = out.read_text()
    for text in ("<th>profile</th><td>ci</td>", "sha256:abc123", "<td>9.9</td>", "<td>1999-12-31</td>",
                 "<th>datasets</th><td>mfeat</td>", "Single-view vs multi-view", "Co-regularization"):
        assert text in page, text
    for link in ('href="mfeat/report.html"', 'href="mfeat/report.ipynb"', 'href="coreg/report.html"',
                 'href="coreg/report.ipynb"', 'src="mfeat/figures/accuracy_vs_labels.png"',
                 'href="mfeat/figures/accuracy_vs_labels.pdf"', 'href="mfeat/figures/optc%20weights.png"'):
        assert link in page, link
    assert "hidden" not in page and ".x1." not in page  # hidden and temporary files are not figures
    assert I.check_links(out) == []
    # no temporary file left; the page has its checksum sidecar
    assert sorted(p.name for p in res.iterdir()) == ["coreg", "index.html", "index.html.sha256", "mfeat"]


def test_check_links_reports_broken_and_absolute_links(tmp_path):
    (tmp_path / "a.html").write_text("x")
    page = tmp_path / "index.html"
    page.write_text('<a href="a.html">ok</a> <a href="b.html">missing</a> <img src="/etc/hostname">'
                    '<a href="https://example.org/x">web</a> <a href="sub/">folder</a>')
    assert I.check_links(page) == ["b.html", "/etc/hostname", "https://example.org/x", "sub/"]
    assert I.main(["check", str(page)]) == 1


def test_check_links_reports_figures_that_do_not_decode(tmp_path):
    """A figure cut short (a killed plot, a failed copy) or with one byte changed exists but does not decode:
    the check lists it; intact PNG, PDF and SVG files pass."""
    figs = tmp_path / "figures"
    figs.mkdir()
    names = ["ok.png", "ok.pdf", "ok.svg", "cut.png", "flipped.png", "cut.pdf", "cut.svg", "empty.png"]
    for name in names:
        _figure(figs / name.replace("cut", "x").replace("flipped", "y").replace("empty", "z")).rename(figs / name)
    for name in ("cut.png", "cut.pdf", "cut.svg"):
        data = (figs / name).read_bytes()
        (figs / name).write_bytes(data[: len(data) // 2])
    data = bytearray((figs / "flipped.png").read_bytes())
    data[len(data) // 2] ^= 0x01  # inside the image data: its chunk's CRC no longer matches
    (figs / "flipped.png").write_bytes(bytes(data))
    (figs / "empty.png").write_bytes(b"")
    page = tmp_path / "index.html"
    page.write_text("".join(f'<a href="figures/{n}">{n}</a>' for n in names))
    bad = I.check_links(page)
    assert [b.split(" ")[0] for b in bad] == [f"figures/{n}" for n in names[3:]]
    assert all(" (does not decode: " in b for b in bad)
    assert "PDF" in bad[2] and "ParseError" in bad[3]
    assert I.main(["check", str(page)]) == 1
    page.write_text("".join(f'<img src="figures/{n}">' for n in names[:3]))
    assert I.check_links(page) == [] and I.main(["check", str(page)]) == 0


def test_check_links_reports_a_linked_file_that_no_longer_matches_its_sidecar(tmp_path):
    """A report notebook or page cut short after it was written (it decodes as nothing in particular) no longer
    matches its checksum sidecar: the check lists it, beside the figures; files without a sidecar are not judged."""
    from mvl.workflow import io

    nb = _notebook(tmp_path / "mfeat" / "report.ipynb", "Title")
    io.write_sidecar(nb)
    I.export_html(nb, tmp_path / "mfeat" / "report.html")
    (tmp_path / "plain.txt").write_text("no sidecar")
    page = tmp_path / "index.html"
    page.write_text('<a href="mfeat/report.ipynb">nb</a> <a href="mfeat/report.html">html</a> '
                    '<a href="plain.txt">txt</a>')
    assert I.check_links(page) == []
    for p in (nb, tmp_path / "mfeat" / "report.html"):
        p.write_bytes(p.read_bytes()[:100])
    assert I.check_links(page) == [
        "mfeat/report.ipynb (content does not match its checksum sidecar report.ipynb.sha256)",
        "mfeat/report.html (content does not match its checksum sidecar report.html.sha256)"]
    assert I.main(["check", str(page)]) == 1


def test_export_html_reads_as_a_report(tmp_path):
    """The page shows the text and the outputs, titled by the notebook's heading; the code and the plumbing
    (parameters, injected values, imports and helpers) stay in the notebook only."""
    nb = _notebook(tmp_path / "r.ipynb", "Title")
    I.export_html(nb, tmp_path / "out" / "r.html")
    page = (tmp_path / "out" / "r.html").read_text()
    text = re.sub(r"<[^>]+>", "", page)
    assert "<title>Title</title>" in page and "<title>Notebook" not in page
    assert "Text." in text and "42" in text  # text and outputs shown
    assert "print(x + 40)" not in text  # code hidden
    assert "x = 2" not in text and "x = 1" not in text and "def helper" not in text  # plumbing hidden
    assert len(nbformat.read(str(nb), as_version=4).cells) == 5  # and kept in the notebook
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.html", "r.html.sha256"]


_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_export_html_alt_text_from_the_caption(tmp_path):
    """Each figure's alt text is its caption (the markdown cell after it, starting with "Figure"), else the text
    that introduces it; never nbconvert's placeholder."""
    nb = nbformat.v4.new_notebook()
    image = nbformat.v4.new_output("display_data", data={"image/png": _PNG, "text/plain": "<Image>"})
    nb.cells = [nbformat.v4.new_markdown_cell("# Study\n## Accuracy against q\nOne panel per pattern."),
                nbformat.v4.new_code_cell("show()", outputs=[image]),
                nbformat.v4.new_markdown_cell("*Figure: accuracy against l_c, mean over 8 splits.* Read it so."),
                nbformat.v4.new_code_cell("show()", outputs=[image])]
    path = tmp_path / "s.ipynb"
    nbformat.write(nb, str(path))
    I.export_html(path, tmp_path / "s.html")
    page = (tmp_path / "s.html").read_text()
    alts = re.findall(r'<img[^>]*alt="([^"]*)"', page)
    assert alts == ["Figure: accuracy against l_c, mean over 8 splits. Read it so.",
                    "Figure: accuracy against l_c, mean over 8 splits. Read it so."]
    assert I.DEFAULT_ALT not in page
    nb.cells = nb.cells[:2]  # no caption after the figure: the section before it
    nbformat.write(nb, str(path))
    I.export_html(path, tmp_path / "s.html")
    alts = re.findall(r'<img[^>]*alt="([^"]*)"', (tmp_path / "s.html").read_text())
    assert alts == ["Study Accuracy against q One panel per pattern."]


@pytest.mark.slow
def test_ci_run_index_links_resolve(tmp_path, shared_data):
    """The CI profile in a copy of the workflow: results/index.html links both reports (HTML and notebook)
    and every figure, every link resolves, and the reports show tables, not printed text."""
    copy_workflow(tmp_path)
    data = f"data={{mirror: {shared_data}, offline: true}}"
    proc = run_snakemake("--profile", "profiles/ci", "--config", data, cwd=tmp_path, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    index = tmp_path / "results" / "index.html"
    assert I.check_links(index) == []
    page = index.read_text()
    assert "<th>profile</th><td>ci</td>" in page
    for link in ("mfeat/report.html", "mfeat/report.ipynb", "coreg/report.html", "coreg/report.ipynb"):
        assert f'href="{link}"' in page, link
    figures = sorted(p.relative_to(tmp_path / "results").as_posix()
                     for p in (tmp_path / "results" / "mfeat" / "figures").iterdir() if p.suffix != ".sha256")
    assert figures and all(f'"{f}"' in page for f in figures)
    for f in figures:  # every figure has its checksum sidecar, and it matches
        assert verify_file(tmp_path / "results" / f) is True, f
    report = (tmp_path / "results" / "mfeat" / "report.html").read_text()
    assert report.count("<table") >= 8 and "data:image/png;base64" in report
    nb = json.loads((tmp_path / "results" / "mfeat" / "report.ipynb").read_text())
    printed = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "stream"
               and o.get("name") == "stdout"]
    assert printed == []  # every result is a table, a figure or a sentence, none printed as text


def test_every_report_notebook_has_a_title():
    """Each report script in notebooks/ opens with a level-1 heading naming the report: the page's title."""
    import jupytext

    from mvl.workflow.index import notebook_title

    scripts = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.py"))
    assert len(scripts) >= 5
    titles = {p.name: notebook_title(jupytext.read(p)) for p in scripts}
    assert all(t and t.lower() != "notebook" and len(t.split()) >= 3 for t in titles.values()), titles
    assert len(set(titles.values())) == len(titles)  # no two reports share a title

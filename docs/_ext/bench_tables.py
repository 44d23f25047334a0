"""Benchmark result tables, generated from the committed files ``benchmarks/results/*.csv``.

Each file starts with ``# key: value`` lines (``title``, ``command``, ``machine``, ``source``), then a CSV table.
The Sphinx directive ``bench-table`` renders one file as a table with its command and machine, so that the
documentation never holds a hand-typed number; :func:`markdown_table` renders the same file as Markdown for
``benchmarks/README.md``, whose tables ``python docs/_ext/bench_tables.py --check`` compares with the files.
"""

import csv
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
_BLOCK = re.compile(r"<!-- bench-table: (\w+) -->\n(.*?)<!-- end bench-table -->\n", re.S)


def read_result(name):
    """Return ``(meta, header, rows)`` of ``benchmarks/results/<name>.csv``."""
    meta, body = {}, []
    for line in (RESULTS / f"{name}.csv").read_text().splitlines():
        if line.startswith("# ") and not body:
            key, _, value = line[2:].partition(":")
            meta[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    header, *rows = list(csv.reader(io.StringIO("\n".join(body))))
    return meta, header, rows


def markdown_table(name):
    """The result file `name` as a Markdown table followed by its command and machine."""
    meta, header, rows = read_result(name)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    lines += ["", f"`{meta['command']}` ({meta['machine']}; `benchmarks/results/{name}.csv`)", ""]
    return "\n".join(lines)


def render_readme(text):
    """`text` with every ``bench-table`` block replaced by the current rendering of its result file."""
    return _BLOCK.sub(lambda m: f"<!-- bench-table: {m[1]} -->\n{markdown_table(m[1])}<!-- end bench-table -->\n",
                      text)


def _rst_table(name):
    meta, header, rows = read_result(name)
    out = [f".. list-table:: {meta.get('title', name)}", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        cells = [cell.replace("*", r"\*").replace("|", r"\|") or " " for cell in row]
        out.append("   * - " + cells[0])
        out += [f"     - {cell}" for cell in cells[1:]]
    out += ["", f"Command: ``{meta['command']}``. Machine: {meta['machine']}. Source: {meta.get('source', '')}; "
            f"file ``benchmarks/results/{name}.csv``.", ""]
    return out


def setup(app):
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    class BenchTable(SphinxDirective):
        required_arguments = 1

        def run(self):
            name = self.arguments[0]
            self.env.note_dependency(str(RESULTS / f"{name}.csv"))
            container = nodes.container(classes=["bench-table"])
            self.state.nested_parse(StringList(_rst_table(name), source=f"{name}.csv"), self.content_offset,
                                    container)
            return [container]

    app.add_directive("bench-table", BenchTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    readme = ROOT / "benchmarks" / "README.md"
    current, wanted = readme.read_text(), render_readme(readme.read_text())
    if "--check" in sys.argv:
        sys.exit(0 if current == wanted else "benchmarks/README.md: tables differ from benchmarks/results/*.csv; "
                 "run python docs/_ext/bench_tables.py")
    readme.write_text(wanted)

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


def _table_nodes(name):
    """The docutils nodes of result file `name`: a titled table, then its command, machine, source and file."""
    from docutils import nodes

    meta, header, rows = read_result(name)
    table = nodes.table(classes=["bench-table"])
    table += nodes.title(text=meta.get("title", name))
    group = nodes.tgroup(cols=len(header))
    table += group
    group += [nodes.colspec(colwidth=1) for _ in header]
    for section, section_rows in ((nodes.thead(), [header]), (nodes.tbody(), rows)):
        for cells in section_rows:
            row = nodes.row()
            for cell in cells + [""] * (len(header) - len(cells)):
                row += nodes.entry("", nodes.paragraph(text=cell))
            section.append(row)
        group.append(section)
    note = nodes.paragraph(classes=["bench-source"])
    note += [nodes.Text("Command: "), nodes.literal(text=meta["command"]),
             nodes.Text(f". Machine: {meta['machine']}. Source: {meta.get('source', '')}; file "),
             nodes.literal(text=f"benchmarks/results/{name}.csv"), nodes.Text(".")]
    return [table, note]


def setup(app):
    from sphinx.util.docutils import SphinxDirective

    class BenchTable(SphinxDirective):
        required_arguments = 1

        def run(self):
            self.env.note_dependency(str(RESULTS / f"{self.arguments[0]}.csv"))
            return _table_nodes(self.arguments[0])

    app.add_directive("bench-table", BenchTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    readme = ROOT / "benchmarks" / "README.md"
    current, wanted = readme.read_text(), render_readme(readme.read_text())
    if "--check" in sys.argv:
        sys.exit(0 if current == wanted else "benchmarks/README.md: tables differ from benchmarks/results/*.csv; "
                 "run python docs/_ext/bench_tables.py")
    readme.write_text(wanted)

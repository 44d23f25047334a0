"""The package's layering: the solvers and their helpers (``mvl.solvers``, ``mvl.kernels``, ``mvl.graph``, ...) <-
the estimators (``mvl.estimators``) <- data (``mvl.data``) <- workflow (``mvl.workflow``); the package's face
(``mvl/__init__.py``) hands names on from every layer.

Read from the source with :mod:`ast` (every import, also the ones inside functions): imports go only downward,
the import graph has no circle, no module imports a private (``_name``) object of another module, and every
module opens with a docstring.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules():
    out = {}
    for path in sorted((SRC / "mvl").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _imports(name):
    """(imported module, imported names) of every import statement of module ``name`` inside the mvl package."""
    path, is_pkg = MODULES[name]
    package = name if is_pkg else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name, ()) for a in node.names if a.name == "mvl" or a.name.startswith("mvl.")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "mvl" and not target.startswith("mvl."):
                continue
            names = tuple(a.name for a in node.names)
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            found += [(s, ()) for s in submodules]
            if len(submodules) < len(names):
                found.append((target, tuple(n for n in names if f"{target}.{n}" not in MODULES)))
    return found


def _layer(name):
    if name == "mvl.workflow" or name.startswith("mvl.workflow."):
        return 3
    if name == "mvl.data" or name.startswith("mvl.data."):
        return 2
    if name == "mvl.estimators" or name.startswith("mvl.estimators."):
        return 1
    return 0


def test_every_module_opens_with_a_docstring():
    missing = [n for n, (path, _) in MODULES.items() if not ast.get_docstring(ast.parse(path.read_text()))]
    assert missing == []


def test_imports_go_only_downward():
    """No module imports one of a higher layer (module docstring): no solver imports an estimator."""
    upward = [(n, t) for n in MODULES if n != "mvl" for t, _ in _imports(n)
              if _layer(t) > _layer(n)]
    assert upward == []


def test_no_private_names_imported_across_modules():
    private = [(n, t, x) for n in MODULES for t, names in _imports(n) for x in names
               if x.startswith("_") and not (x.startswith("__") and x.endswith("__"))]
    private += [(n, t) for n in MODULES for t, _ in _imports(n) if any(p.startswith("_") for p in t.split(".")[1:])
                and not t.endswith("__init__")]
    assert private == []


def test_import_graph_has_no_circle():
    graph = {n: sorted({t for t, _ in _imports(n) if t in MODULES and t != n}) for n in MODULES}
    # a package's __init__ importing its own submodules is how packages work; a submodule importing its package
    # back (``from mvl import x``) would close a circle and is caught
    state, stack, circles = {}, [], []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for t in graph[n]:
            if state.get(t) == 1:
                circles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[n] = 2

    for n in graph:
        if n not in state:
            visit(n)
    assert circles == []


@pytest.mark.parametrize("name", ["MVLLeastSquares", "MVLLeastSquaresOptC", "MVLSVM", "MVLBinarySVM", "MVML",
                                  "KernelMultiViewPerceptron", "OrthogonalMultiViewPerceptron"])
def test_public_estimators_import_from_mvl(name):
    import mvl

    assert isinstance(getattr(mvl, name), type)


def test_import_mvl_loads_neither_data_nor_workflow():
    import subprocess
    import sys

    code = ("import sys, mvl, mvl.kernels; "
            "print(sorted(m for m in sys.modules if m.startswith(('mvl.data', 'mvl.workflow'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_snakefile_imports_nothing_heavy_while_parsed():
    """The modules the Snakefile and its rule files import at the top level (settings, registries, the sidecar
    check) load neither numpy, scipy, scikit-learn nor pandas: parsing stays fast, the jobs import the solvers."""
    import re
    import subprocess
    import sys

    workflow = SRC.parent / "workflow"
    text = "\n".join(p.read_text() for p in sorted((workflow / "rules").glob("*.smk")))
    top = [line for line in text.splitlines() if re.match(r"(from mvl[\w.]* import|import mvl)", line)]
    # the Snakefile's block run while parsed (the sidecar check) too
    top += [line.strip() for line in (SRC.parent / "Snakefile").read_text().splitlines()
            if re.match(r"\s*(from mvl[\w.]* import|import mvl)", line)]
    assert any("mvl.workflow.settings" in line for line in top), top
    code = "; ".join(top + ["import sys", "print(sorted(m for m in ('numpy', 'scipy', 'sklearn', 'pandas') "
                                          "if m in sys.modules))"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", top

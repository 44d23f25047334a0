"""The README and the user guide: their code examples run as written, the README stays short and its links exist."""

import re
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"


def _blocks(path, heading):
    """The ```python blocks of the section `heading` (up to the next heading of the same level) of `path`."""
    text = path.read_text()
    level = heading.split(" ", 1)[0]
    section = text[text.index(heading):]
    end = section.find(f"\n{level} ", 3)
    section = section if end < 0 else section[:end]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_readme_is_short_and_its_links_exist():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, len(lines)
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") for link in local)
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_readme_first_fit_runs(capsys):
    blocks = _blocks(README, "## A first fit")
    assert len(blocks) == 1
    exec(compile(blocks[0], str(README), "exec"), {})
    assert float(capsys.readouterr().out) > 0.9  # three mfeat views, about 200 labels: well above chance (0.1)


def test_api_examples_run(capsys):
    """The user guide's scikit-learn examples (both input forms, GridSearchCV on the embedded data, then
    MVLLeastSquaresCV) run as written."""
    path = GUIDE / "estimators.md"
    blocks = _blocks(path, "## In scikit-learn's tools") + _blocks(path, "## Defaults, and choosing the graph")
    assert len(blocks) == 3
    namespace = {}
    for code in blocks:  # the later blocks continue the first (ds, X, train, test, y)
        exec(compile(code, str(path), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4
    accuracy_cv = float(out[0].rsplit(" ", 1)[1])
    accuracy_pre = float(out[1])
    assert accuracy_cv > 0.9 and accuracy_pre > 0.9  # three mfeat views, 200 labels: well above chance (0.1)
    # MVLLeastSquaresCV: a graph of the grid, its CV accuracy, then the refit's test accuracy
    k, p, cv_accuracy = out[2].split()
    cv = namespace["cv"]
    assert (int(k), int(p)) in [tuple(g) for g in cv.graphs] and float(cv_accuracy) == round(cv.best_score_, 2)
    assert cv.n_splits_ == 3 and len(cv.cv_results_["params"]) == 4 * 1 * 4 * 4
    assert float(cv_accuracy) > 0.85 and float(out[3]) > 0.9


def test_scale_example_runs_at_reduced_size(capsys):
    """The 100,000-sample example of "Choosing a solver", run as written but with 4,000 training points and 500
    centres (the full size is measured by benchmarks/bench_scale.py): unlabelled data help, i.e. it beats the same
    model fitted on the 20 labelled points alone."""
    path = GUIDE / "solvers.md"
    blocks = _blocks(path, "## Which solver at 50,000 points?")
    assert len(blocks) == 1
    code = blocks[0].replace("102_000", "5_000").replace("100_000", "4_000").replace("n_components=1000",
                                                                                       "n_components=500")
    assert code.count("4_000") == 6
    namespace = {}
    exec(compile(code, str(path), "exec"), namespace)
    semi = float(capsys.readouterr().out.strip())
    from mvl import MVLLeastSquares

    lab = namespace["y_semi"] >= 0
    sup = MVLLeastSquares(solver="structured", kernel="rbf", views=namespace["data"].view_sizes,
                          bandwidth=namespace["sigma"], gamma_A=1e-4).fit(namespace["X"][lab], namespace["y_semi"][lab])
    alone = sup.score(namespace["X_test"], namespace["y_test"])
    assert semi > alone + 0.1, (semi, alone)


def test_incomplete_views_example_runs(capsys):
    """The example of "Incomplete views" runs as written: with 40 % of the (sample, view) entries missing, the fit
    on the views each sample has beats mean imputation of the same model (0.8 vs 0.73 printed)."""
    path = GUIDE / "incomplete.md"
    blocks = _blocks(path, "# Incomplete views")
    assert len(blocks) == 1
    exec(compile(blocks[0], str(path), "exec"), {})
    incomplete, imputed = (float(v) for v in capsys.readouterr().out.split())
    assert incomplete > 0.75 and incomplete > imputed + 0.02, (incomplete, imputed)


def test_benchmark_tables_match_their_result_files():
    """benchmarks/README.md's tables are the renderings of benchmarks/results/*.csv (docs/_ext/bench_tables.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_tables", ROOT / "docs" / "_ext" / "bench_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "benchmarks" / "README.md").read_text()
    assert "<!-- bench-table:" in text
    assert module.render_readme(text) == text, "run python docs/_ext/bench_tables.py"


def test_unlabelled_marker_examples_run(capsys):
    """The user guide's ways of marking unlabelled samples (integers, numpy strings, object arrays, pandas
    categoricals) run as written and give the same labelled samples."""
    path = GUIDE / "estimators.md"
    blocks = _blocks(path, "## Marking unlabelled samples")
    assert len(blocks) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(compile(blocks[0], str(path), "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out == ["[3 7] 12"] + ["['cat' 'dog'] 12"] * 3

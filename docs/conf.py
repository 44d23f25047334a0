"""Sphinx configuration of the mvl documentation site (``make docs``)."""

import os
import sys
from pathlib import Path

import mvl

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

project = "mvl"
author = "mvl developers"
copyright = "mvl developers, BSD-3-Clause"
version = release = mvl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "bench_tables",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
templates_path = ["_templates"]
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.json", "sg_execution_times.rst",
                    "examples/README.rst", "check_links.py"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# the API reference: autosummary pages generated from the numpydoc docstrings at build time
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"


def _module_constants():
    """Module-level constants (UPPER_CASE data, not classes, functions or modules) of every mvl module, so that the
    module pages give them a cross-reference target: (name, documented) pairs, documented when the source gives
    the constant a docstring or a ``#:`` comment (shown by autodata; the others get a bare target, not the
    docstring of their type)."""
    import importlib
    import inspect
    import pkgutil

    from sphinx.pycode import ModuleAnalyzer

    found = {}
    for info in pkgutil.walk_packages(mvl.__path__, "mvl."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        documented = {name for (scope, name) in ModuleAnalyzer.for_module(info.name).find_attr_docs() if not scope}
        found[info.name] = [
            (name, name in documented) for name, value in sorted(vars(module).items())
            if name.isupper() and len(name) > 1 and not name.startswith("_")
            and not (inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value))]
    return found


autosummary_context = {"module_constants": _module_constants()}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# offline build: no intersphinx inventories are fetched; external types in signatures are not cross-referenced
intersphinx_mapping = {}
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|sklearn|pandas|pd|matplotlib|snakemake|h5py|collections|typing|pathlib|os)\..*"),
    (r"py:.*", r"(hashlib|importlib)(\..*)?"),
    # private helpers (leading underscore) have no pages of their own
    (r"py:.*", r"(.*\.)?_[A-Za-z]\w*(\..*)?"),
]


def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated metadata-routing methods (set_fit_request, ...): not mvl's API."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def _resolve_short_name(app, env, node, contnode):
    """Resolve a docstring's short or pre-move name (``MVLLeastSquares``, ``predict`` inside a class,
    ``mvl.least_squares.encode_targets``) to the one documented object it names: the public ``mvl.<name>`` first,
    then the same class's member, then a unique suffix match. Anything else stays a warning."""
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    objects = env.get_domain("py").objects
    target = node["reftarget"].lstrip(".~")
    short = target.split(".", 1)[1] if target.startswith("mvl.") else target
    candidates = [f"mvl.{short}"]
    if node.get("py:class"):
        candidates.append(f"{node.get('py:module')}.{node['py:class']}.{short}")
    found = next((name for name in candidates if name in objects), None)
    while found is None and short:
        matches = [name for name in objects if name.endswith("." + short)]
        if len(matches) == 1:
            found = matches[0]
        short = short.split(".", 1)[1] if "." in short and len(matches) == 0 else ""
    if found is None:
        return None
    entry = objects[found]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, found)


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("missing-reference", _resolve_short_name)

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 1,
    "reference_url": {"mvl": None},
}

html_theme = "pydata_sphinx_theme"
html_title = f"mvl {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": True,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": [], "changelog": [], "about": [], "getting_started": [], "benchmarks": []}
html_show_sourcelink = False

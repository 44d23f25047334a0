"""A prepared paper data set (:func:`mvl.data.paper.prepare`, Section 7.2) on disk, in a format that cannot run
code when loaded: one ``.npz`` read with ``allow_pickle=False``, holding the object's arrays and, under
``__meta__``, a JSON description of its fields (numbers, strings, tuples, dicts, and references to the arrays).

Only the paper data classes of :data:`CLASSES` are rebuilt; a file naming another class, a pickle, or an npz
with object arrays is refused with :class:`PreparedFileError`. No paper section (storage of Section 7.2's data).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from . import io

__all__ = ["CLASSES", "PreparedFileError", "save_prepared", "load_prepared"]

FORMAT = "mvl-prepared-1"
META = "__meta__"


def _classes():
    from ..data import paper

    return {c.__name__: c for c in (paper.Flowers17, paper.Caltech101Split, paper.CUB200)}


CLASSES = ("Flowers17", "Caltech101Split", "CUB200")
"""The data classes a prepared file may hold (:mod:`mvl.data.paper`)."""


class PreparedFileError(ValueError):
    """A prepared file that is not in the npz format of :func:`save_prepared` (e.g. a pickle)."""


def _encode(value, arrays):
    """JSON-able form of ``value``; arrays go to ``arrays`` under a generated key and are referenced by it."""
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise TypeError("object arrays are not stored (they need pickle)")
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"array": key}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return {"int": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"float": float(value).hex()}  # exact
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, arrays) for v in value]}
    if isinstance(value, list):
        return {"list": [_encode(v, arrays) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[_encode(k, arrays), _encode(v, arrays)] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__} in a prepared file")


def _decode(node, arrays):
    if node is None or isinstance(node, (bool, str)):
        return node
    if not isinstance(node, dict) or len(node) != 1:
        raise PreparedFileError(f"unexpected entry {node!r} in the description")
    (kind, v), = node.items()
    if kind == "array":
        return arrays[v]
    if kind == "int":
        return int(v)
    if kind == "float":
        return float.fromhex(v)
    if kind == "tuple":
        return tuple(_decode(x, arrays) for x in v)
    if kind == "list":
        return [_decode(x, arrays) for x in v]
    if kind == "dict":
        return {_decode(k, arrays): _decode(x, arrays) for k, x in v}
    raise PreparedFileError(f"unexpected entry kind {kind!r} in the description")


def save_prepared(out, data, *, inputs=()):
    """Write the prepared data set ``data`` (an instance of a class of :data:`CLASSES`) to ``out`` (an ``.npz``,
    atomically, with its SHA-256 sidecar)."""
    name = type(data).__name__
    if name not in CLASSES or not dataclasses.is_dataclass(data):
        raise TypeError(f"a prepared file holds one of {CLASSES}, not {name}")
    arrays = {}
    fields = {f.name: _encode(getattr(data, f.name), arrays) for f in dataclasses.fields(data)}
    meta = json.dumps({"format": FORMAT, "class": name, "fields": fields}, sort_keys=True)
    io.save_npz(out, checksum=True, inputs=inputs, **{META: np.array(meta)}, **arrays)


def load_prepared(path):
    """The prepared data set of ``path`` (written by :func:`save_prepared`). The file is read with
    ``allow_pickle=False``: a pickle, an npz with object arrays or one naming an unknown class is refused with
    :class:`PreparedFileError` and nothing of it is executed."""
    path = Path(path)
    what = f"{path}: not a prepared data file of mvl (an npz written by mvl.workflow.prepared.save_prepared)"
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head != b"PK\x03\x04":  # npz = zip; a pickle starts with b"\x80"
        kind = "a pickle, which is never loaded (it could run code)" if head[:1] == b"\x80" else "not an npz"
        raise PreparedFileError(f"{what}; it is {kind}. Delete it and rerun the prepare step.")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except ValueError as exc:  # an object array inside the npz
        raise PreparedFileError(f"{what}; {exc}. Delete it and rerun the prepare step.") from None
    try:
        meta = json.loads(str(arrays.pop(META)[()]))
    except (KeyError, ValueError, IndexError) as exc:
        raise PreparedFileError(f"{what}; no readable {META} entry ({exc})") from None
    if meta.get("format") != FORMAT or meta.get("class") not in CLASSES:
        raise PreparedFileError(f"{what}; format {meta.get('format')!r}, class {meta.get('class')!r} "
                                f"(expected {FORMAT!r}, one of {CLASSES})")
    cls = _classes()[meta["class"]]
    values = {k: _decode(v, arrays) for k, v in meta["fields"].items()}
    init = {f.name for f in dataclasses.fields(cls) if f.init}
    obj = cls(**{k: v for k, v in values.items() if k in init})
    for k, v in values.items():  # fields set by __post_init__ (CUB200.view_names): must agree
        if k not in init and getattr(obj, k) != v:
            raise PreparedFileError(f"{what}; field {k} is {v!r}, the class derives {getattr(obj, k)!r}")
    return obj

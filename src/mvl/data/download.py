"""Downloads of the paper's data sets (Section 7.2), with verification, a local mirror and an offline check.

Every file a data set needs is listed in ``REGISTRY`` as a :class:`RemoteFile`: its path relative to a
data root (the layout of ``../shared/data``: ``flowers17/``, ``caltech101/``, ``cub/``,
``ssl_benchmarks/``, ``multiview_mnist/``), its canonical URL and either a known checksum
(``"md5:..."`` / ``"sha256:..."``) or a structural validator (expected variables, shapes, dtype,
symmetry, zero diagonal, non-negative distances, ...; the validators and every file-format reader live in
:mod:`mvl.data.formats`: this module parses no file format). Some files are members of an archive (the CUB
metadata and attributes live in ``CUB_200_2011.tgz``); they are extracted from the verified archive.

Where a file comes from, in this order:

1. ``data_mirror`` (a local directory with the same relative layout; CI passes ``../shared/data``).
   Mirror files are read in place and verified (a file the registry has no checksum for also against the
   mirror's ``SHA256SUMS`` when that lists it, :data:`MIRROR_SUMS`); a mirror file that fails verification is an
   error (never silently replaced).
2. the cache directory ``cache_dir`` (files downloaded before). A cached file is trusted only if its
   checksum matches, or -- for files checked structurally -- if it passed validation before and its
   SHA-256 still equals the one recorded then (``.<name>.verified`` beside it). A cached file that
   fails is removed and downloaded again (or, offline, reported).
3. the network (not when ``offline``): pooch streams the file into a temporary file in the cache
   folder, checks the known hash, retries ``retries`` times, and only then renames it into place; the
   structural validator runs next, and a file that fails it is deleted. An interrupted, truncated or
   corrupted download therefore never leaves a file that a rerun would trust.

:func:`check_available` is meant to run before any job starts: offline, it raises ONE
:class:`DataUnavailableError` naming every missing file, its URL and the ``data_mirror`` option;
:func:`verify_available` (the ``check`` command and the workflow's parse-time check) also verifies every local
copy and raises ONE :class:`DataIntegrityError` with a line per corrupted file. :func:`fetch` returns
``{relative path: local path}`` for a data set; the loaders of :mod:`mvl.data.paper` take that mapping.

The URLs of the Caltech-101 kernels (Vedaldi et al. 2009, distributed from
https://www.robots.ox.ac.uk/~vgg/software/MKL/, footnote 4 of the paper; layout
``cal101-ker-15-<s>/<kernel>.mat``, ``cal101-ker-15-<s>/test_<kernel>.mat`` and
``cal101-meta/meta-15-<s>.mat``, see :mod:`mvl.data.paper` for what is known and what is
assumed) and of the multi-view MNIST wheel could not be verified from this machine; they are
documented assumptions and can be replaced through the ``urls`` option (config ``data.urls``) or
``base_url`` without touching the code. The Flowers-17 distance matrices and the Caltech-101
kernels have no published checksum: they are validated structurally, and the SHA-256 seen at
validation is recorded so that later changes to the cached file are detected.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tarfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path


from ..fileio import atomic_path, file_digest
from .errors import DataDownloadError, DataError, DataIntegrityError, DataUnavailableError
from .formats import (
    mat_variables,
    validate_caltech101_meta,
    validate_caltech101_test_kernel,
    validate_caltech101_train_kernel,
    validate_cub_id_table,
    validate_cub_image_attribute_labels,
    validate_distance_matrices,
    validate_flowers17_datasplits,
    validate_hdf5,
)

__all__ = [
    "RemoteFile",
    "DataOptions",
    "DataError",
    "DataUnavailableError",
    "DataIntegrityError",
    "MIRROR_SUMS",
    "mirror_checksums",
    "DataDownloadError",
    "REGISTRY",
    "DATASETS",
    "dataset_files",
    "check_available",
    "verify_available",
    "fetch",
    "fetch_file",
    "file_hash",
    "main",
]

ENV_MIRROR = "MVL_DATA_MIRROR"
ENV_CACHE = "MVL_DATA_CACHE"
ENV_OFFLINE = "MVL_OFFLINE"
MARKER_SUFFIX = ".verified"


# ----------------------------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class RemoteFile:
    """One file of a data set.

    ``relpath`` is the path relative to a data root (mirror or cache), ``url`` the canonical URL,
    ``known_hash`` a pooch-style checksum (``"md5:<hex>"`` or ``"sha256:<hex>"``) or None, and
    ``validator`` a callable ``validator(path)`` raising :class:`DataIntegrityError` (used when no
    checksum is known, or in addition to it). Archive members have ``archive`` (the RemoteFile of the
    archive) and ``member`` (their path inside it); ``url`` is then the archive's URL. Files with
    ``required=False`` are not needed by the loaders and are skipped unless asked for.
    """

    relpath: str
    url: str
    known_hash: str | None = None
    validator: Callable[[Path], None] | None = field(default=None, compare=False)
    archive: RemoteFile | None = None
    member: str | None = None
    required: bool = True
    description: str = ""

    @property
    def source(self) -> str:
        """Human-readable origin: the URL, or the archive member and the archive's URL."""
        if self.archive is not None:
            return (f"member {self.member} of {self.archive.url} (or put {self.archive.relpath} "
                    f"into the mirror)")
        return self.url


def file_hash(path, algorithm="sha256"):
    """Hex digest of a file (:func:`mvl.fileio.file_digest`)."""
    return file_digest(path, algorithm)


def _split_hash(known_hash):
    algorithm, _, digest = known_hash.partition(":")
    if not digest:
        algorithm, digest = "sha256", known_hash
    return algorithm.lower(), digest.lower()


# ------------------------------------------------------------------------------------------ the registry

FLOWERS17_URL = "https://www.robots.ox.ac.uk/~vgg/data/flowers/17/"
FLOWERS17_DATASPLITS_MD5 = "md5:4828cddfd0d803c5abbdebcb1e148a1e"
CALTECH101_URL = "https://www.robots.ox.ac.uk/~vgg/software/MKL/"
CALTECH101_KERNEL_NAMES = (
    "echi2_phowColor_L0", "echi2_phowColor_L1", "echi2_phowColor_L2",
    "echi2_phowGray_L0", "echi2_phowGray_L1", "echi2_phowGray_L2",
    "echi2_ssim_L0", "echi2_ssim_L1", "echi2_ssim_L2",
    "el2_gb",
)
CALTECH101_TEST_PREFIX = "test_"
CALTECH101_N_TRAIN = 15
CALTECH101_SPLITS = (1, 2, 3)
CUB_ARCHIVE_URL = "https://data.caltech.edu/records/65de6-vp158/files/CUB_200_2011.tgz?download=1"
CUB_ARCHIVE_MD5 = "md5:97eceeb196236b17998738112f37df78"
STAR_SVM_URL = "https://raw.githubusercontent.com/edche/star_svm/c96d22fd79e28287ed8b400b00d6251214cdf3e9/data/"
COIL20_URL = "http://www.cad.zju.edu.cn/home/dengcai/Data/COIL20/COIL20.mat"
MNIST_WHEEL_URL = ("https://files.pythonhosted.org/packages/py3/s/scikit-multimodallearn/"
                   "scikit_multimodallearn-0.1.0-py3-none-any.whl")


def caltech101_split_dir(split, n_train=CALTECH101_N_TRAIN):
    """Folder of one split's kernels, as read by the authors' code: ``cal101-ker-<N>-<split>``."""
    return f"cal101-ker-{n_train}-{split}"


def caltech101_meta_name(split, n_train=CALTECH101_N_TRAIN):
    """Metadata file of one split: ``cal101-meta/meta-<N>-<split>.mat``."""
    return f"cal101-meta/meta-{n_train}-{split}.mat"


def _flowers17():
    it = ("D_hog", "D_hsv", "D_siftbdy", "D_siftint")
    gc = ("D_colourgc", "D_shapegc", "D_texturegc")
    archive = RemoteFile("flowers17/17flowers.tgz", FLOWERS17_URL + "17flowers.tgz", required=False,
                         description="the 1360 images (only files.txt is used)")
    return (
        RemoteFile("flowers17/datasplits.mat", FLOWERS17_URL + "datasplits.mat", FLOWERS17_DATASPLITS_MD5,
                   validate_flowers17_datasplits, description="trn/val/tst 1..3, 1-based image indices"),
        RemoteFile("flowers17/distancematrices17itfeat08.mat", FLOWERS17_URL + "distancematrices17itfeat08.mat",
                   None, validate_distance_matrices(it), description="chi2 distances: HOG, HSV, SIFT bdy/int"),
        RemoteFile("flowers17/distancematrices17gcfeat06.mat", FLOWERS17_URL + "distancematrices17gcfeat06.mat",
                   None, validate_distance_matrices(gc), description="chi2 distances: colour, shape, texture"),
        RemoteFile("flowers17/files.txt", archive.url,
                   "sha256:0b094291e980cadc8b9355478e70e148f907b975f1c2474579c6e2ed77fb0ec8",
                   archive=archive, member="jpg/files.txt", required=False, description="image file names"),
    )


def _caltech101(n_train=CALTECH101_N_TRAIN, splits=CALTECH101_SPLITS):
    files = []
    for s in splits:
        folder = caltech101_split_dir(s, n_train)
        meta = caltech101_meta_name(s, n_train)
        files.append(RemoteFile(f"caltech101/{meta}", CALTECH101_URL + meta, None, validate_caltech101_meta,
                                description=f"train/test classes and names, split {s}"))
        for name in CALTECH101_KERNEL_NAMES:
            rel = f"{folder}/{name}.mat"
            files.append(RemoteFile(f"caltech101/{rel}", CALTECH101_URL + rel, None,
                                    validate_caltech101_train_kernel, description=f"{name} train x train"))
        for name in CALTECH101_KERNEL_NAMES:
            rel = f"{folder}/{CALTECH101_TEST_PREFIX}{name}.mat"
            files.append(RemoteFile(f"caltech101/{rel}", CALTECH101_URL + rel, None,
                                    validate_caltech101_test_kernel, description=f"{name} train x test"))
    return tuple(files)


def _cub():
    archive = RemoteFile("cub/CUB_200_2011.tgz", CUB_ARCHIVE_URL, CUB_ARCHIVE_MD5,
                         description="CUB-200-2011 images and annotations (1.1 GB)")

    def member(rel, inside, known_hash=None, validator=None, required=True, description=""):
        return RemoteFile(f"cub/{rel}", archive.url, known_hash, validator, archive=archive, member=inside,
                          required=required, description=description)

    sha = "sha256:"
    return (
        member("images.txt", "CUB_200_2011/images.txt",
               sha + "e1cfc5ed1f4bd1b838040784b6f75c44f7a25d9b31707a3adab49ec694618c1f",
               validate_cub_id_table("str"), description="<image_id> <image_name>"),
        member("image_class_labels.txt", "CUB_200_2011/image_class_labels.txt",
               sha + "e9df8c96d897994a245746fe2c98914b9b31f5342bddc6e8b06bdfbf45e49b02",
               validate_cub_id_table("int"), description="<image_id> <class_id>"),
        member("train_test_split.txt", "CUB_200_2011/train_test_split.txt",
               sha + "8bbbfcc09b4d3c9c6e3e40c9874bd863eb6658f4f456e472df1b33d3403d2600",
               validate_cub_id_table("int"), description="<image_id> <is_training_image>"),
        member("classes.txt", "CUB_200_2011/classes.txt",
               sha + "66a884364a73edde6c71eeb7fd5d8bb791e80979b64759bd6a5d5d209bdc02ba",
               validate_cub_id_table("str"), description="<class_id> <class_name>"),
        member("attributes/image_attribute_labels.txt", "CUB_200_2011/attributes/image_attribute_labels.txt",
               None, validate_cub_image_attribute_labels,
               description="<image_id> <attribute_id> <is_present> <certainty_id> <time> (312 per image)"),
        member("attributes.txt", "attributes.txt", None, None, required=False,
               description="<attribute_id> <attribute_name> (at the archive's top level)"),
        member("attributes/certainties.txt", "CUB_200_2011/attributes/certainties.txt",
               sha + "7205e8de1c07f81f9e7ffc19c42a8bae21cb30bbcb2ab4a188e2959517dae551", required=False),
        member("attributes/class_attribute_labels_continuous.txt",
               "CUB_200_2011/attributes/class_attribute_labels_continuous.txt",
               sha + "6e7ead7702809b5f503b4b51ea421bddcec73ffa67df41a8004b323f7f59f52b", required=False),
        member("bounding_boxes.txt", "CUB_200_2011/bounding_boxes.txt",
               sha + "c19d9f096c15564793408e5ba054b8d715a6805819d98f037c977f369ef4abd3", required=False),
    )


def _ssl_benchmarks():
    sha = "sha256:"
    return (
        RemoteFile("ssl_benchmarks/g50c.mat", STAR_SVM_URL + "g50c.mat",
                   sha + "9f0d95cb5884d817c1165861b347a428bcc255566d1e74c871bd0de58b23423f",
                   mat_variables({"X": 550, "y": 550}), description="G50C, X 550x50, y +-1, idxLabs/idxUnls"),
        RemoteFile("ssl_benchmarks/uspst.mat", STAR_SVM_URL + "uspst.mat",
                   sha + "53577dbe246b303b07e5a03bcd7ea93582c8c2bbfac1508040f829d24c4a4918",
                   mat_variables({"X": 2007, "y": 2007}), description="USPST, X 2007x256, y 0-9"),
        RemoteFile("ssl_benchmarks/text1.mat", STAR_SVM_URL + "text1.mat",
                   sha + "2254d508519ae589afd132a3d00cd6b6de0d29caacc00168daa9fa1984618c09",
                   mat_variables({"X": 1946, "y": 1946}), description="PCMAC (text1), sparse X 1946x7511"),
        RemoteFile("ssl_benchmarks/g10n.mat", STAR_SVM_URL + "g10n.mat",
                   sha + "888b679b7af0898e6524bd651f0dbd09a6a271ea6534f640ef20beabc4086056",
                   mat_variables({"X": 550, "y": 550}), required=False, description="G10N"),
        RemoteFile("ssl_benchmarks/COIL20_cai.mat", COIL20_URL,
                   sha + "4595ebdda07f47b0eb014fcfaddc22b452f9aed9c1d9261a0d5bc336c1ee1344",
                   mat_variables({"X": 1440, "Y": 1440}), description="COIL-20 (Deng Cai), X 1440x1024, Y 1..20"),
    )


def _multiview_mnist():
    wheel = RemoteFile("multiview_mnist/scikit_multimodallearn-0.1.0-py3-none-any.whl", MNIST_WHEEL_URL,
                       description="scikit-multimodallearn 0.1.0 wheel (BSD-3)")
    return (
        RemoteFile("multiview_mnist/multiview_mnist.hdf5", wheel.url,
                   "sha256:1d0e2b2c32bb9520d64de12429edd14cf49ae08d6528c1b5f7927a0947063ea4", validate_hdf5,
                   archive=wheel, member="multiview_mnist.hdf5",
                   description="View0..View3 (5000x192), Labels (5000)"),
    )


REGISTRY: dict[str, tuple[RemoteFile, ...]] = {
    "flowers17": _flowers17(),
    "caltech101": _caltech101(),
    "cub": _cub(),
    "ssl_benchmarks": _ssl_benchmarks(),
    "multiview_mnist": _multiview_mnist(),
}
DATASETS = tuple(REGISTRY)
_ALIASES = {"flowers": "flowers17", "caltech": "caltech101", "cub200": "cub", "cub_200_2011": "cub"}


def _dataset_name(name):
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in REGISTRY:
        raise ValueError(f"unknown data set {name!r}; known: {list(DATASETS)}")
    return key


# ------------------------------------------------------------------------------------------------ options


def _truthy(value):
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def default_cache_dir():
    """``$MVL_DATA_CACHE`` or the per-user cache folder of pooch (``~/.cache/mvl``)."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("mvl"))


@dataclass(frozen=True)
class DataOptions:
    """Where data come from.

    ``cache_dir``: downloads go here (default ``$MVL_DATA_CACHE`` or ``~/.cache/mvl``);
    ``data_mirror``: a local directory with the registry's relative layout, read instead of the
    network (default ``$MVL_DATA_MIRROR``; ``False``: no mirror); ``offline``: never use the network (default
    ``$MVL_OFFLINE``); ``urls`` / ``checksums``: per-relative-path overrides of the registry
    (config ``data.urls`` / ``data.checksums``); ``base_url``: if set, every URL becomes
    ``base_url + relpath`` (a private mirror server, or the tests' local HTTP server).
    """

    cache_dir: Path = None
    data_mirror: Path | None = None
    offline: bool = None
    retries: int = 2
    timeout: float = 60.0
    urls: Mapping[str, str] = field(default_factory=dict)
    checksums: Mapping[str, str | None] = field(default_factory=dict)
    base_url: str | None = None

    def __post_init__(self):
        cache = default_cache_dir() if self.cache_dir is None else self.cache_dir
        object.__setattr__(self, "cache_dir", Path(cache).expanduser())
        if self.data_mirror is False:  # explicitly no mirror, whatever the environment says
            mirror = None
        else:
            mirror = self.data_mirror if self.data_mirror is not None else os.environ.get(ENV_MIRROR) or None
        object.__setattr__(self, "data_mirror", None if mirror is None else Path(mirror).expanduser())
        offline = _truthy(os.environ.get(ENV_OFFLINE, "")) if self.offline is None else bool(self.offline)
        object.__setattr__(self, "offline", offline)
        if int(self.retries) < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")

    @classmethod
    def from_config(cls, config, base_dir=None):
        """Options from the workflow config: either the ``data`` section or the whole config.

        Keys: ``cache_dir``, ``mirror`` (or ``data_mirror``), ``offline``, ``urls``, ``checksums``,
        ``base_url``, ``retries``, ``timeout``. Relative paths are taken relative to ``base_dir``
        (the repository root; default the current directory), so ``mirror: ../shared/data`` works.
        """
        config = dict(config or {})
        if isinstance(config.get("data"), Mapping):
            outer = config
            config = dict(config["data"])
            if config.get("mirror") is None and outer.get("data_mirror") is not None:
                config["mirror"] = outer["data_mirror"]
        base = Path(base_dir) if base_dir is not None else Path.cwd()

        def path(value):
            if value in (None, ""):
                return None
            p = Path(value).expanduser()
            return p if p.is_absolute() else (base / p)

        mirror = config.get("mirror", config.get("data_mirror"))
        return cls(
            cache_dir=path(config.get("cache_dir")),
            data_mirror=path(mirror),
            offline=config.get("offline"),
            retries=int(config.get("retries", 2)),
            timeout=float(config.get("timeout", 60.0)),
            urls=dict(config.get("urls") or {}),
            checksums=dict(config.get("checksums") or {}),
            base_url=config.get("base_url"),
        )


def _apply_overrides(rf, options):
    def url_for(f):
        if f.relpath in options.urls:
            return options.urls[f.relpath]
        if options.base_url:
            return options.base_url.rstrip("/") + "/" + f.relpath
        return f.url

    archive = rf.archive
    if archive is not None:
        archive = replace(archive, url=url_for(archive),
                          known_hash=options.checksums.get(archive.relpath, archive.known_hash))
    url = archive.url if archive is not None else url_for(rf)
    known_hash = options.checksums.get(rf.relpath, rf.known_hash)
    return replace(rf, url=url, known_hash=known_hash, archive=archive)


def dataset_files(dataset, options=None, include_optional=False):
    """The RemoteFiles of a data set (required ones unless ``include_optional``), overrides applied."""
    options = options or DataOptions()
    files = REGISTRY[_dataset_name(dataset)]
    return [_apply_overrides(f, options) for f in files if f.required or include_optional]


# ------------------------------------------------------------------------------------------- verification


def _marker(path):
    path = Path(path)
    return path.with_name(f".{path.name}{MARKER_SUFFIX}")


def _write_marker(path, digest):
    with atomic_path(_marker(path)) as tmp:
        tmp.write_text(json.dumps({"sha256": digest}, indent=1, sort_keys=True))


def _mark_validated(path, rf):
    """Record the SHA-256 of a structurally validated file (files with a known checksum need no marker)."""
    if not rf.known_hash:
        _write_marker(path, file_hash(path))


def _remove(path):
    for p in (Path(path), _marker(path)):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _verify(path, rf):
    """Checksum (if known) and structural validation (if any); raises DataIntegrityError."""
    if rf.known_hash:
        algorithm, expected = _split_hash(rf.known_hash)
        actual = file_hash(path, algorithm)
        if actual != expected:
            raise DataIntegrityError(f"{rf.relpath}: {algorithm} checksum mismatch: expected {expected}, got "
                                     f"{actual} ({path}; source {rf.source})")
    if rf.validator is not None:
        try:
            rf.validator(Path(path))
        except DataIntegrityError as exc:
            raise DataIntegrityError(f"{rf.relpath}: structural validation failed: {exc}") from None


def _cached_ok(path, rf):
    """Is a cached file trustworthy? Returns (ok, reason)."""
    try:
        if rf.known_hash:
            _verify(path, rf)
            return True, ""
        marker = _marker(path)
        digest = file_hash(path)
        if marker.exists():
            try:
                recorded = json.loads(marker.read_text())["sha256"]
            except (ValueError, KeyError, OSError):
                recorded = None
            if recorded == digest:
                return True, ""
            return False, "its SHA-256 differs from the one recorded when it was validated (file changed)"
        _verify(path, rf)  # e.g. a download whose marker was never written: validate now
        _write_marker(path, digest)
        return True, ""
    except DataIntegrityError as exc:
        return False, str(exc)


# ---------------------------------------------------------------------------------------- availability


def _local_copy(rf, options):
    if options.data_mirror is not None:
        p = options.data_mirror / rf.relpath
        if p.is_file():
            return p
    p = options.cache_dir / rf.relpath
    if p.is_file():
        return p
    return None


def _available_offline(rf, options):
    if _local_copy(rf, options) is not None:
        return True
    return rf.archive is not None and _available_offline(rf.archive, options)


def missing_data_message(missing, options, datasets=()):
    """One message naming every missing file, where it comes from, and how to provide it."""
    label = ", ".join(datasets) if datasets else "the requested data sets"
    lines = [f"{len(missing)} data file(s) needed for {label} are missing and offline mode forbids "
             f"downloading them:"]
    for rf in missing:
        lines.append(f"  - {rf.relpath}  <-  {rf.source}")
    mirror = options.data_mirror if options.data_mirror is not None else "not set"
    lines.append(f"Looked in: data_mirror = {mirror}; cache_dir = {options.cache_dir}.")
    lines.append("To fix: copy the files, under the same relative paths, into a directory and pass it as the "
                 f"data_mirror option (config `data: mirror: DIR`, `--data-mirror DIR`, or ${ENV_MIRROR}); "
                 "or run once with network access (offline: false) to download them into cache_dir.")
    return "\n".join(lines)


def check_available(datasets, options=None, *, files=None, include_optional=False):
    """Check up front that the files of ``datasets`` can be obtained.

    Returns ``{relpath: local path or None}`` (None: will be downloaded). Offline, raises one
    :class:`DataUnavailableError` listing every missing file with its URL and the mirror option.
    A ``data_mirror`` that is not a directory is an error too. ``files`` replaces the registry
    entries (a list of RemoteFile, e.g. from :func:`dataset_files`). No checksums are computed here;
    files are verified when fetched.
    """
    options = options or DataOptions()
    names = [datasets] if isinstance(datasets, str) else list(datasets)
    if options.data_mirror is not None and not options.data_mirror.is_dir():
        raise DataUnavailableError(f"data_mirror {options.data_mirror} is not a directory (config `data: mirror`, "
                                   f"--data-mirror or ${ENV_MIRROR}); point it at a folder with the layout "
                                   f"flowers17/, caltech101/, cub/, ssl_benchmarks/, multiview_mnist/")
    if files is None:
        files = [f for n in names for f in dataset_files(n, options, include_optional)]
    found, missing = {}, []
    for rf in files:
        local = _local_copy(rf, options)
        found[rf.relpath] = local
        if local is None and options.offline and not _available_offline(rf, options):
            missing.append(rf)
    if missing:
        raise DataUnavailableError(missing_data_message(missing, options, [_dataset_name(n) for n in names]))
    return found


def _quick_verify(path, rf):
    """The checksum when one is known, else the structural validation; raises DataIntegrityError."""
    _verify(path, rf if not rf.known_hash else replace(rf, validator=None))


def _local_problem(rf, options):
    """Why the local copy of ``rf`` cannot be used (one line), or None (no local copy, or a good one). A bad
    cache copy counts only offline (online it is downloaded again); nothing is written or removed."""
    if options.data_mirror is not None and (options.data_mirror / rf.relpath).is_file():
        p = options.data_mirror / rf.relpath
        try:
            _quick_verify(p, _with_mirror_sum(rf, options.data_mirror))
        except DataIntegrityError as exc:
            return str(_mirror_error(exc, p, rf))
        return None
    p = options.cache_dir / rf.relpath
    if not p.is_file() or not options.offline:
        return None
    marker = _marker(p)
    try:
        if not rf.known_hash and marker.exists():
            recorded = json.loads(marker.read_text()).get("sha256")
            if recorded != file_hash(p):
                raise DataIntegrityError(f"{rf.relpath}: sha256 {file_hash(p)} differs from the one recorded when "
                                         f"it was validated ({recorded}; {p})")
        else:
            _quick_verify(p, rf)
    except (DataIntegrityError, ValueError, OSError) as exc:
        return (f"cached {rf.relpath} ({p}) failed verification: {exc}. Offline it cannot be downloaded again "
                f"from {rf.source}; remove it and provide it through the data_mirror option or rerun with network "
                f"access.")
    return None


def verify_available(datasets, options=None, *, files=None, include_optional=False):
    """:func:`check_available`, and every local copy (mirror, and offline the cache) verified: its checksum
    when one is known (registry or ``checksums`` option), else its structural validation; archives of members
    without a local copy too. Returns the same ``{relpath: local path or None}``; raises one
    :class:`DataIntegrityError` with one line per bad file (its relative path, path and both checksums), followed
    by :func:`check_available`'s list of missing files when some are missing too (a corrupt file is reported
    whether or not others are missing), else :func:`check_available`'s :class:`DataUnavailableError`.
    Reads only, downloads nothing."""
    options = options or DataOptions()
    names = [datasets] if isinstance(datasets, str) else list(datasets)
    if files is None:
        files = [f for n in names for f in dataset_files(n, options, include_optional)]
    try:
        found, unavailable = check_available(names, options, files=files), None
    except DataUnavailableError as exc:
        if options.data_mirror is not None and not options.data_mirror.is_dir():
            raise
        found, unavailable = None, exc
    todo, seen = list(files), set()
    bad = []
    while todo:
        rf = todo.pop(0)
        if rf.relpath in seen:
            continue
        seen.add(rf.relpath)
        if rf.archive is not None and _local_copy(rf, options) is None:
            todo.append(rf.archive)
            continue
        problem = _local_problem(rf, options)
        if problem:
            bad.append(problem)
    if bad:
        if unavailable is not None:
            bad.append(f"Besides, {unavailable}")
        raise DataIntegrityError("\n".join(bad))
    if unavailable is not None:
        raise unavailable
    return found


# -------------------------------------------------------------------------------------------- fetching


@contextlib.contextmanager
def _quiet_pooch():
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _download(rf, options):
    """Download ``rf`` into the cache with pooch (temporary file, checksum, retries, rename)."""
    import pooch
    import requests

    target = options.cache_dir / rf.relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    store = pooch.create(path=options.cache_dir, base_url="", registry={rf.relpath: rf.known_hash},
                         urls={rf.relpath: rf.url}, retry_if_failed=int(options.retries), allow_updates=True)
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=options.timeout)
    try:
        with _quiet_pooch():
            path = Path(store.fetch(rf.relpath, downloader=downloader))
    except ValueError as exc:  # pooch: hash of the downloaded file does not match
        _remove(target)
        raise DataIntegrityError(f"{rf.relpath}: downloaded file from {rf.url} failed its checksum after "
                                 f"{1 + options.retries} attempt(s): {exc}. Nothing was kept.") from None
    except requests.exceptions.RequestException as exc:
        _remove(target)
        raise DataDownloadError(f"{rf.relpath}: download from {rf.url} failed after {1 + options.retries} "
                                f"attempt(s): {type(exc).__name__}: {exc}. Nothing was kept; rerun to retry, "
                                f"or provide the file through the data_mirror option.") from None
    try:
        _verify(path, rf)
    except DataIntegrityError as exc:
        _remove(path)
        raise DataIntegrityError(f"{exc}. The downloaded file was deleted.") from None
    _mark_validated(path, rf)
    return path


def _archive_members(archive_path):
    if zipfile.is_zipfile(archive_path):
        zf = zipfile.ZipFile(archive_path)
        return zf, {i.filename: i for i in zf.infolist() if not i.is_dir()}, zf.open
    tf = tarfile.open(archive_path, "r:*")
    return tf, None, tf.extractfile


def _extract(archive_path, jobs, options):
    """Extract ``jobs`` (RemoteFiles that are members of one archive) into the cache, each atomically."""
    def write(rf, fobj):
        dest = options.cache_dir / rf.relpath
        with atomic_path(dest) as tmp:
            with open(tmp, "wb") as out:
                for block in iter(lambda: fobj.read(1 << 22), b""):
                    out.write(block)
            try:
                _verify(tmp, rf)
            except DataIntegrityError as exc:
                raise DataIntegrityError(f"{exc} (extracted from {archive_path})") from None
        _mark_validated(dest, rf)
        return dest

    out = {}
    wanted = {rf.member.lstrip("./"): rf for rf in jobs}
    try:
        handle, zinfo, opener = _archive_members(archive_path)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DataIntegrityError(f"{archive_path}: cannot open archive ({exc})") from None
    with handle:
        if zinfo is not None:  # zip: exact member path, else the unique member with the same base name
            for member, rf in wanted.items():
                name = member if member in zinfo else None
                if name is None:
                    cands = [n for n in zinfo if n.rsplit("/", 1)[-1] == member.rsplit("/", 1)[-1]]
                    name = cands[0] if len(cands) == 1 else None
                if name is None:
                    raise DataIntegrityError(f"{archive_path}: no member {member}")
                with opener(name) as fobj:
                    out[rf.relpath] = write(rf, fobj)
        else:
            try:
                for info in handle:
                    key = info.name.lstrip("./")
                    if key in wanted and info.isfile() and wanted[key].relpath not in out:
                        with opener(info) as fobj:
                            out[wanted[key].relpath] = write(wanted[key], fobj)
                        if len(out) == len(wanted):
                            break
            except (tarfile.TarError, OSError, EOFError) as exc:
                raise DataIntegrityError(f"{archive_path}: corrupted archive ({type(exc).__name__}: {exc})") from None
            absent = [m for m, rf in wanted.items() if rf.relpath not in out]
            if absent:
                raise DataIntegrityError(f"{archive_path}: no member(s) {absent}")
    return out


MIRROR_SUMS = "SHA256SUMS"
"""The checksum list a mirror may hold at its root (``sha256sum`` format, paths relative to the root): files the
registry knows no checksum for are verified against it too."""


def mirror_checksums(mirror):
    """``{relative path: "sha256:<hex>"}`` from the mirror's :data:`MIRROR_SUMS` ({} without one)."""
    sums = Path(mirror) / MIRROR_SUMS
    if not sums.is_file():
        return {}
    out = {}
    for line in sums.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.strip().split(maxsplit=1)
        if len(parts) == 2 and len(parts[0]) == 64:
            rel = parts[1].lstrip("*")
            out[rel[2:] if rel.startswith("./") else rel] = f"sha256:{parts[0].lower()}"
    return out


def _with_mirror_sum(rf, mirror):
    """``rf`` with the checksum of the mirror's :data:`MIRROR_SUMS` where the registry has none."""
    if rf.known_hash:
        return rf
    known = mirror_checksums(mirror).get(rf.relpath)
    return rf if known is None else replace(rf, known_hash=known)


def _mirror_error(exc, path, rf):
    """The one-line error of a mirror file that fails verification."""
    return DataIntegrityError(f"{exc}. The file in data_mirror ({path}) is corrupted or not the expected file; "
                              f"replace it (source: {rf.source}) or remove it.")


def _resolve_local(rf, options):
    """Verified local copy (mirror or cache) or None; untrustworthy cache files are removed."""
    if options.data_mirror is not None:
        p = options.data_mirror / rf.relpath
        if p.is_file():
            try:
                _verify(p, _with_mirror_sum(rf, options.data_mirror))
            except DataIntegrityError as exc:
                raise _mirror_error(exc, p, rf) from None
            return p
    p = options.cache_dir / rf.relpath
    if p.is_file():
        ok, reason = _cached_ok(p, rf)
        if ok:
            return p
        _remove(p)
        if options.offline:
            raise DataIntegrityError(f"cached {rf.relpath} ({p}) failed verification and was removed: {reason}. "
                                     f"Offline it cannot be downloaded again from {rf.source}; provide it through "
                                     f"the data_mirror option or rerun with network access.")
    return None


def fetch_file(rf, options=None):
    """Local verified path of one RemoteFile (mirror, cache, archive member, or download)."""
    options = options or DataOptions()
    local = _resolve_local(rf, options)
    if local is not None:
        return local
    if rf.archive is not None:
        archive = fetch_file(rf.archive, options)
        return _extract(archive, [rf], options)[rf.relpath]
    if options.offline:
        raise DataUnavailableError(missing_data_message([rf], options))
    return _download(rf, options)


def fetch(dataset, options=None, *, files=None, include_optional=False):
    """Verified local paths ``{relpath: Path}`` of every file of ``dataset``.

    Checks availability first (offline: one clear error for all missing files), then obtains each
    file; members of the same archive are extracted in one pass over the archive.
    """
    options = options or DataOptions()
    if files is None:
        files = dataset_files(dataset, options, include_optional)
    check_available(dataset, options, files=files)
    out, pending = {}, {}
    for rf in files:
        local = _resolve_local(rf, options)
        if local is not None:
            out[rf.relpath] = local
        elif rf.archive is not None:
            pending.setdefault(rf.archive.relpath, (rf.archive, []))[1].append(rf)
        elif options.offline:
            raise DataUnavailableError(missing_data_message([rf], options, [_dataset_name(dataset)]))
        else:
            out[rf.relpath] = _download(rf, options)
    for archive, members in pending.values():
        out.update(_extract(fetch_file(archive, options), members, options))
    return {rf.relpath: out[rf.relpath] for rf in files}


# ------------------------------------------------------------------------------------------------- CLI


CLI_DESCRIPTION = """Download, verify and list the raw data files of the paper's data sets and of the benchmarks.

Every file comes from its canonical URL (or from a local mirror folder with the same layout) and is verified
(known checksum, otherwise a structural check) before it is written, atomically, into the cache folder.
Data sets: flowers17 (Oxford Flowers-17 splits and chi2 distances), caltech101 (the precomputed kernels of
Vedaldi et al. 2009), cub (CUB-200-2011), ssl_benchmarks (g50c, uspst, text1 = PCMAC, g10n, COIL20 of the
manifold-regularization benchmarks), multiview_mnist (multi-view MNIST: 4 views of 5000 digits, 192 HOG-type
features each, taken from the scikit-multimodallearn 0.1.0 wheel on PyPI).

Exit status 1 with a readable message (no traceback) when data are missing or bad."""

CLI_EPILOG = f"""examples:
  python -m mvl.data.download list flowers17 cub
  python -m mvl.data.download check flowers17 caltech101 cub --data-mirror ../shared/data --offline
  python -m mvl.data.download fetch multiview_mnist --cache-dir resources/data

environment: ${ENV_MIRROR} (mirror folder), ${ENV_CACHE} (cache folder), ${ENV_OFFLINE} (1: never use the
network) are the defaults of the options below."""


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m mvl.data.download {check,fetch,list} DATASET [DATASET ...] [options]``.

    See ``--help``.
    """
    parser = argparse.ArgumentParser(prog="python -m mvl.data.download", description=CLI_DESCRIPTION,
                                     epilog=CLI_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("check", "fetch", "list"),
                        help="list: print every file of the data sets (path, URL, checksum); check: verify the "
                             "local files (checksum, else structure) and say which would be downloaded, "
                             "download nothing; fetch: download "
                             "(or copy from the mirror), verify and cache every file")
    parser.add_argument("datasets", nargs="+", metavar="DATASET", help=f"data sets: {', '.join(DATASETS)}")
    parser.add_argument("--data-mirror", default=None, metavar="DIR",
                        help=f"local folder with the files under the same relative paths (e.g. ../shared/data), "
                             f"read instead of the network (default: ${ENV_MIRROR}, else none)")
    parser.add_argument("--cache-dir", default=None, metavar="DIR",
                        help=f"where verified files are written (default: ${ENV_CACHE}, else ~/.cache/mvl)")
    parser.add_argument("--offline", action="store_true", default=None,
                        help=f"never use the network: a file that is neither cached nor in the mirror is an "
                             f"error (default: ${ENV_OFFLINE})")
    parser.add_argument("--retries", type=int, default=2, metavar="N",
                        help="download attempts after the first failure (default 2)")
    parser.add_argument("--include-optional", action="store_true",
                        help="also check / fetch the files the workflow does not need (marked optional by list)")
    a = parser.parse_args(argv)
    options = DataOptions(cache_dir=a.cache_dir, data_mirror=a.data_mirror, offline=a.offline, retries=a.retries)
    try:
        names = [_dataset_name(d) for d in a.datasets]
        if a.command == "list":
            for n in names:
                for rf in dataset_files(n, options, include_optional=True):
                    check = rf.known_hash or "structural validation"
                    optional = "" if rf.required else "\t(optional)"
                    print(f"{n}\t{rf.relpath}\t{rf.source}\t{check}{optional}")
        elif a.command == "check":
            found = verify_available(names, options, include_optional=a.include_optional)
            n_local = sum(p is not None for p in found.values())
            print(f"[data] {len(found)} file(s) for {', '.join(names)}: {n_local} local and verified, "
                  f"{len(found) - n_local} to download")
        else:
            check_available(names, options, include_optional=a.include_optional)
            for n in names:
                paths = fetch(n, options, include_optional=a.include_optional)
                print(f"[data] {n}: {len(paths)} file(s) verified")
    except (DataError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

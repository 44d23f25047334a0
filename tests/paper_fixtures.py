"""Small fixtures in the exact formats of the paper's data files, and a local HTTP server.

Not a test module. The generators write, under a data root, the same relative paths, file names,
variable names, MATLAB v5 layout and dtypes as the real files (see ``mvl.data.download.REGISTRY``), with
fewer images:

- ``write_flowers17``: ``flowers17/datasplits.mat`` written byte-for-byte like the official one
  (MATLAB 5.0 header, one zlib-compressed miMATRIX per variable, class double stored as miUINT16,
  1 x k row vectors, variables in the order trn1..3, tst1..3, val3, val2, val1), ``files.txt``, and
  the two distance-matrix files (float64 chi2 distances, compressed v5 via scipy.io.savemat);
- ``write_caltech101``: ``caltech101/cal101-ker-15-<s>/<kernel>.mat`` and ``test_<kernel>.mat``
  (variable ``matrix``; train x train and train x test, float32) and ``cal101-meta/meta-15-<s>.mat``
  (``trainImageClasses``, ``testImageClasses`` 1 x n doubles, ``trainImageNames``,
  ``testImageNames`` 1 x n cell arrays); per class the training images are the originals followed by
  their flipped copies;
- ``write_cub``: ``cub/CUB_200_2011.tgz`` with ``attributes.txt`` at the top level and
  ``CUB_200_2011/{images.txt, image_class_labels.txt, train_test_split.txt, classes.txt,
  bounding_boxes.txt, README, attributes/{image_attribute_labels.txt, certainties.txt,
  class_attribute_labels_continuous.txt}, images/...}``; a few attribute lines carry an extra field.

Everything is plain numpy/scipy (no package code), so fixtures do not depend on the code under test.
``serve_directory`` serves a directory on 127.0.0.1 (ephemeral port) with scripted failures.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import socket
import struct
import tarfile
import threading
import urllib.parse
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.io

FLOWERS_IT = ("D_hog", "D_hsv", "D_siftbdy", "D_siftint")
FLOWERS_GC = ("D_colourgc", "D_shapegc", "D_texturegc")
CALTECH_KERNELS = (
    "echi2_phowColor_L0", "echi2_phowColor_L1", "echi2_phowColor_L2",
    "echi2_phowGray_L0", "echi2_phowGray_L1", "echi2_phowGray_L2",
    "echi2_ssim_L0", "echi2_ssim_L1", "echi2_ssim_L2",
    "el2_gb",
)


def md5(path):
    return "md5:" + hashlib.md5(Path(path).read_bytes()).hexdigest()


def sha256(path):
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def chi2_dist(X, Y=None):
    """Reference chi2 distances sum (x-y)^2/(x+y) (0/0 := 0), plain numpy."""
    Y = X if Y is None else Y
    num = (X[:, None, :] - Y[None, :, :]) ** 2
    den = X[:, None, :] + Y[None, :, :]
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0).sum(-1)


# ------------------------------------------------------------------------------- MATLAB v5, as MATLAB writes


def _mat_header(text="MATLAB 5.0 MAT-file, Platform: GLNX86, Created on: Tue May 23 14:09:12 2006"):
    return text.encode("ascii").ljust(116, b" ") + b" " * 8 + struct.pack("<H", 0x0100) + b"IM"


def _pad8(b):
    return b + b"\x00" * (-len(b) % 8)


def _double_as_uint16_element(name, values):
    """One compressed miMATRIX: class double, 1 x k, data stored as miUINT16 (MATLAB's compact storage)."""
    values = np.asarray(values, dtype=np.uint16).ravel()
    flags = struct.pack("<II", 6, 8) + struct.pack("<II", 6, 0)  # miUINT32; mxDOUBLE_CLASS, no flags
    dims = struct.pack("<II", 5, 8) + struct.pack("<ii", 1, values.size)  # miINT32
    nb = name.encode("ascii")
    if len(nb) <= 4:  # small data element
        name_el = struct.pack("<HH", 1, len(nb)) + nb.ljust(4, b"\x00")
    else:
        name_el = struct.pack("<II", 1, len(nb)) + _pad8(nb)
    data = struct.pack("<II", 4, 2 * values.size) + _pad8(values.astype("<u2").tobytes())  # miUINT16
    payload = flags + dims + name_el + data
    matrix = struct.pack("<II", 14, len(payload)) + payload
    comp = zlib.compress(matrix)
    return struct.pack("<II", 15, len(comp)) + comp


def write_datasplits_mat(path, variables):
    """A datasplits.mat in the layout of the official file (see module docstring)."""
    out = _mat_header()
    for name, values in variables.items():
        out += _double_as_uint16_element(name, values)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(out)


def savemat(path, variables, compress=True):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    scipy.io.savemat(str(path), variables, format="5", do_compression=compress, oned_as="row")


# ------------------------------------------------------------------------------------------------ Flowers


@dataclass
class FixtureSet:
    """What a generator wrote: the data root, the checksum overrides to use for files whose registry
    entry has a known checksum, and the expected contents for assertions."""

    root: Path
    checksums: dict = field(default_factory=dict)
    expected: dict = field(default_factory=dict)


def _histograms(rng, y, d, spread=1.0):
    centres = rng.gamma(2.0, 1.0, size=(y.max() + 1, d))
    H = centres[y] * rng.gamma(4.0, 0.25, size=(y.size, d)) * spread
    return H / H.sum(axis=1, keepdims=True)


def write_flowers17(root, n_per_class=20, seed=0, with_files_txt=True):
    """Flowers-17 fixture: 17 classes of ``n_per_class`` images (real: 80); per split and class half of
    the images in trn, a quarter in val and in tst (real 40/20/20); seven chi2 distance matrices."""
    if n_per_class % 4:
        raise ValueError("n_per_class must be a multiple of 4")
    root = Path(root)
    rng = np.random.default_rng(seed)
    n = 17 * n_per_class
    y = np.arange(n) // n_per_class
    splits = {}
    for s in (1, 2, 3):
        trn, val, tst = [], [], []
        for c in range(17):
            idx = rng.permutation(np.arange(c * n_per_class, (c + 1) * n_per_class)) + 1
            h, q = n_per_class // 2, n_per_class // 4
            trn += list(idx[:h])
            val += list(idx[h:h + q])
            tst += list(idx[h + q:])
        splits[s] = {"trn": rng.permutation(trn), "val": rng.permutation(val), "tst": rng.permutation(tst)}
    order = [f"trn{s}" for s in (1, 2, 3)] + [f"tst{s}" for s in (1, 2, 3)] + ["val3", "val2", "val1"]
    variables = {k: splits[int(k[3])][k[:3]] for k in order}
    write_datasplits_mat(root / "flowers17" / "datasplits.mat", variables)
    D = {}
    for i, name in enumerate(FLOWERS_IT + FLOWERS_GC):
        H = _histograms(np.random.default_rng([seed, i]), y, d=12 + 3 * i)
        Di = chi2_dist(H)
        Di = 0.5 * (Di + Di.T)
        np.fill_diagonal(Di, 0.0)
        D[name] = Di
    savemat(root / "flowers17" / "distancematrices17itfeat08.mat", {k: D[k] for k in FLOWERS_IT})
    savemat(root / "flowers17" / "distancematrices17gcfeat06.mat", {k: D[k] for k in FLOWERS_GC})
    checksums = {"flowers17/datasplits.mat": md5(root / "flowers17" / "datasplits.mat")}
    if with_files_txt:
        (root / "flowers17" / "files.txt").write_text("".join(f"image_{i:04d}.jpg\n" for i in range(1, n + 1)))
        checksums["flowers17/files.txt"] = sha256(root / "flowers17" / "files.txt")
    return FixtureSet(root=root, checksums=checksums, expected=dict(y=y, splits=splits, D=D, n=n))


# -------------------------------------------------------------------------------------------- Caltech-101


def write_caltech101(root, n_classes=3, n_orig=15, n_test=3, splits=(1, 2, 3), n_train=15, seed=0,
                     test_prefix="test_", dtype=np.float32):
    """Caltech-101 fixture in the authors' layout: per class n_orig originals + n_orig flipped copies in
    training, n_test test images; ten kernels exp(-D / mean D_train) per split."""
    root = Path(root)
    expected = {}
    for s in splits:
        rng = np.random.default_rng([seed, s])
        y_tr = np.repeat(np.arange(n_classes), 2 * n_orig)
        y_te = np.repeat(np.arange(n_classes), n_test)
        names_tr, names_te = [], []
        for c in range(n_classes):
            ids = rng.choice(np.arange(1, 60), size=n_orig + n_test, replace=False)
            orig = [f"class{c:03d}/image_{i:04d}.jpg" for i in ids[:n_orig]]
            names_tr += orig + orig  # flipped copies keep the original's name
            names_te += [f"class{c:03d}/image_{i:04d}.jpg" for i in ids[n_orig:]]
        folder = root / "caltech101" / f"cal101-ker-{n_train}-{s}"
        kernels = {}
        for k, name in enumerate(CALTECH_KERNELS):
            krng = np.random.default_rng([seed, s, k])
            yo = np.repeat(np.arange(n_classes), n_orig)
            H = _histograms(krng, yo, d=10 + k)
            Hflip = H * krng.uniform(0.9, 1.1, size=H.shape)
            Htr = np.concatenate([np.concatenate([H[yo == c], Hflip[yo == c]]) for c in range(n_classes)])
            Hte = _histograms(krng, y_te, d=10 + k)
            Dtr, Dte = chi2_dist(Htr), chi2_dist(Htr, Hte)
            scale = Dtr.mean()
            Ktr = np.exp(-Dtr / scale)
            Ktr = 0.5 * (Ktr + Ktr.T)
            Kte = np.exp(-Dte / scale)  # n_train x n_test, as the authors' code indexes it
            savemat(folder / f"{name}.mat", {"matrix": Ktr.astype(dtype)})
            savemat(folder / f"{test_prefix}{name}.mat", {"matrix": Kte.astype(dtype)})
            kernels[name] = (Ktr.astype(dtype).astype(np.float64), Kte.astype(dtype).astype(np.float64))
        cell_tr = np.empty((1, len(names_tr)), dtype=object)
        cell_tr[0, :] = names_tr
        cell_te = np.empty((1, len(names_te)), dtype=object)
        cell_te[0, :] = names_te
        savemat(root / "caltech101" / "cal101-meta" / f"meta-{n_train}-{s}.mat", {
            "trainImageClasses": (y_tr + 1).astype(np.float64)[None, :],
            "testImageClasses": (y_te + 1).astype(np.float64)[None, :],
            "trainImageNames": cell_tr, "testImageNames": cell_te,
        })
        expected[s] = dict(y_train=y_tr, y_test=y_te, kernels=kernels, names_train=names_tr)
    return FixtureSet(root=root, checksums={}, expected=expected)


# --------------------------------------------------------------------------------------------------- CUB


def cub_members(n_classes=4, n_train=22, n_test=8, seed=0, extra_field_lines=2):
    """Member name -> bytes of a small CUB_200_2011.tgz, and the expected arrays."""
    rng = np.random.default_rng(seed)
    classes = [f"{c + 1:03d}.Bird_{chr(65 + c)}" for c in range(n_classes)]
    per = n_train + n_test
    n = n_classes * per
    y = np.repeat(np.arange(n_classes), per)
    is_train = np.zeros(n, dtype=int)
    for c in range(n_classes):
        is_train[c * per + rng.choice(per, size=n_train, replace=False)] = 1
    names = [f"{classes[c]}/Bird_{chr(65 + c)}_{i:04d}_{rng.integers(1000, 99999)}.jpg"
             for c in range(n_classes) for i in range(per)]
    probs = rng.uniform(0.05, 0.6, size=(n_classes, 312))
    A = (rng.uniform(size=(n, 312)) < probs[y]).astype(int)
    lines = []
    extra = set(rng.choice(n * 312, size=extra_field_lines, replace=False).tolist())
    for i in range(n):
        for a in range(312):
            line = f"{i + 1} {a + 1} {A[i, a]} {rng.integers(1, 5)} {rng.uniform(0, 30):.4f}"
            if i * 312 + a in extra:
                line += " 0"
            lines.append(line)
    m = {
        "attributes.txt": "".join(f"{a + 1} has_attribute_{a // 10}::value_{a % 10}\n" for a in range(312)),
        "CUB_200_2011/README": "Fixture of the Caltech-UCSD Birds-200-2011 layout.\n",
        "CUB_200_2011/images.txt": "".join(f"{i + 1} {names[i]}\n" for i in range(n)),
        "CUB_200_2011/image_class_labels.txt": "".join(f"{i + 1} {y[i] + 1}\n" for i in range(n)),
        "CUB_200_2011/train_test_split.txt": "".join(f"{i + 1} {is_train[i]}\n" for i in range(n)),
        "CUB_200_2011/classes.txt": "".join(f"{c + 1} {classes[c]}\n" for c in range(n_classes)),
        "CUB_200_2011/bounding_boxes.txt": "".join(f"{i + 1} 10.0 20.0 100.0 80.0\n" for i in range(n)),
        "CUB_200_2011/attributes/certainties.txt": "1 not visible\n2 guessing\n3 probably\n4 definitely\n",
        "CUB_200_2011/attributes/class_attribute_labels_continuous.txt":
            "".join(" ".join(f"{100 * p:.11g}" for p in row) + "\n" for row in probs),
        "CUB_200_2011/attributes/image_attribute_labels.txt": "\n".join(lines) + "\n",
    }
    m = {k: v.encode() for k, v in m.items()}
    for i in range(0, n, max(1, n // 3)):  # a few placeholder images
        m[f"CUB_200_2011/images/{names[i]}"] = b"\xff\xd8\xff\xe0fixture-jpeg\xff\xd9"
    return m, dict(y=y, is_train=is_train.astype(bool), attributes=A.astype(float), names=names,
                   classes=classes, n=n)


def write_cub(root, mirror_layout=False, **kw):
    """``cub/CUB_200_2011.tgz`` (and, with ``mirror_layout``, the extracted ``cub/...`` files as in
    ../shared/data). Checksum overrides cover the archive and the members with known checksums."""
    root = Path(root)
    members, expected = cub_members(**kw)
    archive = root / "cub" / "CUB_200_2011.tgz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:gz") as tf:
        dirs = sorted({str(parent) for k in members for parent in Path(k).parents if str(parent) != "."})
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tf.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    checksums = {"cub/CUB_200_2011.tgz": md5(archive)}
    for rel, member in [("images.txt", "images.txt"), ("image_class_labels.txt", "image_class_labels.txt"),
                        ("train_test_split.txt", "train_test_split.txt"), ("classes.txt", "classes.txt"),
                        ("bounding_boxes.txt", "bounding_boxes.txt"),
                        ("attributes/certainties.txt", "attributes/certainties.txt"),
                        ("attributes/class_attribute_labels_continuous.txt",
                         "attributes/class_attribute_labels_continuous.txt")]:
        checksums[f"cub/{rel}"] = "sha256:" + hashlib.sha256(members[f"CUB_200_2011/{member}"]).hexdigest()
    if mirror_layout:
        for name, data in members.items():
            if name.startswith("CUB_200_2011/") and "/images/" not in name:
                dest = root / "cub" / name[len("CUB_200_2011/"):]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
    return FixtureSet(root=root, checksums=checksums, expected=expected)


# ------------------------------------------------------------------------------------------- HTTP server


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):  # noqa: N802 (http.server API)
        srv = self.server
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        with srv.lock:
            srv.log.append(rel)
            rule = srv.rules.get(rel, "ok")
            if isinstance(rule, list):
                behaviour = rule.pop(0) if len(rule) > 1 else rule[0]
            else:
                behaviour = rule
        target = (srv.root / rel).resolve()
        if behaviour.startswith("status:"):
            self.send_error(int(behaviour.split(":")[1]))
            return
        if srv.root not in target.parents or not target.is_file():
            self.send_error(404)
            return
        data = target.read_bytes()
        if behaviour == "truncate":  # a complete response whose body is a truncated file
            data = data[: len(data) // 2]
        elif behaviour == "corrupt":
            mid = len(data) // 2
            data = data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 16]) + data[mid + 16:]
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if behaviour == "drop":  # connection dropped mid-transfer: half the promised bytes, then close
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(data)


class FixtureServer(http.server.ThreadingHTTPServer):
    """Serves ``root`` on 127.0.0.1 (ephemeral port). ``rules[relpath]`` is a behaviour or a list of
    behaviours consumed one per request (the last one repeats): ``"ok"``, ``"status:404"``,
    ``"status:500"``, ``"truncate"`` (complete response, half the file), ``"drop"`` (Content-Length
    of the whole file, half sent, connection closed), ``"corrupt"`` (16 bytes flipped).
    ``log`` lists the requested relative paths."""

    daemon_threads = True

    def __init__(self, root):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = Path(root).resolve()
        self.rules = {}
        self.log = []
        self.lock = threading.Lock()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def requests_for(self, rel):
        return sum(1 for r in self.log if r == rel)


@contextlib.contextmanager
def serve_directory(root):
    """Context manager: a :class:`FixtureServer` for ``root`` running in a background thread."""
    server = FixtureServer(root)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

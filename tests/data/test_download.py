"""Downloads (mvl.data.download): the real code path against a local HTTP server, the mirror, offline checks.

Fixtures are generated in the exact formats of the real files (tests/paper_fixtures.py) and served on
127.0.0.1; the real files of ../shared/data are used for the mirror. If ../shared/data is absent these
tests FAIL unless MVL_ALLOW_MISSING_SHARED_DATA=1 is set (then they are skipped with that reason).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import paper_fixtures as pf
import pytest

from mvl.data import download as dl

from conftest import SHARED  # noqa: F401  (the real data folder; fixture shared_data in conftest)




@pytest.fixture(autouse=True)
def _no_data_environment(monkeypatch):
    """The tests set every option explicitly; $MVL_DATA_* of the caller must not leak in."""
    for var in (dl.ENV_MIRROR, dl.ENV_CACHE, dl.ENV_OFFLINE):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def flowers_root(tmp_path_factory):
    return pf.write_flowers17(tmp_path_factory.mktemp("flowers_fixture"))


@pytest.fixture
def flowers_server(flowers_root):
    with pf.serve_directory(flowers_root.root) as srv:
        yield srv


def opts(tmp_path, server=None, checksums=None, **kw):
    kw.setdefault("retries", 0)
    kw.setdefault("offline", False)
    kw.setdefault("data_mirror", False)
    return dl.DataOptions(cache_dir=tmp_path / "cache", base_url=None if server is None else server.url,
                          checksums=checksums or {}, **kw)


def cache_files(options):
    """Every file in the cache (markers and stray temporaries included)."""
    root = options.cache_dir
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def trusted(options):
    return [f for f in cache_files(options) if not Path(f).name.startswith((".", "tmp"))]


def rf_of(dataset, relpath, options):
    return next(f for f in dl.dataset_files(dataset, options, include_optional=True) if f.relpath == relpath)


# ------------------------------------------------------------------------------------------------ registry


def test_registry_lists_every_dataset_with_urls_and_checks():
    assert set(dl.DATASETS) == {"flowers17", "caltech101", "cub", "ssl_benchmarks", "multiview_mnist"}
    for name, files in dl.REGISTRY.items():
        rels = [f.relpath for f in files]
        assert len(rels) == len(set(rels)), name
        for f in files:
            assert f.relpath.startswith(f"{name}/")
            assert f.url.startswith(("https://", "http://"))
            assert f.known_hash or f.validator or not f.required, f.relpath  # every required file is checked
            if f.archive is not None:
                assert f.member and f.url == f.archive.url
    flowers = {f.relpath: f for f in dl.REGISTRY["flowers17"]}
    assert flowers["flowers17/datasplits.mat"].known_hash == "md5:4828cddfd0d803c5abbdebcb1e148a1e"
    assert flowers["flowers17/datasplits.mat"].url == "https://www.robots.ox.ac.uk/~vgg/data/flowers/17/datasplits.mat"
    cub = {f.relpath: f for f in dl.REGISTRY["cub"]}
    assert cub["cub/attributes/image_attribute_labels.txt"].archive.known_hash == \
        "md5:97eceeb196236b17998738112f37df78"
    cal = [f.relpath for f in dl.REGISTRY["caltech101"]]
    assert len(cal) == 3 * (1 + 2 * 10)
    assert "caltech101/cal101-ker-15-2/echi2_phowGray_L2.mat" in cal
    assert "caltech101/cal101-ker-15-2/test_el2_gb.mat" in cal
    assert "caltech101/cal101-meta/meta-15-3.mat" in cal
    ssl = {Path(f.relpath).name for f in dl.REGISTRY["ssl_benchmarks"]}
    assert {"g50c.mat", "uspst.mat", "text1.mat", "COIL20_cai.mat"} <= ssl


def test_registry_checksums_agree_with_shared_sha256sums(shared_data):
    sums = {}
    for line in (shared_data / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        sums[name.removeprefix("./")] = digest
    n = 0
    for files in dl.REGISTRY.values():
        for f in files:
            if f.known_hash and f.known_hash.startswith("sha256:") and f.relpath in sums:
                assert f.known_hash == "sha256:" + sums[f.relpath], f.relpath
                n += 1
    assert n >= 10


def test_options_from_config_resolve_relative_mirror(tmp_path):
    cfg = {"data": {"cache_dir": "resources/data", "mirror": "../shared/data", "offline": True,
                    "urls": {"flowers17/datasplits.mat": "http://example.invalid/d.mat"}, "checksums": {}}}
    o = dl.DataOptions.from_config(cfg, base_dir=tmp_path / "repo")
    assert o.data_mirror == tmp_path / "repo" / "../shared/data"
    assert o.cache_dir == tmp_path / "repo" / "resources/data" and o.offline is True
    assert rf_of("flowers17", "flowers17/datasplits.mat", o).url == "http://example.invalid/d.mat"
    assert dl.DataOptions.from_config({"data": {"mirror": None}}, tmp_path).data_mirror is None


# ---------------------------------------------------------------------------------------- HTTP downloads


def test_download_success_then_cached(tmp_path, flowers_root, flowers_server):
    o = opts(tmp_path, flowers_server, flowers_root.checksums)
    paths = dl.fetch("flowers17", o)
    assert set(paths) == {"flowers17/datasplits.mat", "flowers17/distancematrices17itfeat08.mat",
                          "flowers17/distancematrices17gcfeat06.mat"}
    for rel, p in paths.items():
        assert p == o.cache_dir / rel and p.read_bytes() == (flowers_root.root / rel).read_bytes()
    # structurally validated files carry a marker with their SHA-256; no temporaries are left
    assert cache_files(o) == sorted(["flowers17/datasplits.mat", "flowers17/distancematrices17itfeat08.mat",
                                     "flowers17/distancematrices17gcfeat06.mat",
                                     "flowers17/.distancematrices17itfeat08.mat.verified",
                                     "flowers17/.distancematrices17gcfeat06.mat.verified"])
    n = len(flowers_server.log)
    assert dl.fetch("flowers17", o) == paths
    assert len(flowers_server.log) == n  # served from the cache, no request


def test_checksum_mismatch_is_a_clear_error_and_keeps_nothing(tmp_path, flowers_root, flowers_server):
    o = opts(tmp_path, flowers_server, flowers_root.checksums)
    rf = rf_of("flowers17", "flowers17/datasplits.mat", o)
    flowers_server.rules["flowers17/datasplits.mat"] = "corrupt"
    with pytest.raises(dl.DataIntegrityError, match=r"(?i)md5.*does not match|checksum") as exc:
        dl.fetch_file(rf, o)
    assert "flowers17/datasplits.mat" in str(exc.value) and flowers_server.url in str(exc.value)
    assert cache_files(o) == []
    flowers_server.rules.clear()  # a later successful run proceeds
    assert dl.fetch_file(rf, o).read_bytes() == (flowers_root.root / rf.relpath).read_bytes()


def test_real_checksum_rejects_a_fixture_file(tmp_path, flowers_root, flowers_server):
    """Without the override, the official md5 of datasplits.mat is enforced."""
    o = opts(tmp_path, flowers_server)
    with pytest.raises(dl.DataIntegrityError, match="4828cddfd0d803c5abbdebcb1e148a1e"):
        dl.fetch_file(rf_of("flowers17", "flowers17/datasplits.mat", o), o)
    assert cache_files(o) == []


@pytest.mark.parametrize("relpath, error", [
    ("flowers17/datasplits.mat", "checksum"),  # known md5
    ("flowers17/distancematrices17itfeat08.mat", "structural validation failed"),  # validator only
])
def test_truncated_body_is_rejected(tmp_path, flowers_root, flowers_server, relpath, error):
    o = opts(tmp_path, flowers_server, flowers_root.checksums)
    flowers_server.rules[relpath] = "truncate"
    with pytest.raises(dl.DataIntegrityError, match=error):
        dl.fetch_file(rf_of("flowers17", relpath, o), o)
    assert cache_files(o) == []
    flowers_server.rules.clear()
    assert dl.fetch_file(rf_of("flowers17", relpath, o), o).is_file()


@pytest.mark.parametrize("rule, pattern", [("status:404", "404"), ("status:500", "500")])
def test_http_errors(tmp_path, flowers_root, flowers_server, rule, pattern):
    o = opts(tmp_path, flowers_server, flowers_root.checksums)
    rel = "flowers17/distancematrices17gcfeat06.mat"
    flowers_server.rules[rel] = rule
    with pytest.raises(dl.DataDownloadError, match=pattern) as exc:
        dl.fetch("flowers17", o)
    msg = str(exc.value)
    assert rel in msg and flowers_server.url + rel in msg and "data_mirror" in msg
    assert rel not in trusted(o) and not any("tmp" in f for f in cache_files(o))
    flowers_server.rules.clear()
    assert dl.fetch("flowers17", o)[rel].is_file()


def test_connection_dropped_mid_transfer_then_rerun_succeeds(tmp_path, flowers_root, flowers_server):
    o = opts(tmp_path, flowers_server, flowers_root.checksums)
    rel = "flowers17/distancematrices17itfeat08.mat"
    flowers_server.rules[rel] = "drop"
    with pytest.raises(dl.DataDownloadError, match="(?i)incomplete|connection"):
        dl.fetch("flowers17", o)
    assert rel not in trusted(o)
    assert not any(Path(f).name.startswith("tmp") for f in cache_files(o))  # no partial file either
    flowers_server.rules.clear()
    paths = dl.fetch("flowers17", o)
    assert paths[rel].read_bytes() == (flowers_root.root / rel).read_bytes()


def test_retries_recover_from_transient_failures(tmp_path, flowers_root, flowers_server):
    o = opts(tmp_path, flowers_server, flowers_root.checksums, retries=1)
    rel = "flowers17/datasplits.mat"
    flowers_server.rules[rel] = ["drop", "ok"]
    assert dl.fetch_file(rf_of("flowers17", rel, o), o).is_file()
    assert flowers_server.requests_for(rel) == 2


def test_interrupted_download_leaves_nothing_a_rerun_trusts(tmp_path, flowers_root, flowers_server):
    """A process killed after writing part of a file (no marker, stray temporary): the rerun re-checks,
    discards the partial file and downloads again."""
    o = opts(tmp_path, flowers_server, flowers_root.checksums)
    rel = "flowers17/distancematrices17gcfeat06.mat"
    full = (flowers_root.root / rel).read_bytes()
    dest = o.cache_dir / rel
    dest.parent.mkdir(parents=True)
    dest.write_bytes(full[: len(full) // 3])
    (dest.parent / "tmpab12cd").write_bytes(full[:100])  # pooch temporary of the killed process
    p = dl.fetch_file(rf_of("flowers17", rel, o), o)
    assert p.read_bytes() == full and flowers_server.requests_for(rel) == 1


def test_corrupted_cache_is_refetched_online_and_rejected_offline(tmp_path, flowers_root, flowers_server):
    o = opts(tmp_path, flowers_server, flowers_root.checksums)
    paths = dl.fetch("flowers17", o)
    for rel in ("flowers17/datasplits.mat", "flowers17/distancematrices17itfeat08.mat"):  # md5 / marker
        data = bytearray(paths[rel].read_bytes())
        data[len(data) // 2] ^= 0xFF
        paths[rel].write_bytes(bytes(data))
    before = len(flowers_server.log)
    again = dl.fetch("flowers17", o)
    assert len(flowers_server.log) == before + 2
    for rel, p in again.items():
        assert p.read_bytes() == (flowers_root.root / rel).read_bytes()
    # offline: detected, removed, clear error naming the file, its URL and the mirror option
    p = again["flowers17/distancematrices17gcfeat06.mat"]
    p.write_bytes(p.read_bytes()[:-10])
    off = opts(tmp_path, flowers_server, flowers_root.checksums, offline=True)
    with pytest.raises(dl.DataIntegrityError, match="failed verification and was removed") as exc:
        dl.fetch("flowers17", off)
    assert "data_mirror" in str(exc.value) and not p.exists()


def test_structurally_invalid_download_is_deleted(tmp_path):
    root = tmp_path / "srv"
    D = pf.chi2_dist(np.random.default_rng(0).uniform(size=(34, 5)))
    D[0, 1] += 1.0  # not symmetric
    pf.savemat(root / "flowers17" / "distancematrices17gcfeat06.mat",
               {"D_colourgc": D, "D_shapegc": D, "D_texturegc": D})
    with pf.serve_directory(root) as srv:
        o = opts(tmp_path, srv)
        with pytest.raises(dl.DataIntegrityError, match="not symmetric.*deleted"):
            dl.fetch_file(rf_of("flowers17", "flowers17/distancematrices17gcfeat06.mat", o), o)
    assert cache_files(o) == []


# ------------------------------------------------------------------------------- archives (CUB) over HTTP


def test_cub_archive_download_and_member_extraction(tmp_path):
    fs = pf.write_cub(tmp_path / "srv")
    with pf.serve_directory(fs.root) as srv:
        o = opts(tmp_path, srv, fs.checksums)
        paths = dl.fetch("cub", o)
        assert srv.requests_for("cub/CUB_200_2011.tgz") == 1  # one download, one pass for every member
        members, _ = pf.cub_members()
        for rel, p in paths.items():
            assert p.read_bytes() == members[f"CUB_200_2011/{rel[4:]}"]
        # the archive is cached: a removed member is re-extracted without a new download
        paths["cub/classes.txt"].unlink()
        assert dl.fetch("cub", o)["cub/classes.txt"].is_file()
        assert srv.requests_for("cub/CUB_200_2011.tgz") == 1
        # optional members, including attributes.txt from the archive's top level
        opt = dl.fetch("cub", o, include_optional=True)
        assert opt["cub/attributes.txt"].read_bytes() == members["attributes.txt"]


def test_cub_archive_checksum_mismatch(tmp_path):
    fs = pf.write_cub(tmp_path / "srv")
    with pf.serve_directory(fs.root) as srv:
        o = opts(tmp_path, srv, fs.checksums)
        srv.rules["cub/CUB_200_2011.tgz"] = "truncate"
        with pytest.raises(dl.DataIntegrityError, match="(?i)md5"):
            dl.fetch("cub", o)
        assert trusted(o) == []
        srv.rules.clear()
        assert len(dl.fetch("cub", o)) == 5


# --------------------------------------------------------------------------------- mirror and offline


def test_mirror_reads_real_flowers_datasplits(tmp_path, shared_data):
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=shared_data, offline=True)
    rf = rf_of("flowers17", "flowers17/datasplits.mat", o)
    p = dl.fetch_file(rf, o)
    assert p == shared_data / "flowers17" / "datasplits.mat"
    assert hashlib.md5(p.read_bytes()).hexdigest() == "4828cddfd0d803c5abbdebcb1e148a1e"
    assert not o.cache_dir.exists()  # read in place, nothing copied


def test_mirror_reads_real_ssl_benchmarks_and_multiview_mnist(tmp_path, shared_data):
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=shared_data, offline=True)
    for name in ("ssl_benchmarks", "multiview_mnist"):
        paths = dl.fetch(name, o, include_optional=True)
        assert all(Path(p).is_relative_to(shared_data) for p in paths.values())
    assert "ssl_benchmarks/COIL20_cai.mat" in dl.fetch("ssl_benchmarks", o)


def test_corrupted_mirror_file_is_an_error(tmp_path, shared_data):
    mirror = tmp_path / "mirror"
    (mirror / "flowers17").mkdir(parents=True)
    data = bytearray((shared_data / "flowers17" / "datasplits.mat").read_bytes())
    data[-5] ^= 0x01
    (mirror / "flowers17" / "datasplits.mat").write_bytes(bytes(data))
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=mirror, offline=True)
    with pytest.raises(dl.DataIntegrityError, match="data_mirror"):
        dl.fetch_file(rf_of("flowers17", "flowers17/datasplits.mat", o), o)
    assert (mirror / "flowers17" / "datasplits.mat").exists()  # never deleted


def test_offline_missing_files_one_message(tmp_path, shared_data):
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=shared_data, offline=True)
    with pytest.raises(dl.DataUnavailableError) as exc:
        dl.check_available(["flowers17", "cub", "caltech101"], o)
    msg = str(exc.value)
    for rel in ("flowers17/distancematrices17itfeat08.mat", "flowers17/distancematrices17gcfeat06.mat",
                "cub/attributes/image_attribute_labels.txt", "caltech101/cal101-ker-15-1/el2_gb.mat",
                "caltech101/cal101-meta/meta-15-3.mat"):
        assert rel in msg
    assert "https://www.robots.ox.ac.uk/~vgg/data/flowers/17/distancematrices17itfeat08.mat" in msg
    assert dl.CUB_ARCHIVE_URL in msg and "CUB_200_2011/attributes/image_attribute_labels.txt" in msg
    assert "data_mirror" in msg and str(shared_data) in msg
    assert "flowers17/datasplits.mat " not in msg and "cub/images.txt" not in msg  # present in the mirror
    assert msg.count("\n  - ") == 2 + 1 + 63
    # the same single message from fetch, before anything is downloaded or written
    with pytest.raises(dl.DataUnavailableError, match="distancematrices17gcfeat06"):
        dl.fetch("flowers17", o)
    assert not o.cache_dir.exists()
    # what is there passes the check
    assert dl.check_available("ssl_benchmarks", o)["ssl_benchmarks/g50c.mat"] == shared_data / "ssl_benchmarks" / \
        "g50c.mat"


def test_offline_without_mirror_and_bad_mirror(tmp_path):
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=False, offline=True)
    with pytest.raises(dl.DataUnavailableError, match="data_mirror = not set"):
        dl.check_available("flowers17", o)
    bad = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=tmp_path / "nope", offline=True)
    with pytest.raises(dl.DataUnavailableError, match="not a directory"):
        dl.check_available("ssl_benchmarks", bad)


def test_mirror_with_fixture_cub_metadata_extracts_from_mirror_archive(tmp_path):
    """Mirror holding only the archive: members are extracted into the cache, offline."""
    fs = pf.write_cub(tmp_path / "mirror")
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=fs.root, offline=True, checksums=fs.checksums)
    assert dl.check_available("cub", o)["cub/images.txt"] is None  # will come from the archive
    paths = dl.fetch("cub", o)
    assert all(Path(p).is_relative_to(o.cache_dir) for p in paths.values())


def test_cli_check_exit_status_and_message(tmp_path, capsys, shared_data):
    rc = dl.main(["check", "flowers17", "--data-mirror", str(shared_data), "--cache-dir", str(tmp_path),
                  "--offline"])
    err = capsys.readouterr().err
    assert rc == 1 and "distancematrices17gcfeat06.mat" in err and "Traceback" not in err
    assert dl.main(["check", "ssl_benchmarks", "--data-mirror", str(shared_data), "--cache-dir",
                    str(tmp_path), "--offline"]) == 0
    assert dl.main(["list", "cub"]) == 0 and "image_attribute_labels" in capsys.readouterr().out


def test_mirror_copy_of_fixture_flowers_is_used_offline(tmp_path, flowers_root):
    mirror = tmp_path / "mirror"
    shutil.copytree(flowers_root.root / "flowers17", mirror / "flowers17")
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=mirror, offline=True,
                       checksums=flowers_root.checksums)
    paths = dl.fetch("flowers17", o)
    assert all(p.parent == mirror / "flowers17" for p in paths.values())


# ------------------------------------------------------------------------- check verifies the local files


def _damaged(src, dest, how):
    """A copy of ``src`` at ``dest``, truncated to half its length or with one bit flipped in the middle."""
    data = bytearray(Path(src).read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0x01
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(bytes(data))
    return hashlib.sha256(bytes(data)).hexdigest()


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_check_refuses_a_damaged_mirror_file_with_one_line(tmp_path, capsys, shared_data, how):
    """A mirror file whose SHA-256 is known: ``check`` (not only ``fetch``) names it, its path and both digests."""
    mirror = tmp_path / "mirror"
    shutil.copytree(shared_data / "ssl_benchmarks", mirror / "ssl_benchmarks",
                    ignore=shutil.ignore_patterns("chapelle_ssl_book"))
    bad = mirror / "ssl_benchmarks" / "uspst.mat"
    got = _damaged(shared_data / "ssl_benchmarks" / "uspst.mat", bad, how)
    expected = hashlib.sha256((shared_data / "ssl_benchmarks" / "uspst.mat").read_bytes()).hexdigest()
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=mirror, offline=True)
    assert dl.check_available("ssl_benchmarks", o)["ssl_benchmarks/uspst.mat"] == bad  # present: not enough
    with pytest.raises(dl.DataIntegrityError) as info:
        dl.verify_available("ssl_benchmarks", o)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("ssl_benchmarks/uspst.mat: sha256 checksum mismatch")
    assert f"expected {expected}, got {got}" in msg and str(bad) in msg
    rc = dl.main(["check", "ssl_benchmarks", "--data-mirror", str(mirror), "--cache-dir", str(tmp_path / "c2"),
                  "--offline"])
    err = capsys.readouterr().err
    assert rc == 1 and err == f"error: {msg}\n"
    assert not (tmp_path / "cache").exists() and not (tmp_path / "c2").exists()  # nothing written


def test_check_verifies_intact_mirror_files_and_structure_without_a_checksum(tmp_path, capsys, shared_data,
                                                                             flowers_root):
    """Intact files pass; a file without a published checksum (the Flowers-17 distances) is checked
    structurally, so a truncated copy fails; every bad file gets its own line."""
    mirror = tmp_path / "mirror"
    shutil.copytree(flowers_root.root / "flowers17", mirror / "flowers17")
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=mirror, offline=True,
                       checksums=flowers_root.checksums)
    assert set(dl.verify_available("flowers17", o).values()) == {mirror / "flowers17" / n for n in (
        "datasplits.mat", "distancematrices17itfeat08.mat", "distancematrices17gcfeat06.mat")}
    rc = dl.main(["check", "ssl_benchmarks", "--data-mirror", str(shared_data), "--cache-dir", str(tmp_path / "c"),
                  "--offline"])
    assert rc == 0 and "4 local and verified, 0 to download" in capsys.readouterr().out
    dist = mirror / "flowers17" / "distancematrices17gcfeat06.mat"
    _damaged(flowers_root.root / "flowers17" / dist.name, dist, "truncated")
    _damaged(flowers_root.root / "flowers17" / "datasplits.mat", mirror / "flowers17" / "datasplits.mat", "flipped")
    with pytest.raises(dl.DataIntegrityError) as info:
        dl.verify_available("flowers17", o)
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("flowers17/datasplits.mat: md5 checksum mismatch")
    assert lines[1].startswith("flowers17/distancematrices17gcfeat06.mat: structural validation failed")
    assert all(f"The file in data_mirror ({mirror / 'flowers17'}" in line for line in lines)


def test_check_offline_refuses_a_changed_cached_file(tmp_path, flowers_root, flowers_server):
    """A cached file checked structurally when downloaded: offline, a later change (its SHA-256 differs from the
    one recorded) is reported by check; online it would be downloaded again, so check passes."""
    o = opts(tmp_path, flowers_server, checksums=flowers_root.checksums)
    dl.fetch("flowers17", o)
    cached = o.cache_dir / "flowers17" / "distancematrices17itfeat08.mat"
    _damaged(flowers_root.root / "flowers17" / cached.name, cached, "flipped")
    assert dl.verify_available("flowers17", o)  # online: a bad cache copy is replaced when fetched
    offline = dl.DataOptions(cache_dir=o.cache_dir, data_mirror=False, offline=True,
                             checksums=flowers_root.checksums)
    with pytest.raises(dl.DataIntegrityError, match=r"cached flowers17/distancematrices17itfeat08.mat .*differs "
                                                    r"from the one recorded"):
        dl.verify_available("flowers17", offline)
    assert cached.exists()  # check removes nothing


def test_mirror_sha256sums_verify_files_the_registry_has_no_checksum_for(tmp_path, capsys, flowers_root):
    """A byte flipped in the text header of a Flowers-17 distance file (no published checksum) keeps it
    structurally valid, so only a checksum can tell: with the mirror's SHA256SUMS listing the file, ``check``
    refuses it with the DataIntegrityError's one line (file, path, both digests); without the list it passes."""
    mirror = tmp_path / "mirror"
    shutil.copytree(flowers_root.root / "flowers17", mirror / "flowers17")
    name = "flowers17/distancematrices17itfeat08.mat"
    intact = hashlib.sha256((mirror / name).read_bytes()).hexdigest()
    data = bytearray((mirror / name).read_bytes())
    data[20] ^= 0x01  # inside the 116-byte descriptive text of a MAT v5 header
    (mirror / name).write_bytes(bytes(data))
    got = hashlib.sha256(bytes(data)).hexdigest()
    o = dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=mirror, offline=True,
                       checksums=flowers_root.checksums)
    assert dl.verify_available("flowers17", o)  # structure alone: accepted
    (mirror / dl.MIRROR_SUMS).write_text(f"{intact}  ./{name}\n")
    assert dl.mirror_checksums(mirror) == {name: f"sha256:{intact}"}
    with pytest.raises(dl.DataIntegrityError) as info:
        dl.verify_available("flowers17", o)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{name}: sha256 checksum mismatch: expected {intact}, got {got}")
    assert str(mirror / name) in msg
    with pytest.raises(dl.DataIntegrityError, match="sha256 checksum mismatch"):
        dl.fetch("flowers17", o)  # the jobs' fetch agrees with check
    rc = dl.main(["check", "flowers17", "--data-mirror", str(mirror), "--cache-dir", str(tmp_path / "c2"),
                  "--offline"])
    err = capsys.readouterr().err
    assert rc == 1 and f"{name}: sha256 checksum mismatch" in err

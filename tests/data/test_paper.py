"""Loaders and protocol draws of the paper's data sets (mvl.data.paper, Section 7.2).

Loaders are run on format-faithful fixtures (tests/paper_fixtures.py), fetched through mvl.data.download
(local HTTP server or mirror); the Flowers-17 splits and the CUB metadata are the real files of
../shared/data (missing folder: FAIL unless MVL_ALLOW_MISSING_SHARED_DATA=1). Reference values are
computed here with plain numpy.
"""

from __future__ import annotations

import json

import numpy as np
import paper_fixtures as pf
import pytest

from mvl.data import download as dl
from mvl.data import paper as P

from conftest import SHARED  # noqa: F401  (the real data folder; fixture shared_data in conftest)




def mirror_options(tmp_path, root, checksums=None):
    return dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=root, offline=True, checksums=checksums or {})


def sqdist(A, B):
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)


# ------------------------------------------------------------------------------------------ Flowers-17


@pytest.fixture(scope="module")
def flowers_fixture(tmp_path_factory):
    return pf.write_flowers17(tmp_path_factory.mktemp("flowers"))


@pytest.fixture(scope="module")
def flowers(flowers_fixture, tmp_path_factory):
    o = mirror_options(tmp_path_factory.mktemp("c"), flowers_fixture.root, flowers_fixture.checksums)
    return P.load_flowers17(dl.fetch("flowers17", o, include_optional=True))


def test_flowers17_loader_views_in_paper_order(flowers, flowers_fixture):
    exp = flowers_fixture.expected
    assert flowers.view_names == ("hog", "hsv", "siftbdy", "siftint", "colourgc", "texturegc", "shapegc")
    variables = ["D_hog", "D_hsv", "D_siftbdy", "D_siftint", "D_colourgc", "D_texturegc", "D_shapegc"]
    assert flowers.distances.shape == (7, exp["n"], exp["n"]) and flowers.distances.dtype == np.float64
    for i, v in enumerate(variables):
        np.testing.assert_array_equal(flowers.distances[i], exp["D"][v])
    np.testing.assert_array_equal(flowers.y, np.arange(exp["n"]) // 20)
    for s in (1, 2, 3):
        for part in ("trn", "val", "tst"):
            np.testing.assert_array_equal(flowers.splits[s][part], np.asarray(exp["splits"][s][part]) - 1)
    assert flowers.image_names[0] == "image_0001.jpg" and len(flowers.image_names) == exp["n"]


def test_flowers17_kernels_are_exp_minus_d_over_mean(flowers):
    sp = flowers.splits[2]
    train, test = sp["trn"][:50], sp["tst"][:7]
    K, Kt = flowers.kernels(train, test)
    assert K.shape == (50, 50, 7) and Kt.shape == (7, 50, 7)  # sample-first, views on the last axis
    for i in range(7):
        D = flowers.distances[i]
        scale = D[np.ix_(train, train)].mean()
        np.testing.assert_allclose(K[..., i], np.exp(-D[np.ix_(train, train)] / scale), rtol=1e-13)
        np.testing.assert_allclose(Kt[..., i], np.exp(-D[np.ix_(test, train)] / scale), rtol=1e-13)
    Ks, _ = flowers.kernels(train, views=["shapegc", "hog"])
    np.testing.assert_array_equal(Ks, K[..., [6, 0]])
    with pytest.raises(ValueError, match="unknown view"):
        flowers.kernels(train, views=["sift"])


def test_flowers17_view_subset_and_download_over_http(flowers_fixture, tmp_path):
    with pf.serve_directory(flowers_fixture.root) as srv:
        o = dl.DataOptions(cache_dir=tmp_path / "cache", base_url=srv.url, checksums=flowers_fixture.checksums,
                           offline=False, retries=0, data_mirror=False)
        data = P.load_flowers17(options=o, views=("shapegc", "hsv"))
    assert data.view_names == ("shapegc", "hsv")
    np.testing.assert_array_equal(data.distances[0], flowers_fixture.expected["D"]["D_shapegc"])
    with pytest.raises(ValueError, match="unknown Flowers-17 view"):
        P.load_flowers17(options=o, views=("hog", "colour"))


def test_flowers17_real_official_splits(shared_data):
    sp = P.load_flowers17_splits(shared_data / "flowers17" / "datasplits.mat")
    np.testing.assert_array_equal(sp.y, np.arange(1360) // 80)
    assert sp.n_per_class == 80 and sorted(sp.splits) == [1, 2, 3]
    for s in (1, 2, 3):
        parts = sp.splits[s]
        assert [parts[p].size for p in ("trn", "val", "tst")] == [680, 340, 340]
        np.testing.assert_array_equal(np.sort(np.concatenate(list(parts.values()))), np.arange(1360))
        for p, per in (("trn", 40), ("val", 20), ("tst", 20)):
            np.testing.assert_array_equal(np.bincount(sp.y[parts[p]], minlength=17), np.full(17, per))
    assert sp.splits[1]["trn"][0] == 23  # trn1(1) = 24 in the file (1-based)


@pytest.mark.parametrize("split", [1, 2, 3])
def test_flowers17_draws_on_real_splits(shared_data, split):
    sp = P.load_flowers17_splits(shared_data / "flowers17" / "datasplits.mat")
    parts = sp.splits[split]
    prev = None
    for l_c in P.FLOWERS17_LABELS_PER_CLASS:
        d = P.flowers17_draw(sp, split, l_c, u_c=5, seed=3)
        assert d.dataset == "flowers17" and (d.split, d.seed, d.l_c, d.u_c) == (split, 3, l_c, 5)
        np.testing.assert_array_equal(np.bincount(sp.y[d.labelled], minlength=17), np.full(17, l_c))
        np.testing.assert_array_equal(np.bincount(sp.y[d.unlabelled], minlength=17), np.full(17, 5))
        assert np.isin(d.labelled, parts["trn"]).all() and np.isin(d.unlabelled, parts["val"]).all()
        np.testing.assert_array_equal(d.test, np.sort(parts["tst"]))
        np.testing.assert_array_equal(np.sort(np.concatenate([d.unlabelled, d.validation])), np.sort(parts["val"]))
        if prev is not None:  # nested across l_c
            assert np.isin(prev.labelled, d.labelled).all()
            np.testing.assert_array_equal(prev.unlabelled, d.unlabelled)
        prev = d
    np.testing.assert_array_equal(np.sort(prev.labelled), np.sort(parts["trn"]))  # l_c = 40: all of trn
    a, b = P.flowers17_draw(sp, split, 5, seed=3), P.flowers17_draw(sp, split, 5, seed=3)
    np.testing.assert_array_equal(a.labelled, b.labelled)
    assert not np.array_equal(a.labelled, P.flowers17_draw(sp, split, 5, seed=4).labelled)
    sup = P.flowers17_draw(sp, split, 10, u_c=0, seed=3)
    assert sup.unlabelled.size == 0 and sup.validation.size == 340
    np.testing.assert_array_equal(sup.labelled, P.flowers17_draw(sp, split, 10, u_c=5, seed=3).labelled)
    with pytest.raises(ValueError, match="do not fit"):
        P.flowers17_draw(sp, split, 41)


def test_flowers17_problem(flowers):
    d = P.flowers17_draw(flowers, 1, l_c=4, u_c=2, seed=0)
    prob = flowers.problem(d, views=("hog", "hsv", "siftint"))
    n = d.labelled.size + d.unlabelled.size
    assert prob.K.shape == (n, n, 3) and prob.K_test.shape == (d.test.size, n, 3)
    assert prob.K_val.shape == (d.validation.size, n, 3) and prob.view_names == ("hog", "hsv", "siftint")
    assert (prob.y[: d.labelled.size] >= 0).all() and (prob.y[d.labelled.size:] == -1).all()
    np.testing.assert_array_equal(prob.y_test, flowers.y[d.test])
    K, Kt = flowers.kernels(d.train, d.test, views=("hog", "hsv", "siftint"))
    np.testing.assert_array_equal(prob.K, K)
    np.testing.assert_array_equal(prob.K_test, Kt)


def test_draw_roundtrips_through_json(flowers):
    d = P.flowers17_draw(flowers, 3, l_c=2, seed=9)
    e = P.PaperDraw.from_dict(json.loads(json.dumps(d.to_dict())))
    assert e.l_c == 2 and e.seed == 9 and e.split == 3
    for k in ("labelled", "unlabelled", "validation", "test"):
        np.testing.assert_array_equal(getattr(d, k), getattr(e, k))


# ----------------------------------------------------------------------------------------- Caltech-101


@pytest.fixture(scope="module")
def caltech_fixture(tmp_path_factory):
    return pf.write_caltech101(tmp_path_factory.mktemp("caltech"))


@pytest.fixture(scope="module")
def caltech_paths(caltech_fixture, tmp_path_factory):
    with pf.serve_directory(caltech_fixture.root) as srv:  # all 63 files through the real download path
        o = dl.DataOptions(cache_dir=tmp_path_factory.mktemp("cache"), base_url=srv.url, offline=False, retries=0,
                           data_mirror=False)
        return dl.fetch("caltech101", o)


@pytest.mark.parametrize("views", [P.CALTECH101_VIEWS_4, P.CALTECH101_VIEWS_10])
def test_caltech101_loader(caltech_paths, caltech_fixture, views):
    assert P.CALTECH101_VIEWS_4 == ("echi2_phowColor_L2", "echi2_phowGray_L2", "echi2_ssim_L2", "el2_gb")
    assert len(P.CALTECH101_VIEWS_10) == 10 and P.CALTECH101_VIEWS_10[:3] == (
        "echi2_phowColor_L0", "echi2_phowColor_L1", "echi2_phowColor_L2")
    data = P.load_caltech101(2, views=views, paths=caltech_paths)
    exp = caltech_fixture.expected[2]
    n, t = exp["y_train"].size, exp["y_test"].size
    assert data.view_names == tuple(views) and data.K_train.shape == (len(views), n, n)
    assert data.K_test.shape == (len(views), t, n) and data.K_train.dtype == np.float64
    for i, v in enumerate(views):
        Ktr, Kte = exp["kernels"][v]
        np.testing.assert_allclose(data.K_train[i], Ktr, rtol=1e-6)
        np.testing.assert_array_equal(data.K_test[i], Kte.T)  # stored train x test, returned test x train
    np.testing.assert_array_equal(data.y_train, exp["y_train"])
    np.testing.assert_array_equal(data.y_test, exp["y_test"])
    assert data.train_names[:2] == tuple(exp["names_train"][:2])
    for c in range(3):  # per class: 15 originals then their 15 flipped copies
        idx = np.flatnonzero(data.y_train == c)
        assert data.original[idx[:15]].all() and not data.original[idx[15:]].any()
        np.testing.assert_array_equal(data.twin[idx[:15]], idx[15:])
        np.testing.assert_array_equal(data.twin[idx[15:]], idx[:15])


def test_caltech101_root_layout_discovery_and_shape_checks(tmp_path):
    fs = pf.write_caltech101(tmp_path, splits=(1,), test_prefix="tst-")
    folder = tmp_path / "caltech101"
    data = P.load_caltech101(1, views=P.CALTECH101_VIEWS_10, root=folder)
    np.testing.assert_array_equal(data.K_test[9], fs.expected[1]["kernels"]["el2_gb"][1].T)
    # fallback of the authors' code: sorted listing, second half = test kernels
    ker = folder / "cal101-ker-15-1"
    for i, name in enumerate(sorted(P.CALTECH101_VIEWS_10)):
        (ker / f"tst-{name}.mat").rename(ker / f"x{i:02d}.mat")
    data2 = P.load_caltech101(1, views=("el2_gb", "echi2_ssim_L1"), root=folder)
    np.testing.assert_array_equal(data2.K_test[0], data.K_test[9])
    np.testing.assert_array_equal(data2.K_test[1], data.K_test[7])
    pf.savemat(ker / "el2_gb.mat", {"matrix": np.eye(5)})
    with pytest.raises(dl.DataIntegrityError, match="metadata has 90 training images"):
        P.load_caltech101(1, views=("el2_gb",), root=folder)
    with pytest.raises(ValueError, match="unknown Caltech-101 kernel"):
        P.load_caltech101(1, views=("phow",), root=folder)


def test_caltech101_draws(caltech_paths):
    data = P.load_caltech101(1, views=P.CALTECH101_VIEWS_4, paths=caltech_paths)
    prev = None
    for l_c in P.CALTECH101_LABELS_PER_CLASS[:3]:  # 1, 5, 10 with u_c = 5
        d = P.caltech101_draw(data, l_c, u_c=5, seed=2)
        lab_orig = d.labelled[data.original[d.labelled]]
        np.testing.assert_array_equal(np.bincount(data.y_train[lab_orig], minlength=3), np.full(3, l_c))
        assert d.labelled.size == 2 * 3 * l_c and d.unlabelled.size == 2 * 3 * 5  # with flipped copies
        assert np.isin(data.twin[d.labelled], d.labelled).all() and np.isin(data.twin[d.unlabelled], d.unlabelled).all()
        assert not np.intersect1d(d.labelled, d.unlabelled).size
        np.testing.assert_array_equal(d.test, np.arange(data.y_test.size))
        if prev is not None:
            assert np.isin(prev.labelled, d.labelled).all()
            np.testing.assert_array_equal(np.sort(prev.unlabelled), np.sort(d.unlabelled))
        prev = d
    sup = P.caltech101_draw(data, 15, seed=2)  # supervised, all 15 originals (and copies)
    assert sup.labelled.size == 2 * 3 * 15 and sup.unlabelled.size == 0
    opt = P.caltech101_draw(data, 10, n_val_per_class=5, seed=2)  # optC: validation 5 per class
    assert data.original[opt.validation].all() and not np.intersect1d(opt.validation, opt.labelled).size
    np.testing.assert_array_equal(np.bincount(data.y_train[opt.validation], minlength=3), np.full(3, 5))
    np.testing.assert_array_equal(opt.labelled, P.caltech101_draw(data, 10, u_c=5, seed=2).labelled)
    five = P.caltech101_draw(data, 5, seed=2).labelled
    assert not np.array_equal(five, P.caltech101_draw(data, 5, seed=3).labelled)
    np.testing.assert_array_equal(five, P.caltech101_draw(data, 5, seed=2).labelled)
    with pytest.raises(ValueError, match="do not fit"):
        P.caltech101_draw(data, 15, u_c=5)  # footnote 6: nothing left at l_c = 15
    orig = P.caltech101_draw(data, 5, u_c=5, seed=2, include_flipped=False)
    assert data.original[orig.train].all() and orig.labelled.size == 15
    prob = data.problem(opt)
    n = opt.labelled.size
    assert prob.K.shape == (n, n, 4) and prob.K_val.shape == (opt.validation.size, n, 4)
    assert prob.K_test.shape == (data.y_test.size, n, 4) and (prob.y >= 0).all()
    np.testing.assert_array_equal(prob.K_val[..., 0], data.K_train[0][np.ix_(opt.validation, opt.train)])
    np.testing.assert_array_equal(prob.K_test[..., 2], data.K_test[2][:, opt.train])


# ----------------------------------------------------------------------------------------------- CUB


@pytest.fixture(scope="module")
def cub_fixture(tmp_path_factory):
    return pf.write_cub(tmp_path_factory.mktemp("cub"))


@pytest.fixture(scope="module")
def cub(cub_fixture, tmp_path_factory):
    with pf.serve_directory(cub_fixture.root) as srv:
        o = dl.DataOptions(cache_dir=tmp_path_factory.mktemp("cache"), base_url=srv.url,
                           checksums=cub_fixture.checksums, offline=False, retries=0, data_mirror=False)
        return dl.fetch("cub", o)


def test_cub_loader_attributes(cub, cub_fixture):
    exp = cub_fixture.expected
    data = P.load_cub(cub)
    assert data.view_names == ("attributes",) and data.attributes.shape == (exp["n"], 312)
    np.testing.assert_array_equal(data.attributes, exp["attributes"])  # extra-field lines tolerated
    np.testing.assert_array_equal(data.y, exp["y"])
    np.testing.assert_array_equal(data.is_train, exp["is_train"])
    assert data.class_names == tuple(exp["classes"]) and data.image_names[3] == exp["names"][3]
    train, test = np.flatnonzero(data.is_train)[:40], np.flatnonzero(~data.is_train)[:9]
    K, Kt = data.kernels(train, test)
    X, Xt = data.attributes[train], data.attributes[test]
    d = np.sqrt(sqdist(X, X)[np.triu_indices(40, 1)])
    s2 = 2 * np.median(d) ** 2  # median pairwise distance of the training points
    np.testing.assert_allclose(K[..., 0], np.exp(-sqdist(X, X) / s2), rtol=1e-12)
    np.testing.assert_allclose(Kt[..., 0], np.exp(-sqdist(Xt, X) / s2), rtol=1e-12)


def test_cub_image_view_formats(cub, cub_fixture, tmp_path):
    exp = cub_fixture.expected
    n = exp["n"]
    H = np.random.default_rng(1).gamma(1.0, size=(n, 20))
    perm = np.random.default_rng(2).permutation(n)
    np.savez(tmp_path / "features.npz", features=H[perm], image_ids=perm + 1)  # rows in any order
    data = P.load_cub(cub, image_view=tmp_path / "features.npz")
    assert data.view_names == ("image", "attributes")
    train, test = np.flatnonzero(data.is_train)[:30], np.flatnonzero(~data.is_train)[:5]
    K, Kt = data.kernels(train, test)
    D, Dt = pf.chi2_dist(H[train]), pf.chi2_dist(H[test], H[train])
    s = np.median(D[~np.eye(30, dtype=bool)])
    np.testing.assert_allclose(K[..., 0], np.exp(-D / s), rtol=1e-10)
    np.testing.assert_allclose(Kt[..., 0], np.exp(-Dt / s), rtol=1e-10)
    data_mean = P.load_cub(cub, image_view=tmp_path / "features.npz", chi2_scale="mean")
    np.testing.assert_allclose(data_mean.kernels(train, views=["image"])[0][..., 0], np.exp(-D / D.mean()),
                               rtol=1e-10)
    Dall = pf.chi2_dist(H)
    np.fill_diagonal(Dall, 0)
    np.savez(tmp_path / "dist.npz", distances=0.5 * (Dall + Dall.T))
    Kd, _ = P.load_cub(cub, image_view=tmp_path / "dist.npz").kernels(train, views=["image"])
    np.testing.assert_allclose(Kd[..., 0], np.exp(-D / s), rtol=1e-10)
    G = H @ H.T
    np.savez(tmp_path / "kernel.npz", kernel=G)
    Kk, Kkt = P.load_cub(cub, image_view=tmp_path / "kernel.npz").kernels(train, test, views=["image"])
    np.testing.assert_array_equal(Kk[..., 0], G[np.ix_(train, train)])
    np.testing.assert_array_equal(Kkt[..., 0], G[np.ix_(test, train)])
    np.savez(tmp_path / "bad.npz", features=H[:-1])
    with pytest.raises(ValueError, match="does not cover images"):
        P.load_cub(cub, image_view=tmp_path / "bad.npz")
    np.savez(tmp_path / "two.npz", features=H, kernel=G)
    with pytest.raises(ValueError, match="exactly one"):
        P.load_cub(cub, image_view=tmp_path / "two.npz")


def test_read_image_attribute_labels_rejects_bad_files(tmp_path):
    good = "".join(f"{i} {a} {(i + a) % 2} 3 1.5\n" for i in (1, 2) for a in range(1, 313))
    p = tmp_path / "a.txt"
    p.write_text(good)
    assert P.read_image_attribute_labels(p).shape == (2, 312)
    for bad, msg in [(good.replace("2 5 1 3", "2 5 2 3"), "0 or 1"),
                     (good.replace("2 5 1 3", "2 4 1 3"), "more than once"),
                     ("\n".join(good.splitlines()[:-1]) + "\n", "rows, expected")]:
        p.write_text(bad)
        with pytest.raises(ValueError, match=msg):
            P.read_image_attribute_labels(p)


def test_cub_draws_on_real_metadata(shared_data, tmp_path):
    o = mirror_options(tmp_path, shared_data)
    files = [f for f in dl.dataset_files("cub", o) if f.relpath != "cub/attributes/image_attribute_labels.txt"]
    meta = P.load_cub_metadata({f.relpath: dl.fetch_file(f, o) for f in files})  # real files, sha256 verified
    assert meta["y"].size == 11788 and meta["is_train"].sum() == 5994 and len(meta["class_names"]) == 200

    class Meta:
        y, is_train = meta["y"], meta["is_train"]

    draws = {}
    for seed in P.CUB_SEEDS:
        prev = None
        for l_c in P.CUB_LABELS_PER_CLASS:
            d = P.cub_draw(Meta, l_c, u_c=5, seed=seed)
            np.testing.assert_array_equal(np.bincount(Meta.y[d.labelled], minlength=200), np.full(200, l_c))
            np.testing.assert_array_equal(np.bincount(Meta.y[d.unlabelled], minlength=200), np.full(200, 5))
            assert Meta.is_train[d.train].all() and not np.intersect1d(d.labelled, d.unlabelled).size
            assert d.test.size == 5794 and not Meta.is_train[d.test].any()
            if prev is not None:
                assert np.isin(prev.labelled, d.labelled).all()
                np.testing.assert_array_equal(prev.unlabelled, d.unlabelled)
            prev = d
        draws[seed] = prev.labelled
    assert len({tuple(v) for v in draws.values()}) == 5  # five different draws
    np.testing.assert_array_equal(P.cub_draw(Meta, 15, seed=4).labelled, draws[4])  # reproducible


def test_cub_problem(cub):
    data = P.load_cub(cub)
    d = P.cub_draw(data, 3, u_c=5, seed=1)
    prob = data.problem(d)
    n = d.train.size
    assert prob.K.shape == (n, n, 1) and prob.K_test.shape == (d.test.size, n, 1) and prob.K_val is None
    assert (prob.y == -1).sum() == d.unlabelled.size


def test_every_dataset_gives_the_same_draw_object(flowers, caltech_paths, cub):
    """The workflow asks every dataset for a draw the same way (``kernel_draw``) and gets one kind of object."""
    from mvl.data.protocols import KernelDraw

    d = P.flowers17_draw(flowers, 2, l_c=3, u_c=2, seed=1)
    kd = flowers.kernel_draw(2, 3, 2, draw_seed=1, views=["hsv", "hog"])
    prob = flowers.problem(d, views=("hsv", "hog"))
    assert isinstance(kd, KernelDraw) and kd.view_names == ("hsv", "hog") and kd.n_labelled == d.labelled.size
    for a, b in ((kd.K_tr, prob.K), (kd.K_te, prob.K_test), (kd.K_va, prob.K_val), (kd.y_train, prob.y),
                 (kd.y_val, prob.y_val)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(d.validation, np.setdiff1d(flowers.splits[2]["val"], d.unlabelled))
    cal = P.load_caltech101(1, views=P.CALTECH101_VIEWS_4, paths=caltech_paths)
    kd = cal.kernel_draw(1, 5, 0, n_val_per_class=5, validation=True, draw_seed=2)
    opt = P.caltech101_draw(cal, 5, n_val_per_class=5, seed=2)
    np.testing.assert_array_equal(kd.K_va, cal.problem(opt).K_val)
    assert cal.kernel_draw(1, 5, 0, n_val_per_class=5, validation=False).K_va is None
    data = P.load_cub(cub)
    kd = data.kernel_draw(1, 3, 5, u_max=5)
    assert kd.K_va is None and kd.y_val.size == 0 and (kd.y_train == -1).sum() == 5 * len(np.unique(data.y))
    with pytest.raises(ValueError, match="random protocol only"):
        data.kernel_draw(1, 3, "all")

"""Splits and draws (mvl.data.protocols): stratified test splits, nested training draws, official splits."""

import numpy as np
import pytest

from mvl.data.protocols import Split, draw_training_set, stratified_split


def test_stratified_split_is_reproducible_and_stratified():
    y = np.repeat(np.arange(4), [30, 25, 40, 22])
    a, b, c = stratified_split(y, 10, seed=3), stratified_split(y, 10, seed=3), stratified_split(y, 10, seed=4)
    assert np.array_equal(a.test, b.test) and not np.array_equal(a.test, c.test)
    assert np.array_equal(np.bincount(y[a.test]), np.full(4, 10))
    assert np.intersect1d(a.pool, a.test).size == 0 and a.pool.size + a.test.size == y.size
    assert Split.from_dict(a.to_dict()) .test.tolist() == a.test.tolist()
    with pytest.raises(ValueError, match="class 3 has 22 samples"):
        stratified_split(y, 22, seed=0)


def test_draws_are_nested_and_disjoint():
    y = np.repeat(np.arange(3), 60)
    split = stratified_split(y, 10, seed=0)
    draws = {(lc, uc): draw_training_set(split, lc, uc, 5, u_max=20) for lc in (1, 5, 25) for uc in (0, 5, 20)}
    for (lc, uc), d in draws.items():
        assert np.array_equal(np.bincount(y[d.labelled], minlength=3), np.full(3, lc))
        assert d.unlabelled.size == 3 * uc and d.validation.size == 15
        sets = [set(d.labelled), set(d.unlabelled), set(d.validation), set(split.test)]
        assert sum(map(len, sets)) == len(set().union(*sets))  # pairwise disjoint
    assert set(draws[(1, 5)].labelled) <= set(draws[(5, 5)].labelled) <= set(draws[(25, 5)].labelled)
    assert set(draws[(5, 5)].unlabelled) <= set(draws[(5, 20)].unlabelled)
    assert np.array_equal(draws[(1, 0)].labelled, draws[(1, 20)].labelled)  # l set independent of u_c
    with pytest.raises(ValueError, match="need 51"):
        draw_training_set(split, 26, 5, 5, u_max=20)


def _official_sets():
    # 3 classes x 12 samples: per class 6 trn, 3 val, 3 tst (like Flowers-17's trn/val/tst, smaller)
    y = np.repeat(np.arange(3), 12)
    trn = np.concatenate([np.arange(12 * k, 12 * k + 6) for k in range(3)])
    val = np.concatenate([np.arange(12 * k + 6, 12 * k + 9) for k in range(3)])
    tst = np.concatenate([np.arange(12 * k + 9, 12 * k + 12) for k in range(3)])
    return y, trn, val, tst


def test_official_split_draws_labelled_from_trn_and_unlabelled_validation_from_val():
    from mvl.data.protocols import Split, draw_training_set, official_split

    y, trn, val, tst = _official_sets()
    split = official_split(y, trn, val, val, tst, seed=2)
    np.testing.assert_array_equal(split.test, tst)
    np.testing.assert_array_equal(split.pool, np.union1d(trn, val))
    split = Split.from_dict(split.to_dict())  # survives the JSON round trip of the workflow
    d = draw_training_set(split, l_c=4, u_c=2, n_val_per_class=1)
    assert set(d.labelled) <= set(trn) and set(d.unlabelled) <= set(val) and set(d.validation) <= set(val)
    assert not set(d.unlabelled) & set(d.validation)
    for part, per_class in ((d.labelled, 4), (d.unlabelled, 2), (d.validation, 1)):
        np.testing.assert_array_equal(np.bincount(y[part], minlength=3), [per_class] * 3)
    small = draw_training_set(split, l_c=1, u_c=1, n_val_per_class=1)  # nested across l_c and u_c
    assert set(small.labelled) <= set(d.labelled) and set(small.unlabelled) <= set(d.unlabelled)
    np.testing.assert_array_equal(small.validation, d.validation)
    other = official_split(y, trn, val, val, tst, seed=3)
    assert not np.array_equal(draw_training_set(other, 1, 1, 1).labelled, small.labelled)
    with pytest.raises(ValueError, match="unlabelled candidates"):
        draw_training_set(split, l_c=1, u_c=3, n_val_per_class=1)  # 3 val per class: 1 validation + 2 left
    with pytest.raises(ValueError, match="labelled candidates"):
        draw_training_set(split, l_c=7, u_c=0, n_val_per_class=1)


def test_official_split_rejects_overlaps():
    from mvl.data.protocols import official_split

    y, trn, val, tst = _official_sets()
    with pytest.raises(ValueError, match="test set overlaps"):
        official_split(y, trn, val, val, np.concatenate([tst, trn[:1]]), seed=0)
    with pytest.raises(ValueError, match="overlap the labelled"):
        official_split(y, trn, np.concatenate([val, trn[:1]]), val, tst, seed=0)


def test_nested_draw_takes_prefixes_of_every_pool():
    """The one nested draw: the first l_c, u_c, n_val candidates of each class (None: all of them)."""
    from mvl.data.protocols import ClassPools, nested_draw

    pools = {0: ClassPools(np.array([5, 1, 7]), np.array([2, 9]), np.array([4, 0, 3])),
             1: ClassPools(np.array([8, 6]), np.array([10]), np.array([11]))}
    d = nested_draw(pools, 2, 1, None)
    np.testing.assert_array_equal(d.labelled, [5, 1, 8, 6])
    np.testing.assert_array_equal(d.unlabelled, [2, 10])
    np.testing.assert_array_equal(d.validation, [4, 0, 3, 11])
    np.testing.assert_array_equal(d.train, [5, 1, 8, 6, 2, 10])
    with pytest.raises(ValueError, match="class 1 has 1 unlabelled candidates; need 2"):
        nested_draw(pools, 1, 2, 0)


def test_split_kernels_draw_equals_the_direct_draw():
    from mvl.data.protocols import SplitKernels, kernel_draw

    y = np.repeat(np.arange(3), 12)
    split = stratified_split(y, 2, seed=3)
    rng = np.random.default_rng(0)
    Kp, Kt = rng.random((split.pool.size, split.pool.size, 2)), rng.random((split.test.size, split.pool.size, 2))
    src = SplitKernels(Kp, Kt, y, split, ("a", "b"))
    full = src.kernel_draw(0, 2, 3, n_val_per_class=1, u_max=4)
    ref = kernel_draw(Kp, Kt, y, split, 2, 3, 1, u_max=4)
    np.testing.assert_array_equal(full.K_tr, ref.K_tr)
    np.testing.assert_array_equal(full.K_va, ref.K_va)
    one = src.kernel_draw(0, 2, 3, n_val_per_class=1, u_max=4, views=["b"])
    np.testing.assert_array_equal(one.K_tr, ref.K_tr[..., 1:2])
    assert one.view_names == ("b",) and one.n_labelled == 6

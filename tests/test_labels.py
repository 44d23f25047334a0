"""Labels of the semi-supervised estimators (mvl.labels): the unlabelled marker, the class encoding, the targets of
Section 5.1 and the stratified hold-out of MVL-LS-optC."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.labels import encode_labels, encode_targets, stratified_holdout, unlabelled_mask


def test_minus_one_and_missing_values_mark_unlabelled_samples():
    assert unlabelled_mask(np.array([0, -1, 2])).tolist() == [False, True, False]
    assert unlabelled_mask(np.array(["a", None, float("nan"), -1], dtype=object)).tolist() == [False, True, True, True]
    assert unlabelled_mask(np.array(["a", None, -1], dtype=object), missing_only=True).tolist() == [False, True, False]


def test_classes_are_the_sorted_labels_of_the_labelled_samples():
    classes, y_enc, labelled = encode_labels(np.array([5, -1, 2, 5, -1]), 5)
    assert classes.tolist() == [2, 5] and y_enc.tolist() == [1, -1, 0, 1, -1] and labelled.tolist() == [0, 2, 3]
    with pytest.raises(ValueError, match="one class only"):
        encode_labels(np.array([1, -1, 1]), 3)


def test_targets_are_plus_one_at_the_class_and_minus_one_elsewhere():
    np.testing.assert_array_equal(encode_targets(np.array([0, 2]), 3), [[1, -1, -1], [-1, -1, 1]])


def test_the_hold_out_takes_a_fraction_of_every_class_and_leaves_one():
    codes = np.array([0] * 10 + [1] * 2)
    held = stratified_holdout(codes, 0.3, np.random.default_rng(0), np.array(["a", "b"]))
    assert np.sum(codes[held] == 0) == 3 and np.sum(codes[held] == 1) == 1
    with pytest.raises(ValueError, match="class 'b' has 1 labelled"):
        stratified_holdout(np.array([0, 0, 1]), 0.5, np.random.default_rng(0), np.array(["a", "b"]))

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


def test_minus_one_in_a_string_array_marks_unlabelled_samples():
    y = np.array(["ant", "bee", "cat", "ant"])
    y[1] = -1  # numpy stores the text '-1'
    assert unlabelled_mask(y).tolist() == [False, True, False, False]
    assert unlabelled_mask(y.astype("S")).tolist() == [False, True, False, False]
    assert unlabelled_mask(np.array(["a", "-1"], dtype=object)).tolist() == [False, True]
    assert not unlabelled_mask(y, missing_only=True).any()
    classes, y_enc, _ = encode_labels(y, 4)
    assert classes.tolist() == ["ant", "cat"] and y_enc.tolist() == [0, -1, 1, 0]
    # supervised: '-1' is a class like any other
    assert encode_labels(y, 4, unlabelled=False)[0].tolist() == ["-1", "ant", "cat"]


@pytest.mark.parametrize("marker,stored", [(None, "Non"), ("", ""), (float("nan"), "nan")])
def test_a_marker_a_string_array_cannot_hold_warns_and_names_the_fix(marker, stored):
    from mvl.exceptions import UnlabelledMarkerWarning

    y = np.array(["ant", "bee", "cat", "ant", "bee"])
    y[[1, 4]] = marker
    assert y[1] == stored
    with pytest.warns(UnlabelledMarkerWarning, match=rf"2 sample\(s\) have the label '{stored}'.*None.*object"):
        classes, _, _ = encode_labels(y, 5)
    assert stored in classes.tolist()  # read as a class, as the warning says


@pytest.mark.parametrize("width,stored", [(1, "N"), (2, "No"), (4, "None")])
def test_the_stored_none_is_cut_to_the_array_width(width, stored):
    from mvl.exceptions import UnlabelledMarkerWarning

    y = np.array(["a" * width, "b" * width, "a" * width])
    y[2] = None
    assert y[2] == stored
    with pytest.warns(UnlabelledMarkerWarning, match=f"'{stored}'"):
        encode_labels(y, 3)


def test_ordinary_labels_and_object_arrays_do_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encode_labels(np.array(["Yes", "No", "Yes"]), 3)  # 'No' in a '<U3' array is not a cut 'None'
        encode_labels(np.array([0, -1, 1, 2]), 4)
        encode_labels(np.array(["a", "Non", None], dtype=object), 3)  # object: 'Non' is a class


def test_pandas_missing_values_mark_unlabelled_samples():
    pd = pytest.importorskip("pandas")
    for y in (pd.Series(pd.Categorical(["a", "b", None, "a"])), pd.Series(["a", "b", None, "a"], dtype="string"),
              pd.Series(["a", "b", np.nan, "a"])):
        classes, y_enc, _ = encode_labels(y, 4)
        assert classes.tolist() == ["a", "b"] and y_enc.tolist() == [0, 1, -1, 0]

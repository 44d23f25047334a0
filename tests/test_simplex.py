"""Simplex coding (Section 3.3): the three defining properties for P = 2..20 and decoding by eq (15)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvl.simplex import simplex_coding, simplex_decode, simplex_gram


@pytest.mark.parametrize("P", range(2, 21))
def test_simplex_properties(P):
    S = simplex_coding(P)
    assert S.shape == (P - 1, P)
    gram = S.T @ S
    np.testing.assert_allclose(np.diag(gram), 1.0, atol=1e-13)  # (i) ||s_k|| = 1
    off = gram[~np.eye(P, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / (P - 1), atol=1e-13)  # (ii) <s_j, s_k> = -1/(P-1)
    np.testing.assert_allclose(S.sum(axis=1), 0.0, atol=1e-13)  # (iii) sum_k s_k = 0
    # S S^T = P/(P-1) I: the codes span R^(P-1) (used to map h back to C f)
    np.testing.assert_allclose(S @ S.T, P / (P - 1) * np.eye(P - 1), atol=1e-13)
    np.testing.assert_allclose(simplex_gram(P), gram, atol=1e-13)


def test_paper_example_P3():
    """s_1 = (1, 0), s_2 = (-1/2, sqrt(3)/2), s_3 = (-1/2, -sqrt(3)/2) (Section 3.3)."""
    expected = np.array([[1.0, -0.5, -0.5], [0.0, np.sqrt(3) / 2, -np.sqrt(3) / 2]])
    np.testing.assert_allclose(simplex_coding(3), expected, atol=1e-15)
    np.testing.assert_array_equal(simplex_coding(2), [[1.0, -1.0]])


@pytest.mark.parametrize("P", [2, 3, 7, 20])
def test_decode_codes_and_brute_force(P):
    S = simplex_coding(P)
    np.testing.assert_array_equal(simplex_decode(S.T), np.arange(P))  # each code decodes to itself
    rng = np.random.default_rng(P)
    B = rng.normal(size=(200, P - 1))
    brute = [max(range(P), key=lambda k, b=b: float(np.dot(b, S[:, k]))) for b in B]  # eq (15), one by one
    np.testing.assert_array_equal(simplex_decode(B, S), brute)
    assert simplex_decode(B[0]) == brute[0]


@settings(max_examples=60, deadline=None)
@given(P=st.integers(2, 20), k=st.integers(0, 19), seed=st.integers(0, 2**31 - 1),
       radius=st.floats(0.0, 0.99))
def test_decode_is_robust_within_half_the_code_distance(P, k, seed, radius):
    """<s_k + e, s_k - s_j> = P/(P-1) + <e, s_k - s_j> > 0 if ||e|| < sqrt(P/(2(P-1))) (||s_k - s_j||^2 = 2P/(P-1))."""
    k = k % P
    S = simplex_coding(P)
    e = np.random.default_rng(seed).normal(size=P - 1)
    e *= radius * np.sqrt(P / (2.0 * (P - 1))) / max(np.linalg.norm(e), 1e-300)
    assert simplex_decode(S[:, k] + e, S) == k


@pytest.mark.parametrize("bad", [1, 0, -3, 2.0, "3", None, True])
def test_bad_number_of_classes(bad):
    with pytest.raises(ValueError, match="P"):
        simplex_coding(bad)


def test_decode_shape_mismatch():
    with pytest.raises(ValueError, match="do not match"):
        simplex_decode(np.zeros((4, 3)), simplex_coding(3))
    with pytest.raises(ValueError, match="shape"):
        simplex_decode(np.zeros((2, 2, 2)))

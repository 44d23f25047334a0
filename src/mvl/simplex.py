"""Simplex coding of P classes (Section 3.3, eq 15; Mroueh et al., 2012).

A simplex coding is a map s: {1, ..., P} -> R^(P-1) with

    (i) ||s_k|| = 1,   (ii) <s_j, s_k> = -1/(P-1) for j != k,   (iii) sum_k s_k = 0,

i.e. P maximally and equally separated unit vectors. The code matrix
S = [s_1, ..., s_P] has shape (P-1, P); S^T S = P/(P-1) I - 1/(P-1) 1 1^T, the
matrix Q_S of eq (195). A vector b in R^(P-1) is decoded to the class
argmax_k <b, s_k> (eq 15).
"""

from __future__ import annotations

import numpy as np

__all__ = ["simplex_coding", "simplex_decode", "simplex_gram"]


def _check_P(P):
    if isinstance(P, (bool, np.bool_)) or not isinstance(P, (int, np.integer)):
        raise ValueError(f"the number of classes P must be an integer >= 2, got {P!r}")
    if P < 2:
        raise ValueError(f"a simplex coding needs P >= 2 classes, got P = {P}")
    return int(P)


def simplex_coding(P):
    """The simplex code matrix S = [s_1, ..., s_P] of shape (P-1, P), built recursively.

    S_2 = [1, -1]; for P > 2,

        S_P = [[1, -1/(P-1) 1^T_{P-1}], [0, sqrt(1 - 1/(P-1)^2) S_{P-1}]],

    so s_1 = e_1 and the other P-1 codes are a scaled S_{P-1} shifted by
    -1/(P-1) along e_1 (Mroueh et al., 2012). For P = 3 this is the paper's
    example s_1 = (1, 0), s_2 = (-1/2, sqrt(3)/2), s_3 = (-1/2, -sqrt(3)/2).
    """
    P = _check_P(P)
    S = np.array([[1.0, -1.0]])
    for q in range(3, P + 1):
        top = np.concatenate([[1.0], np.full(q - 1, -1.0 / (q - 1))])
        bottom = np.hstack([np.zeros((q - 2, 1)), np.sqrt(1.0 - 1.0 / (q - 1) ** 2) * S])
        S = np.vstack([top, bottom])
    return S


def simplex_gram(P):
    """Q_S = S^T S (eq 195) in closed form: P/(P-1) on the diagonal, -1/(P-1) elsewhere."""
    P = _check_P(P)
    return np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1.0 + 1.0 / (P - 1))


def simplex_decode(B, S=None):
    """Class indices argmax_k <b, s_k> (eq 15) for the rows b of ``B``.

    ``B`` has shape (t, P-1) (or (P-1,) for one vector); ``S`` is the code
    matrix (P-1, P), by default ``simplex_coding(B.shape[-1] + 1)``. Returns
    integer indices in 0..P-1 (shape (t,), or a scalar for one vector).
    """
    B = np.asarray(B, dtype=np.float64)
    if B.ndim not in (1, 2):
        raise ValueError(f"B must have shape (t, P-1) or (P-1,), got {B.shape}")
    if S is None:
        S = simplex_coding(B.shape[-1] + 1)
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != B.shape[-1]:
        raise ValueError(f"codes S of shape {S.shape} do not match vectors of length {B.shape[-1]}")
    return np.argmax(B @ S, axis=-1)

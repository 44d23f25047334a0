"""mvl.parallel (GIL-free LAPACK/BLAS through scipy's cython_lapack pointers, the thread pool) against numpy/scipy."""

import os
import threading

import numpy as np
import pytest
from scipy import linalg

from mvl import parallel as blocks



@pytest.fixture(params=["ctypes", "f2py"])
def backend(request, monkeypatch):
    """Run a test through the ctypes pointers and through the f2py fallback."""
    if request.param == "ctypes":
        assert blocks.available(), "scipy.linalg.cython_lapack pointers could not be loaded"
    else:
        monkeypatch.setitem(blocks._state, "funcs", {})
    return request.param


def _spd(n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_on_strided_views(backend, trans_a, trans_b):
    """c <- alpha op(a) op(b) + beta c on Fortran-strided views (leading dimension > rows), in place."""
    rng = np.random.default_rng(1)
    m, k, n = 5, 7, 4
    A, B = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    # x[:, i:j].T of a wider C-ordered array is Fortran-strided with leading dimension = its width
    a_src = A.T if trans_a else A  # the array passed, before taking the strided view
    big_a = np.zeros((a_src.shape[1], 15))
    big_a[:, 2:2 + a_src.shape[0]] = a_src.T
    a = big_a[:, 2:2 + a_src.shape[0]].T
    b_src = B.T if trans_b else B
    big_b = np.zeros((b_src.shape[1], 9))
    big_b[:, 1:1 + b_src.shape[0]] = b_src.T
    b = big_b[:, 1:1 + b_src.shape[0]].T
    out_big = np.full((n, 20), 7.0)
    c = out_big[:, 3:3 + m].T  # (m, n), leading dimension 20
    assert a.strides[1] == 8 * 15 and c.strides[1] == 8 * 20
    before = out_big.copy()
    blocks.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b, alpha=0.5, beta=2.0)
    np.testing.assert_allclose(c, 0.5 * A @ B + 14.0, rtol=1e-13, atol=1e-13)
    untouched = np.ones(out_big.shape, dtype=bool)
    untouched[:, 3:3 + m] = False
    np.testing.assert_array_equal(out_big[untouched], before[untouched])


def test_gemm_rejects_mismatched_shapes_and_c_ordered_output():
    a, b = np.asfortranarray(np.ones((3, 4))), np.asfortranarray(np.ones((5, 2)))
    with pytest.raises(ValueError, match="gemm shapes"):
        blocks.gemm(a, b, np.zeros((3, 2), order="F"))
    with pytest.raises(ValueError, match="Fortran-strided"):
        blocks.gemm(a, np.asfortranarray(np.ones((4, 2))), np.zeros((3, 2)))  # C-ordered output
    # C-ordered inputs are copied, not rejected
    c = np.zeros((3, 2), order="F")
    blocks.gemm(np.ones((3, 4)), np.ones((4, 2)), c)
    np.testing.assert_array_equal(c, 4.0)


def test_cholesky_solve_matches_scipy(backend):
    M = _spd(40)
    rng = np.random.default_rng(2)
    Y = rng.standard_normal((40, 5))
    a, x = np.asfortranarray(M), np.asfortranarray(Y)
    assert blocks.cholesky_solve(a, x) == 0
    np.testing.assert_allclose(x, linalg.solve(M, Y, assume_a="pos"), rtol=1e-11)
    np.testing.assert_allclose(np.triu(a), linalg.cholesky(M), rtol=1e-12, atol=1e-12)


def test_cholesky_solve_reports_indefinite_and_leaves_rhs(backend):
    M = _spd(10)
    M[4, 4] = -1e3
    Y = np.asfortranarray(np.ones((10, 2)))
    assert blocks.cholesky_solve(np.asfortranarray(M), Y) > 0
    np.testing.assert_array_equal(Y, 1.0)


def test_calls_release_the_gil_and_run_concurrently():
    """Many threads factor their own matrices at once; every result is right (thread safety)."""
    assert blocks.available(), "scipy.linalg.cython_lapack pointers could not be loaded"
    mats = [_spd(120, seed=s) for s in range(12)]
    rhs = np.random.default_rng(3).standard_normal((120, 3))
    outs = [None] * len(mats)

    def work(i):
        a, x = np.asfortranarray(mats[i]), np.asfortranarray(rhs)
        assert blocks.cholesky_solve(a, x) == 0
        outs[i] = x

    assert blocks.map_threads(work, range(len(mats)), 4) == [None] * len(mats)
    for M, x in zip(mats, outs, strict=True):
        np.testing.assert_allclose(M @ x, rhs, atol=1e-10)


def test_map_threads_keeps_order_and_propagates_errors():
    assert blocks.map_threads(lambda x: x * x, range(11), 3) == [x * x for x in range(11)]
    assert blocks.map_threads(lambda x: -x, [5], 4) == [-5]

    def boom(x):
        if x == 4:
            raise RuntimeError("item 4")
        return x

    with pytest.raises(RuntimeError, match="item 4"):
        blocks.map_threads(boom, range(8), 2)


def test_chunks_cover_the_range():
    for n in [0, 1, 5, 20]:
        for k in [1, 2, 3, 8]:
            ch = blocks.chunks(n, k)
            covered = [i for a, b in ch for i in range(a, b)]
            assert covered == list(range(n)) and len(ch) <= k
            if n >= k:
                sizes = [b - a for a, b in ch]
                assert max(sizes) - min(sizes) <= 1


def test_single_threaded_blas_restores_the_setting():
    from threadpoolctl import threadpool_info

    before = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
    with blocks.single_threaded_blas():
        assert all(d["num_threads"] == 1 for d in threadpool_info() if d["user_api"] == "blas")
    assert [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"] == before


def test_blas_threads_reads_the_live_setting_without_rescanning_libraries(monkeypatch):
    """blas_threads (called by every sparse product through default_threads) agrees with threadpoolctl's own
    report, follows a threadpool_limits block, and does not walk the loaded libraries again (threadpool_info)."""
    import threadpoolctl
    from threadpoolctl import threadpool_info, threadpool_limits

    counts = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
    expected = max(counts) if counts else 1
    blocks.blas_threads()  # the controller exists from here on

    def scan(*args, **kwargs):
        raise AssertionError("threadpool_info called again")

    monkeypatch.setattr(threadpoolctl, "threadpool_info", scan)
    assert blocks.blas_threads() == expected
    with threadpool_limits(limits=1, user_api="blas"):
        assert blocks.blas_threads() == 1
    assert blocks.blas_threads() == expected
    assert 1 <= blocks.default_threads() <= expected


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_pool_works_in_a_forked_child():
    """A child forked after the pool exists must not wait on the parent's (dead) threads."""
    blocks.map_threads(lambda x: x, range(4), 2)  # the parent's pool now exists
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        ok = b"0"
        try:
            t = threading.Timer(20, lambda: os._exit(3))
            t.start()
            ok = b"1" if blocks.map_threads(lambda x: x + 1, range(4), 2) == [1, 2, 3, 4] else b"0"
            t.cancel()
        finally:
            os.write(w, ok)
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.read(r, 1) == b"1" and os.WEXITSTATUS(status) == 0

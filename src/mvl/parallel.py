"""GIL-free BLAS/LAPACK calls and the thread pool that runs them on several cores.

**GIL-free LAPACK/BLAS**, for running many small factorisations on several cores.

scipy's f2py wrappers (``scipy.linalg.lapack``/``blas``) hold the GIL, so Python threads cannot overlap
them, and a multithreaded OpenBLAS gets little from a 680 x 680 Cholesky (its 2-thread dpotrs with 17
right-hand sides is slower than a 1-thread one). The functions here call the same routines of scipy's
own LAPACK (the pointers exported by ``scipy.linalg.cython_lapack`` / ``cython_blas``, as numba does)
through ctypes, which drops the GIL for the call: :func:`map_threads` then runs independent
factorisations on all cores, one BLAS thread each.

Operands are float64 arrays with Fortran strides (unit stride down the columns, any leading
dimension, e.g. ``x[:, i:j].T`` of a C-ordered ``x``); outputs are written in place, nothing is copied.
If the pointers cannot be obtained, ``available()`` is False and the same functions fall back to the
f2py wrappers (correct, but holding the GIL, so callers should then not use threads).

Used by :class:`mvl.solvers.optc.OptCSystem` and the tiled kernel products of :mod:`mvl.kernel_blocks`;
``benchmarks/bench_optc.py`` measures the effect.
"""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
from scipy.linalg import blas, lapack

_c_int_p = ctypes.POINTER(ctypes.c_int)
_c_dbl_p = ctypes.POINTER(ctypes.c_double)
_ptr = ctypes.c_void_p
_chr = ctypes.c_char_p

_SIGNATURES = {
    # name: argument types (all by reference, Fortran calling convention)
    "dpotrf": (_chr, _c_int_p, _ptr, _c_int_p, _c_int_p),
    "dpotrs": (_chr, _c_int_p, _c_int_p, _ptr, _c_int_p, _ptr, _c_int_p, _c_int_p),
    "dgemm": (_chr, _chr, _c_int_p, _c_int_p, _c_int_p, _c_dbl_p, _ptr, _c_int_p, _ptr, _c_int_p,
              _c_dbl_p, _ptr, _c_int_p),
}
_state = {"funcs": None, "controller": None, "lock": threading.Lock()}
_pools: dict[int, ThreadPoolExecutor] = {}


def _capsule_pointer(capsule):
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype, get_ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_ptr(capsule, get_name(capsule))


def _load():
    with _state["lock"]:
        if _state["funcs"] is None:
            funcs = {}
            try:
                from scipy.linalg import cython_blas, cython_lapack

                for name, args in _SIGNATURES.items():
                    mod = cython_blas if name == "dgemm" else cython_lapack
                    funcs[name] = ctypes.CFUNCTYPE(None, *args)(_capsule_pointer(mod.__pyx_capi__[name]))
            except Exception:  # noqa: BLE001 - any failure means: use the f2py path
                funcs = {}
            _state["funcs"] = funcs
    return _state["funcs"]


def available():
    """True if the GIL-free LAPACK calls can be used."""
    return bool(_load())


def _i(v):
    return ctypes.byref(ctypes.c_int(int(v)))


def _fortran_strided(x):
    s0, s1 = x.strides
    return x.dtype == np.float64 and x.ndim == 2 and not (
        x.shape[0] > 1 and s0 != 8 or x.shape[1] > 1 and (s1 % 8 or s1 < 8 * x.shape[0]))


def _ld(x, name):
    """Leading dimension of a Fortran-strided float64 2-D array (unit stride down the columns)."""
    if not _fortran_strided(x):
        raise ValueError(f"{name}: not a Fortran-strided 2-D float64 array ({x.dtype}, strides {x.strides}, "
                         f"shape {x.shape})")
    return max(1, x.shape[0], x.strides[1] // 8 if x.shape[1] > 1 else 1)


def _input(x):
    """An input operand as a Fortran-strided float64 array (copied only if it is not one)."""
    return x if _fortran_strided(x) else np.asfortranarray(x, dtype=np.float64)


def cholesky_solve(a, b):
    """Overwrite ``a`` (n x n, Fortran, symmetric positive definite; upper triangle read) by its Cholesky
    factor and ``b`` (n x k, Fortran-strided) by a^{-1} b (LAPACK dpotrf + dpotrs). Returns LAPACK's info
    (0 = success; > 0: not numerically positive definite, ``b`` untouched)."""
    n, k = a.shape[0], b.shape[1]
    lda, ldb = _ld(a, "a"), _ld(b, "b")
    f = _load()
    if not f:  # f2py fallback (holds the GIL)
        c, info = lapack.dpotrf(a, lower=0, clean=0, overwrite_a=1)
        if info == 0:
            if not np.shares_memory(c, a):
                a[...] = c
            x, info = lapack.dpotrs(c, b)
            if info == 0:
                b[...] = x
        return int(info)
    info = ctypes.c_int(0)
    f["dpotrf"](b"U", _i(n), a.ctypes.data, _i(lda), ctypes.byref(info))
    if info.value != 0:
        return info.value
    f["dpotrs"](b"U", _i(n), _i(k), a.ctypes.data, _i(lda), b.ctypes.data, _i(ldb), ctypes.byref(info))
    return info.value


def gemm(a, b, c, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
    """c <- alpha op(a) op(b) + beta c in place (BLAS dgemm) for Fortran-strided float64 arrays (unit
    stride down the columns, any leading dimension: e.g. ``x[:, i:j].T`` of a C-ordered ``x``)."""
    a, b = _input(a), _input(b)
    m, n = c.shape
    k = a.shape[0] if trans_a else a.shape[1]
    if (a.shape[1] if trans_a else a.shape[0]) != m or (b.shape[0] if trans_b else b.shape[1]) != n \
            or (b.shape[1] if trans_b else b.shape[0]) != k:
        raise ValueError(f"gemm shapes {a.shape}{'^T' if trans_a else ''} x {b.shape}{'^T' if trans_b else ''} "
                         f"-> {c.shape}")
    lda, ldb, ldc = _ld(a, "a"), _ld(b, "b"), _ld(c, "c")
    f = _load()
    if not f:  # f2py fallback (holds the GIL; copies strided operands)
        c[...] = blas.dgemm(alpha, a, b, beta=beta, c=c if beta else None, trans_a=int(trans_a),
                            trans_b=int(trans_b))
        return
    if m == 0 or n == 0:
        return
    f["dgemm"](b"T" if trans_a else b"N", b"T" if trans_b else b"N", _i(m), _i(n), _i(k),
               ctypes.byref(ctypes.c_double(alpha)), a.ctypes.data, _i(lda),
               b.ctypes.data, _i(ldb), ctypes.byref(ctypes.c_double(beta)), c.ctypes.data, _i(ldc))


def _controller():
    """The process's threadpoolctl controller, made once: finding the loaded libraries costs milliseconds (it walks
    the shared objects), reading a library's thread setting through it microseconds."""
    if _state["controller"] is None:
        from threadpoolctl import ThreadpoolController

        _state["controller"] = ThreadpoolController()
    return _state["controller"]


def blas_threads():
    """Threads the loaded BLAS libraries may use (the largest of their current settings, read live, so a
    ``threadpool_limits`` block counts; 1 if unknown)."""
    try:
        counts = [lib.num_threads or 1 for lib in _controller().lib_controllers if lib.user_api == "blas"]
        return max(counts) if counts else 1
    except Exception:  # noqa: BLE001
        return 1


@contextmanager
def single_threaded_blas():
    """Every BLAS library limited to one thread inside the block (threadpoolctl; re-entrant, ~10 us).

    Besides letting :func:`map_threads` own the cores, this keeps OpenBLAS's worker threads asleep: after
    a multithreaded call they busy-wait for a while, and would take a core from the next threaded step.
    """
    with _controller().limit(limits=1, user_api="blas"):
        yield


def _after_fork_in_child():
    """The threads of a pool do not survive fork(): a child starts with no pools and a fresh lock."""
    _state["lock"] = threading.Lock()
    _pools.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def chunks(n, k):
    """``k`` contiguous (start, stop) ranges covering range(n) as evenly as possible (empty ones dropped)."""
    edges = np.linspace(0, n, max(1, k) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


def map_threads(fn, items, n_threads):
    """``[fn(x) for x in items]`` on ``n_threads`` threads (in order), each with a 1-thread BLAS.

    Items are dealt round-robin to the threads, so a thread's items run in sequence; exceptions propagate.
    """
    items = list(items)
    n_threads = max(1, min(int(n_threads), len(items)))
    if n_threads == 1:
        return [fn(x) for x in items]
    with _state["lock"]:
        pool = _pools.get(n_threads)
        if pool is None:
            pool = _pools[n_threads] = ThreadPoolExecutor(n_threads, thread_name_prefix="mvl-lapack")
    out = [None] * len(items)

    def work(t):
        for i in range(t, len(items), n_threads):
            out[i] = fn(items[i])

    with single_threaded_blas():
        for fut in [pool.submit(work, t) for t in range(n_threads)]:
            fut.result()
    return out


def default_threads():
    """Threads for :func:`map_threads`: the BLAS thread setting, at most the CPUs available."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(blas_threads(), cpus))


# ---------------------------------------------------------------- per-view blocks of Theorem 10 (eq 67-68)



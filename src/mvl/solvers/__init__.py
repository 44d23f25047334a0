"""The MVL-LS solvers of Theorem 10 (exact and approximate)."""

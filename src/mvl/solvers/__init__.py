"""Linear-system solvers of the vector-valued framework (Theorem 10 and its variants)."""

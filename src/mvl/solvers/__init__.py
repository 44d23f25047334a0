"""The solvers, one per role: the optimisation problems of the estimators and the algorithms that solve them
(:mod:`mvl.solvers.svm_dual`: the dual of the multi-view SVMs and its box-QP solvers; :mod:`mvl.solvers.mvml`:
the alternating problem of MVML)."""

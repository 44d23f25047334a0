"""The scikit-learn estimators of the framework (MVL-LS, MVL-LS-optC, their cross-validation, the SVMs, MVML, the
perceptrons); their solvers are in :mod:`mvl.solvers`."""

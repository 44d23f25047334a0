"""The estimators, one module each: scikit-learn classifiers that validate their inputs, call a solver of
:mod:`mvl.solvers` and keep the fitted model. Import them from :mod:`mvl` (``from mvl import MVLSVM``)."""

"""Workflow glue: what the Snakemake rules call (experiment runners, report helpers).

Not part of the solver API (``import mvl`` does not import this package). The layering is
solvers (``mvl``) <- data (``mvl.data``) <- workflow (``mvl.workflow``): modules here may import the
solvers and the data layer, never the other way round. Implements no paper section itself: it runs the
experiments of Section 7 and compares them with the published tables.
"""

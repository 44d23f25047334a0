"""Workflow glue: what the Snakemake rules call, as a small core and one module group per study.

Not part of the solver API (``import mvl`` does not import this package). The layering is
solvers (``mvl``) <- data (``mvl.data``) <- workflow (``mvl.workflow``): modules here may import the
solvers and the data layer, never the other way round.

The core:

- :mod:`~mvl.workflow.settings`: the shared run settings, and the dispatch of each study's config section to
  the study that parses it (:mod:`~mvl.workflow.sections`: what those parsers share);
- :mod:`~mvl.workflow.io`: atomic output with SHA-256 sidecars, and the check of finished outputs;
- :mod:`~mvl.workflow.runtime`: a rule job's log, download options and report notebook execution;
- :mod:`~mvl.workflow.figures`: the report figures' convention (``*_figure`` functions return a Figure,
  :func:`~mvl.workflow.figures.save_figure` writes it);
- :mod:`~mvl.workflow.index`, :mod:`~mvl.workflow.regression`, :mod:`~mvl.workflow.snakemake_log`: the results
  index page, the results-regression check, Snakemake's job table;
- :mod:`~mvl.workflow.jobs`: the rule entry points of the main study and the shared rules.

The studies, each owning its config section, runs, tables and figures (and its rules' entry points):

- main (Section 7): :mod:`~mvl.workflow.main` (steps), :mod:`~mvl.workflow.methods` (registry),
  :mod:`~mvl.workflow.runner` and :mod:`~mvl.workflow.experiments` (runs), :mod:`~mvl.workflow.report` and
  :mod:`~mvl.workflow.compare` (tables, figures, published comparison);
- co-regularization: :mod:`~mvl.workflow.coreg_study` (section, steps, rules), :mod:`~mvl.workflow.coreg_runner`
  (runs), :mod:`~mvl.workflow.coreg_report` (tables);
- scale: :mod:`~mvl.workflow.scale_settings` (section), :mod:`~mvl.workflow.scale` (fits, summary, figure, rules);
- peers: :mod:`~mvl.workflow.peers_settings` (section), :mod:`~mvl.workflow.peers` (runs, tables, figure, rules);
- incomplete views: :mod:`~mvl.workflow.incomplete_settings` (section), :mod:`~mvl.workflow.incomplete` (runs,
  tables, figure, rules).

A study's section module is light (no numpy): the settings parse every section while the Snakefile is parsed.

Implements no paper section itself: it runs the experiments of Section 7 and compares them with the published
tables.
"""

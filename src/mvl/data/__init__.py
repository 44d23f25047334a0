"""The data layer: every data set of the paper (Section 7.2) and its evaluation protocol, one module per source.

- :mod:`mvl.data.embedded`: UCI Multiple Features, shipped in ``mfeat/`` (Section 7.2's mfeat experiments), and
  the downloaded multi-view MNIST;
- :mod:`mvl.data.ssl_benchmarks`: the semi-supervised benchmarks of the co-regularization comparison (Section 3.4);
- :mod:`mvl.data.paper`: Flowers-17, Caltech-101 and CUB-200-2011 loaders and their protocol draws;
- :mod:`mvl.data.download`: the registry of remote files, download, verification, local mirror, offline check;
- :mod:`mvl.data.protocols`: stratified and official splits, labelled/unlabelled draws;
- :mod:`mvl.data.published`: the paper's published numbers, transcribed in ``published/``.
- :mod:`mvl.data.missing`: missing-view patterns (at random, by blocks of samples, by class) written as NaN rows.

Modules here may import the solvers (``mvl``), never :mod:`mvl.workflow`. ``import mvl`` does not import this
package.
"""

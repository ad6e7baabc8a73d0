"""The engine: histogram gradient-boosted trees on per-era histograms.

Data flows one way::

    raw X -> bins -> per-era histograms -> split choice -> tree -> predictor
    binning   _histogram  _splitting (+ _scorer, _criteria)  grower  predictor

- ``binning.py``, ``_binning.pyx``: raw values to bins (``BinMapper``);
- ``_histogram.pyx``: per-era histograms of a node's rows;
- ``_criteria.pxd``: the split criteria as pure ``nogil`` functions of per-era
  sums (``_criteria.pyx`` exposes them to the tests);
- ``_splitting.pyx``: the split scan (``Splitter``, orders and candidates);
  ``_scan_eras.pyx``: the per-era scoring of its candidates; ``_scorer.pxd``:
  the one candidate scorer, in named steps; ``_partition.pyx``: the row
  partition of a node by its split;
- ``grower.py``: growth of one tree (best first, or depth first for the
  forests); ``_memory.py``: the histogram pool and the memory budget;
- ``predictor.py``, ``_predictor.pyx``: the flat tree and its prediction;
- ``engine.py``: the one set-up of builder, pool and splitter for every
  estimator;
- ``_common.pxd``, ``_simd.h``, ``_common.py``: the shared C types, the SIMD
  attribute and their NumPy dtypes; ``_openmp.pyx``: thread counts and
  chunked parallel calls; ``_loss_calls.py``: the boosting loop's loss calls
  (``_gradients.pyx``: the half squared error's gradient, on eraboost's
  threads).

Private: the estimators at the top of the package are its users. This
module imports nothing, so that importing one engine module loads only what
that module needs.
"""

"""Tests of ``eraboost.dask``: one model across a Dask cluster."""

"""Experiments: runs over grids of models, numbers of topics and seeds, scored by harmonium's own evaluation
code, with their tables and plots (:mod:`harmonium.experiments.compare`).

The layer above ``report``: an experiment builds estimators, scores them with ``evaluation`` and draws its
results with ``report``'s plots; the CLI's commands call it.
"""

"""Where computation runs: seeds and child streams, threads, Dask shards, and the Dask client (:func:`dask_client`)."""

from harmonium.parallel.cluster import dask_client

__all__ = ["dask_client"]

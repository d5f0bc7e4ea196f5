"""Where a distributed fit runs: :func:`dask_client`, a Dask client for a scheduler address or a local cluster.

The estimators take ``client=`` (``LDA.fit``, the harmoniums' ``fit``); this is
the one place that makes one from what a user names: the address of a running
scheduler (``tcp://host:8786``) or a number of local worker processes (a
``LocalCluster`` on 127.0.0.1, one thread each, no dashboard). Dask is an
optional extra (``pip install 'harmonium[dask]'``), imported only here and only
when a cluster is asked for.
"""

from __future__ import annotations

import contextlib

from harmonium.errors import InvalidParameterError

__all__ = ["DASK_HINT", "dask_client"]

DASK_HINT = "pip install 'harmonium[dask]'"


@contextlib.contextmanager
def dask_client(address: str | None = None, *, n_workers: int | None = None):
    """A ``distributed.Client`` for the duration of a ``with`` block, or None when no cluster is named.

    Parameters
    ----------
    address : str, optional
        Address of a running Dask scheduler, e.g. ``"tcp://scheduler:8786"``.
    n_workers : int, optional
        Start a ``LocalCluster`` of this many worker processes (one thread each,
        on 127.0.0.1, no dashboard), closed with the block.

    Yields
    ------
    distributed.Client or None
        None when neither ``address`` nor ``n_workers`` is given (the fit runs in this process).

    Raises
    ------
    InvalidParameterError
        Both given, or ``n_workers`` < 1.
    ImportError
        Dask is not installed (the message names the extra).

    Examples
    --------
    >>> from harmonium.parallel import dask_client
    >>> with dask_client(n_workers=2) as client:  # doctest: +SKIP
    ...     lda = LDA(20, inference="parallel_gibbs").fit("corpus-dir", client=client)
    """
    if address is not None and n_workers is not None:
        raise InvalidParameterError("dask_client takes address= (a running scheduler) or n_workers= (a local "
                                    f"cluster), not both; got address={address!r} and n_workers={n_workers!r}.")
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1):
        raise InvalidParameterError(f"The 'n_workers' parameter of dask_client must be an int >= 1. Got {n_workers!r}.")
    if address is None and n_workers is None:
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError(f"a Dask cluster needs the 'distributed' package: {DASK_HINT}.") from None
    with contextlib.ExitStack() as stack:
        if n_workers is not None:
            cluster = stack.enter_context(LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                                       host="127.0.0.1", dashboard_address=None))
            client = stack.enter_context(Client(cluster))
        else:
            client = stack.enter_context(Client(address))
        yield client

"""Cutting a stream of itemsets into transactions, the IBM Quest way (numba).

Agrawal & Srikant, "Fast Algorithms for Mining Association Rules", VLDB 1994, §2.4.3: a transaction
is given a target size and then a series of (corrupted) itemsets; "if the large itemset on hand does
not fit in the transaction, the itemset is put in the transaction anyway in half the cases, and the
itemset is moved to the next transaction the rest of the cases". Used by
:func:`harmonium.datasets.make_market_basket`; the plain-Python twin is in
tests/kernels/test_market_basket_parity.py.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def fill_transactions(sizes, targets, coins, put_anyway, bounds):
    """Assign consecutive itemsets of a stream to consecutive transactions.

    Parameters
    ----------
    sizes : int64 array (n_itemsets,)
        Size (>= 1) of each itemset of the stream, in stream order.
    targets : int64 array (n_transactions,)
        Target size (>= 1) of each transaction.
    coins : float64 array (n_transactions,)
        One uniform per transaction: a transaction meets at most one itemset that does not fit, and
        ``coins[t] < put_anyway`` puts that itemset in anyway (the transaction then closes over its
        target); otherwise the itemset waits for the next transaction.
    put_anyway : float
        Probability of putting a non-fitting itemset in anyway (0.5 in the paper).
    bounds : int64 array (n_transactions + 1,), written in place
        Transaction ``t`` holds itemsets ``bounds[t]:bounds[t + 1]``.

    Returns
    -------
    int
        The number of transactions filled: ``targets.size``, or fewer when the stream ran out (the
        caller lengthens the stream and calls again).

    Notes
    -----
    An empty transaction always takes the itemset on hand, even one larger than its target, so that
    no transaction is empty. A transaction closes when it is exactly full or at the itemset that
    does not fit.
    """
    n = sizes.size
    j = 0
    bounds[0] = 0
    for t in range(targets.size):
        if j >= n:
            return t
        room = targets[t] - sizes[j]
        j += 1
        while room > 0:
            if j >= n:
                return t
            z = sizes[j]
            if z <= room:
                room -= z
                j += 1
            else:
                if coins[t] < put_anyway:
                    j += 1
                break
        bounds[t + 1] = j
    return targets.size

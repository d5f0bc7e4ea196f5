"""Synthetic market-basket data: the IBM Almaden (Quest) generator of customer transactions.

Implements the generator described in prose by

- R. Agrawal and R. Srikant, "Fast Algorithms for Mining Association Rules", VLDB 1994, §2.4.3
  ("Synthetic Data"): the table of *potentially large itemsets* (here: basket patterns) and the way
  itemsets are put into transactions;
- R. Agrawal and R. Srikant, "Mining Sequential Patterns", ICDE 1995, §4.1: customers, each with a
  Poisson number of transactions and a Poisson mean transaction size, and the table of *potentially
  large sequences* of itemsets (here: customer patterns) from which the customer-sequences are made.

Seed 002 §7 (the BiHDP market-basket experiment) used the IBM program with 1M transactions, 10K
customers, 1K items, 4 items per transaction, "4 item groups per customer group", 50 market basket
patterns and 50 customer patterns, other parameters at their defaults; those are the defaults of
:func:`make_market_basket`. The code is written from the papers' text, not from the IBM program.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import sparse

from harmonium._kernels.market_basket import fill_transactions
from harmonium._validation import RANDOM_STATE, Interval, validate_params
from harmonium.errors import InvalidParameterError
from harmonium.parallel.seeds import check_random_state

__all__ = ["make_market_basket", "MarketBasket", "QuestPatterns"]

#: Probability that an itemset which does not fit is put into the transaction anyway (VLDB 1994 §2.4.3).
PUT_ANYWAY = 0.5


class QuestPatterns(NamedTuple):
    """The generator's pattern tables (the hidden structure behind the transactions).

    Attributes
    ----------
    basket_items : tuple of int64 arrays
        Items of each basket pattern (potentially large itemset), sorted; ``n_basket_patterns``.
    basket_weights : float64 array (n_basket_patterns,)
        Probability of each basket pattern when customer patterns are made (sums to 1).
    basket_corruption : float64 array (n_basket_patterns,)
        Corruption level c of each basket pattern, in [0, 1].
    basket_n_from_previous : int64 array (n_basket_patterns,)
        How many items each basket pattern took from the one before it (0 for the first).
    customer_baskets : tuple of int64 arrays
        Basket patterns of each customer pattern (potentially large sequence), in sequence order.
    customer_weights, customer_corruption, customer_n_from_previous : arrays (n_customer_patterns,)
        The same for customer patterns (the elements taken from the previous one are basket patterns).
    """

    basket_items: tuple
    basket_weights: np.ndarray
    basket_corruption: np.ndarray
    basket_n_from_previous: np.ndarray
    customer_baskets: tuple
    customer_weights: np.ndarray
    customer_corruption: np.ndarray
    customer_n_from_previous: np.ndarray


class MarketBasket(NamedTuple):
    """Transactions made by :func:`make_market_basket` and their ground truth.

    Attributes
    ----------
    customer : int64 array (n_transactions,)
        Customer of each transaction; non-decreasing (a customer's transactions in time order).
    indptr : int64 array (n_transactions + 1,)
        Transaction ``t`` bought ``items[indptr[t]:indptr[t + 1]]`` (never empty).
    items : int64 array (n_purchases,)
        Item ids in [0, n_items). A transaction can hold an item twice when two basket patterns put
        into it share the item; ``np.unique`` of a slice gives the transaction as a set.
    counts : scipy.sparse.csr_matrix (n_customers, n_items), int64
        Purchase counts: how often each customer bought each item.
    item_groups : tuple of int64 arrays
        Ground-truth item groups: the items of each basket pattern (they overlap, see Notes).
    customer_groups : tuple of int64 arrays
        Ground-truth customer groups: the basket patterns (item groups) of each customer pattern.
    item_group : int64 array (n_items,)
        The partition of items by dominant basket pattern: the one that put the item into the most
        purchases (ties to the lower id); -1 for an item never bought.
    customer_group : int64 array (n_customers,)
        Each customer's dominant customer pattern (the one behind most of its purchases); -1 for a
        customer without transactions.
    item_group_share, customer_group_share : float64 arrays
        Fraction of the item's (customer's) purchases that came from its dominant pattern (0 if none).
    purchase_basket_pattern, purchase_customer_pattern : int64 arrays (n_purchases,)
        The basket pattern and the customer pattern every purchase came from (the per-entry truth
        behind a mixed-membership model such as the BiHDP).
    target_sizes : int64 array (n_transactions,)
        The drawn size of each transaction before itemsets were put in (the realised size differs
        when an itemset did not fit, see :func:`make_market_basket`).
    patterns : QuestPatterns
        Weights, corruption levels and correlations of the pattern tables.
    seed : int or None
        The seed that reproduces the data (None when a Generator was passed).
    """

    customer: np.ndarray
    indptr: np.ndarray
    items: np.ndarray
    counts: sparse.csr_matrix
    item_groups: tuple
    customer_groups: tuple
    item_group: np.ndarray
    customer_group: np.ndarray
    item_group_share: np.ndarray
    customer_group_share: np.ndarray
    purchase_basket_pattern: np.ndarray
    purchase_customer_pattern: np.ndarray
    target_sizes: np.ndarray
    patterns: QuestPatterns
    seed: int | None


# ---------------------------------------------------------------------------------------------
# The papers' random ingredients, one function each (the tests replace them by broken twins).
# ---------------------------------------------------------------------------------------------


def _sizes(rng, mean, n):
    """Sizes >= 1 "picked from a Poisson distribution with mean" ``mean``: 1 + Poisson(mean - 1).

    A plain Poisson would give empty itemsets, sequences and transactions, which the procedure
    cannot use; shifting by one keeps the papers' mean (the variance is mean - 1, not mean).
    """
    return 1 + rng.poisson(mean - 1.0, n)


def _n_from_previous(rng, lengths, correlation):
    """Elements of pattern k taken from pattern k - 1: round(f_k * length_k), f_k ~ Exp(mean=correlation).

    "Some fraction of items in subsequent itemsets are chosen from the previous itemset generated. We
    use an exponentially distributed random variable with mean equal to the correlation level to
    decide this fraction" (VLDB 1994). The count is capped by both patterns' lengths; entry 0 is 0.
    """
    n = np.zeros(lengths.size, dtype=np.int64)
    if lengths.size > 1:
        f = rng.exponential(1.0, lengths.size - 1) * correlation
        m = np.floor(np.minimum(f, 1.0) * lengths[1:] + 0.5).astype(np.int64)
        n[1:] = np.minimum(m, np.minimum(lengths[1:], lengths[:-1]))
    return n


def _corruption_levels(rng, mean, variance, n):
    """Corruption levels from a normal with the given mean and variance, clipped to [0, 1]."""
    return np.clip(rng.normal(mean, np.sqrt(variance), n), 0.0, 1.0)


def _n_dropped(rng, corruption, lengths):
    """How many elements corruption drops: "we keep dropping an item from the itemset as long as a
    uniformly distributed random number between 0 and 1 is less than c" (VLDB 1994).

    The number of uniforms below c before the first one above is G with P(G >= d) = c**d; at most
    ``lengths`` elements can go. Drawn by inversion, one uniform per pattern instance.
    """
    v = 1.0 - rng.random(lengths.size)  # in (0, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.floor(np.log(v) / np.log(corruption))
    g = np.where(corruption <= 0.0, 0.0, np.where(corruption >= 1.0, lengths, g))
    return np.minimum(g, lengths).astype(np.int64)


def _offsets(lengths):
    """0, 1, ..., lengths[i] - 1 for every i, concatenated."""
    starts = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)


def _keep_mask(rng, lengths, n_keep):
    """Flat mask over groups of ``lengths`` elements keeping a uniform random ``n_keep[i]`` of group i."""
    mask = np.repeat(n_keep >= lengths, lengths)
    part = np.flatnonzero((n_keep > 0) & (n_keep < lengths))
    if part.size:
        pl = lengths[part]
        starts = np.cumsum(lengths) - lengths
        pos = np.repeat(starts[part], pl) + _offsets(pl)
        group = np.repeat(np.arange(part.size), pl)
        order = np.argsort(group + rng.random(group.size))
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = _offsets(pl)
        mask[pos] = rank < np.repeat(n_keep[part], pl)
    return mask


def _distinct_items(rng, n_items, k, exclude):
    """``k`` distinct items of [0, n_items), none in ``exclude`` (which leaves room for them)."""
    taken = set(int(x) for x in exclude)
    out = []
    while len(out) < k:
        x = int(rng.integers(n_items))
        if x not in taken:
            taken.add(x)
            out.append(x)
    return np.asarray(out, dtype=np.int64)


def _basket_patterns(rng, n_patterns, n_items, mean_size, correlation, corruption_mean, variance):
    """The table of potentially large itemsets (VLDB 1994 §2.4.3)."""
    sizes = np.minimum(_sizes(rng, mean_size, n_patterns), n_items)
    n_prev = _n_from_previous(rng, sizes, correlation)
    weights = rng.exponential(1.0, n_patterns)
    weights /= weights.sum()
    corruption = _corruption_levels(rng, corruption_mean, variance, n_patterns)
    items, prev = [], np.empty(0, dtype=np.int64)
    for k in range(n_patterns):
        reused = rng.choice(prev, n_prev[k], replace=False) if n_prev[k] else prev[:0]
        # fresh items avoid the previous itemset when it leaves room, so the overlap is exactly n_prev
        avoid = prev if n_items - prev.size >= sizes[k] - n_prev[k] else reused
        cur = np.concatenate([reused, _distinct_items(rng, n_items, sizes[k] - n_prev[k], avoid)])
        items.append(np.sort(cur))
        prev = cur
    return tuple(items), weights, corruption, n_prev


def _customer_patterns(rng, n_patterns, basket_weights, mean_length, correlation, corruption_mean, variance):
    """The table of potentially large sequences of basket patterns (ICDE 1995 §4.1)."""
    lengths = _sizes(rng, mean_length, n_patterns)
    n_prev = _n_from_previous(rng, lengths, correlation)
    weights = rng.exponential(1.0, n_patterns)
    weights /= weights.sum()
    corruption = _corruption_levels(rng, corruption_mean, variance, n_patterns)
    fresh = rng.choice(basket_weights.size, int((lengths - n_prev).sum()), p=basket_weights)
    seqs, prev, at = [], np.empty(0, dtype=np.int64), 0
    for k in range(n_patterns):
        reused = prev[np.sort(rng.choice(prev.size, n_prev[k], replace=False))] if n_prev[k] else prev[:0]
        nf = lengths[k] - n_prev[k]
        cur = np.concatenate([reused, fresh[at:at + nf]]).astype(np.int64)
        at += nf
        seqs.append(cur)
        prev = cur
    return tuple(seqs), weights, corruption, n_prev


class _Stream(NamedTuple):
    """Corrupted customer-pattern instances, flattened to basket-pattern instances and purchases."""

    customer_pattern: np.ndarray  # (n_seq,) pattern of each customer-pattern instance drawn
    n_baskets_kept: np.ndarray  # (n_seq,) its basket patterns left after corruption
    basket_pattern: np.ndarray  # (n_inst,) basket pattern of each kept element, in stream order
    basket_customer: np.ndarray  # (n_inst,) the customer pattern it belongs to
    basket_kept: np.ndarray  # (n_inst,) its items left after corruption (may be 0)
    items: np.ndarray  # (basket_kept.sum(),) the items, instance after instance


def _flat(tables):
    lengths = np.array([a.size for a in tables], dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    flat = np.concatenate(tables).astype(np.int64) if lengths.sum() else np.empty(0, np.int64)
    return lengths, indptr, flat


def _stream(rng, pat: QuestPatterns, n_seq: int) -> _Stream:
    """``n_seq`` customer patterns drawn by weight ("tossing an N_S-sided weighted coin", ICDE 1995), each
    corrupted by dropping basket patterns, each of those corrupted by dropping items."""
    s_len, s_ptr, s_flat = _flat(pat.customer_baskets)
    b_len, b_ptr, b_flat = _flat(pat.basket_items)
    sp = rng.choice(s_len.size, n_seq, p=pat.customer_weights)
    length = s_len[sp]
    n_keep = length - _n_dropped(rng, pat.customer_corruption[sp], length)
    keep = _keep_mask(rng, length, n_keep)
    bp = s_flat[np.repeat(s_ptr[sp], length) + _offsets(length)][keep]
    owner = np.repeat(sp, length)[keep]
    size = b_len[bp]
    kept = size - _n_dropped(rng, pat.basket_corruption[bp], size)
    items = b_flat[np.repeat(b_ptr[bp], size) + _offsets(size)][_keep_mask(rng, size, kept)]
    return _Stream(sp, n_keep, bp, owner, kept, items)


def _expected_items_per_customer_pattern(pat: QuestPatterns) -> float:
    """E[items left of one customer pattern drawn by weight], from E[min(G, n)] = sum_{d=1..n} c**d."""

    def kept(c, n):
        c = np.minimum(c, 1.0)
        drop = np.where(c < 1.0, (c - c ** (n + 1)) / np.where(c < 1.0, 1.0 - c, 1.0), n)
        return n - drop

    b_len = np.array([a.size for a in pat.basket_items], dtype=float)
    e_basket = kept(pat.basket_corruption, b_len)
    total = 0.0
    for s, seq in enumerate(pat.customer_baskets):
        m = float(seq.size)
        frac = kept(pat.customer_corruption[s], m) / m
        total += pat.customer_weights[s] * frac * e_basket[seq].sum()
    return float(total)


def _dominant(rows, cols, n_rows, n_cols):
    m = sparse.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(n_rows, n_cols))
    m.sum_duplicates()
    total = np.asarray(m.sum(axis=1)).ravel()
    best = np.asarray(m.argmax(axis=1)).ravel().astype(np.int64)
    top = np.asarray(m.max(axis=1).toarray()).ravel()
    empty = total == 0
    best[empty] = -1
    share = np.where(empty, 0.0, top / np.maximum(total, 1))
    return best, share


def make_market_basket(
    *,
    n_transactions: int = 1_000_000,
    n_customers: int = 10_000,
    n_items: int = 1_000,
    mean_transaction_size: float = 4.0,
    n_basket_patterns: int = 50,
    n_customer_patterns: int = 50,
    mean_basket_pattern_size: float = 1.25,
    mean_customer_pattern_length: float = 4.0,
    basket_correlation: float = 0.5,
    customer_correlation: float = 0.25,
    basket_corruption_mean: float = 0.5,
    customer_corruption_mean: float = 0.75,
    corruption_variance: float = 0.1,
    random_state=None,
) -> MarketBasket:
    """Customer transactions from the IBM Quest synthetic generator (Agrawal & Srikant 1994, 1995).

    Parameters
    ----------
    n_transactions : int >= 1
        Number of transactions (seed 002: 1M). Spread over the customers as a multinomial with equal
        probabilities: each customer's count is Poisson(``|C|``), ``|C|`` = n_transactions / n_customers
        (ICDE 1995), conditioned on the total.
    n_customers : int >= 1
        ``|D|`` of ICDE 1995 (seed 002: 10K).
    n_items : int >= 1
        N, the number of items (seed 002: 1K). Only items of some basket pattern are ever bought.
    mean_transaction_size : float >= 1
        ``|T|`` (Quest ``tlen``; seed 002: 4). Each customer's mean transaction size is drawn as a size
        with mean ``|T|``, and each of its transactions' target size as a size with the customer's mean.
    n_basket_patterns : int >= 1
        N_I (``|L|`` in VLDB 1994, Quest ``lit.npats``): the "market basket patterns" (seed 002: 50).
    n_customer_patterns : int >= 1
        N_S (Quest ``seq.npats``): the "customer patterns" (seed 002: 50).
    mean_basket_pattern_size : float in [1, n_items]
        ``|I|`` (Quest ``lit.patlen``): mean number of items in a basket pattern. Default 1.25, the
        value of ICDE 1995's experiments and the Quest sequence generator's default.
    mean_customer_pattern_length : float >= 1
        ``|S|`` (Quest ``seq.patlen``): mean number of basket patterns in a customer pattern; seed 002's
        "4 item groups per customer group".
    basket_correlation, customer_correlation : float >= 0
        Correlation levels: the mean of the exponential fraction of a pattern's elements taken from
        the previous pattern. Defaults 0.5 (VLDB 1994) and 0.25 (ICDE 1995); 0 makes patterns
        independent.
    basket_corruption_mean, customer_corruption_mean : float in [0, 1)
        Means of the normal corruption levels (clipped to [0, 1]). Defaults 0.5 (VLDB 1994) and 0.75
        (ICDE 1995).
    corruption_variance : float >= 0
        Variance of both corruption levels' normals (0.1 in both papers).
    random_state : int, numpy Generator or None
        Converted once to a Generator; every draw comes from it.

    Returns
    -------
    MarketBasket
        Transactions (customer, items per transaction, customer x item counts) and the ground truth.

    Notes
    -----
    The procedure, from the papers' text:

    1. *Basket patterns* (VLDB 1994 §2.4.3). Pattern sizes are Poisson with mean ``|I|``; the first
       pattern's items are uniform; pattern k takes round(f_k * size_k) items, f_k ~ Exp(mean =
       correlation), from pattern k - 1 and draws the rest uniformly among the items not in k - 1;
       weights are Exp(1), normalised to sum to 1; each pattern gets a corruption level
       c ~ Normal(mean, variance) clipped to [0, 1].
    2. *Customer patterns* (ICDE 1995 §4.1): sequences of basket patterns, their lengths Poisson with
       mean ``|S|``, the elements of the first drawn by the basket weights, later ones taking a fraction
       (exponential, mean = correlation) of the previous sequence's elements (kept in order, placed
       first) and drawing the rest by the basket weights; Exp(1) weights and corruption levels as
       above.
    3. *Customers* (ICDE 1995): a Poisson number of transactions (see ``n_transactions``) and a
       Poisson mean transaction size; each transaction's target size is Poisson with the customer's
       mean.
    4. *Filling*: customer patterns are drawn by weight, one after the other; each is corrupted by
       dropping basket patterns while a uniform is below its corruption level, and each basket
       pattern left by dropping items the same way (VLDB 1994: "we keep dropping an item ... as long
       as a uniformly distributed random number between 0 and 1 is less than c"). The resulting
       stream of itemsets goes into the transactions in order (customer after customer): an itemset
       that fits goes in; one that does not is "put in the transaction anyway in half the cases, and
       ... moved to the next transaction the rest of the cases" (VLDB 1994), and the transaction is
       closed. An itemset moved on from a customer's last transaction opens the next customer's
       first, with the rest of its customer pattern (ICDE 1995's "moved to the next
       customer-sequence").

    Our reading where the text is silent: every size the papers call Poisson (pattern sizes and
    lengths, transaction sizes) must be >= 1, so it is drawn as 1 + Poisson(mean - 1), which keeps
    the stated mean; the fraction f is capped at 1 and the count taken from the previous pattern at
    the previous pattern's length; an empty transaction always takes the itemset on hand; dropped
    elements are a uniform random subset; a basket pattern left empty by corruption adds nothing.
    The IBM program's defaults (correlation 0.25 and "conf" 0.75 at both levels, repetition level 0)
    differ slightly from the papers' text, which this function follows; every level is an argument.

    *Ground truth* (our decision). An **item group** is a basket pattern (potentially large itemset):
    the items bought together. A **customer group** is a customer pattern (potentially large
    sequence): the item groups (on average ``mean_customer_pattern_length``, seed 002's "4 item groups
    per customer group") one kind of customer buys in turn. In the generator both are properties of
    each *purchase* (``purchase_basket_pattern``, ``purchase_customer_pattern``), not of an item or
    a customer: consecutive basket patterns share items (correlation), and every customer's sequence
    is a series of customer patterns drawn independently by weight, so with many transactions per
    customer every customer sees most patterns. For scoring a clustering, ``item_group`` and
    ``customer_group`` give the dominant pattern of each item and customer, with the share it
    explains (``item_group_share``, ``customer_group_share``); a low customer share says the
    customers are nearly exchangeable and the customer partition is weak truth.

    At seed 002's parameters (the defaults) only about 30 of the 1,000 items are ever bought (50
    basket patterns of mean size 1.25) and a customer's dominant pattern explains a median 14% of its
    purchases; see docs/guides/hdp-isbn.md. Generating the 1M transactions took 2-9 s (3 seeds) on a
    shared 2-core machine.

    References
    ----------
    R. Agrawal and R. Srikant. Fast algorithms for mining association rules. VLDB 1994, §2.4.3.
    R. Agrawal and R. Srikant. Mining sequential patterns. ICDE 1995, §4.1.

    Examples
    --------
    >>> data = make_market_basket(n_transactions=2_000, n_customers=100, n_items=200, random_state=0)
    >>> data.counts.shape
    (100, 200)
    >>> int(data.indptr[-1]) == data.items.size == int(data.counts.sum())
    True
    """
    owner = "make_market_basket"
    params = dict(
        n_transactions=n_transactions, n_customers=n_customers, n_items=n_items,
        mean_transaction_size=mean_transaction_size, n_basket_patterns=n_basket_patterns,
        n_customer_patterns=n_customer_patterns, mean_basket_pattern_size=mean_basket_pattern_size,
        mean_customer_pattern_length=mean_customer_pattern_length, basket_correlation=basket_correlation,
        customer_correlation=customer_correlation, basket_corruption_mean=basket_corruption_mean,
        customer_corruption_mean=customer_corruption_mean, corruption_variance=corruption_variance,
        random_state=random_state,
    )
    count, size, level = [Interval("int", 1, None)], [Interval("real", 1, None)], [Interval("real", 0, None)]
    unit = [Interval("real", 0, 1, "left")]
    validate_params(owner, params, {
        "n_transactions": count, "n_customers": count, "n_items": count, "mean_transaction_size": size,
        "n_basket_patterns": count, "n_customer_patterns": count, "mean_basket_pattern_size": size,
        "mean_customer_pattern_length": size, "basket_correlation": level, "customer_correlation": level,
        "basket_corruption_mean": unit, "customer_corruption_mean": unit, "corruption_variance": level,
        "random_state": [RANDOM_STATE],
    })
    if mean_basket_pattern_size > n_items:
        raise InvalidParameterError(
            f"The 'mean_basket_pattern_size' parameter of {owner} must be <= n_items ({n_items}), since a "
            f"basket pattern holds distinct items. Got {mean_basket_pattern_size!r}."
        )
    rng, seed = check_random_state(random_state, owner)

    b_items, b_w, b_c, b_prev = _basket_patterns(
        rng, n_basket_patterns, n_items, mean_basket_pattern_size, basket_correlation,
        basket_corruption_mean, corruption_variance)
    s_its, s_w, s_c, s_prev = _customer_patterns(
        rng, n_customer_patterns, b_w, mean_customer_pattern_length, customer_correlation,
        customer_corruption_mean, corruption_variance)
    pat = QuestPatterns(b_items, b_w, b_c, b_prev, s_its, s_w, s_c, s_prev)

    per_customer = rng.multinomial(n_transactions, np.full(n_customers, 1.0 / n_customers))
    customer_mean = _sizes(rng, mean_transaction_size, n_customers)
    targets = 1 + rng.poisson(np.repeat(customer_mean - 1, per_customer)).astype(np.int64)
    coins = rng.random(n_transactions)

    per_pattern = _expected_items_per_customer_pattern(pat)
    if per_pattern < 0.02:
        raise InvalidParameterError(
            f"{owner}: corruption leaves {per_pattern:.3g} items per customer pattern drawn, too few to fill "
            f"transactions; lower 'basket_corruption_mean' or 'customer_corruption_mean' (or "
            f"'corruption_variance')."
        )
    n_seq = int(1.05 * targets.sum() / per_pattern) + 100
    chunks = [_stream(rng, pat, n_seq)]
    bounds = np.empty(n_transactions + 1, dtype=np.int64)
    while True:
        kept = np.concatenate([c.basket_kept for c in chunks])
        nz = kept > 0
        sizes = kept[nz]
        if fill_transactions(sizes, targets, coins, PUT_ANYWAY, bounds) == n_transactions:
            break
        chunks.append(_stream(rng, pat, max(n_seq // 4, 100)))  # rare: the stream ran short

    n_used = int(bounds[-1])
    token_ptr = np.concatenate([[0], np.cumsum(sizes)])
    indptr = token_ptr[bounds]
    n_tok = int(indptr[-1])
    items = np.concatenate([c.items for c in chunks])[:n_tok]
    basket_of = np.concatenate([c.basket_pattern for c in chunks])[nz][:n_used]
    cpat_of = np.concatenate([c.basket_customer for c in chunks])[nz][:n_used]
    purchase_basket = np.repeat(basket_of, sizes[:n_used])
    purchase_cpat = np.repeat(cpat_of, sizes[:n_used])

    customer = np.repeat(np.arange(n_customers, dtype=np.int64), per_customer)
    purchase_customer = np.repeat(customer, np.diff(indptr))
    counts = sparse.csr_matrix(
        (np.ones(n_tok, dtype=np.int64), (purchase_customer, items)), shape=(n_customers, n_items))
    counts.sum_duplicates()
    item_group, item_share = _dominant(items, purchase_basket, n_items, n_basket_patterns)
    customer_group, customer_share = _dominant(purchase_customer, purchase_cpat, n_customers, n_customer_patterns)
    return MarketBasket(
        customer=customer, indptr=indptr, items=items, counts=counts, item_groups=b_items,
        customer_groups=s_its, item_group=item_group, customer_group=customer_group,
        item_group_share=item_share, customer_group_share=customer_share,
        purchase_basket_pattern=purchase_basket, purchase_customer_pattern=purchase_cpat,
        target_sizes=targets, patterns=pat, seed=seed,
    )

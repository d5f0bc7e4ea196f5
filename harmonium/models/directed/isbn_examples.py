"""Example ISBNs declared with :mod:`harmonium.models.directed.isbn` (seed 002 §6-7).

Each function returns a :class:`~harmonium.models.directed.isbn.Network`; the sampler is derived from it by
the engine package (``harmonium.inference.mcmc.isbn.engine.make_sampler``: :func:`hdp` runs on the
direct-assignment sweep, branch shapes on the compiled engine, the rest on the Python ``ISBNSampler``; no model
here has a sampler of its own).
Data indices are named as in the seed: ``doc`` (j) for documents/images, ``customer``/``item`` for
BiHDP, ``user``/``item`` for URP, ``sender``/``receiver`` for the blockmodel.
"""

from __future__ import annotations

import numpy as np

from harmonium.expfam import Bernoulli, Beta, Categorical, Dirichlet, Gaussian, NormalGamma
from harmonium.models.directed.isbn import DP, HDP, Latent, Network, Observed, RandomEffects
from harmonium.models.directed.isbn import Dirichlet as FiniteDirichlet


def _words(n_words: int, beta: float, parents: tuple, index: tuple = ()) -> Observed:
    return Observed("w", Categorical, Dirichlet(np.full(n_words, beta)), parents=parents, index=index,
                    fixed={"n_categories": n_words})


def hdp(n_words: int, alpha: float = 1.0, gamma: float = 1.0, beta: float = 0.1) -> Network:
    """HDP topic model (Fig. 1b): z_ji ~ pi_{z|j}, pi_{.|j} ~ DP(alpha, tau), w_ji ~ phi_{w|z}."""
    return Network([Latent("z", HDP(alpha, gamma), index=("doc",)), _words(n_words, beta, ("z",))],
                   indices=("doc",))


def hdp_random_effects(n_words: int, alpha: float = 1.0, gamma: float = 1.0, beta: float = 50.0,
                       eta: float = 0.01) -> Network:
    """HDP with random effects (§6; Kim & Smyth 2006): as :func:`hdp`, but every document j has its own version
    of each topic, phi_{w|z,j} ~ Dir(beta psi_{.|z}), around the shared topic psi_{.|z} ~ Dir(eta): the prior
    psi -> phi of the seed. Large ``beta``: document versions close to the shared topic."""
    return Network([Latent("z", HDP(alpha, gamma), index=("doc",)),
                    Observed("w", Categorical, RandomEffects(beta, Dirichlet(np.full(n_words, eta))), parents=("z",),
                             index=("doc",), fixed={"n_categories": n_words})], indices=("doc",))


def dp_mixture(likelihood=Gaussian, prior=None, alpha: float = 1.0, fixed: dict | None = None) -> Network:
    """DP mixture: z_i ~ CRP(alpha) over one global CPT, x_i ~ likelihood(phi_z) with a conjugate prior."""
    prior = NormalGamma(0.0, 0.1, 2.0, 2.0) if prior is None else prior
    return Network([Latent("z", DP(alpha)), Observed("x", likelihood, prior, parents=("z",), fixed=fixed or {})])


def infinite_pam(n_words: int, alpha: float = 1.0, gamma: float = 1.0, beta: float = 0.1) -> Network:
    """Infinite Pachinko allocation (Fig. 3a): super-topic z2_ji ~ pi_{z2|j}, sub-topic z1_ji ~ pi_{z1|z2,j},
    w_ji ~ phi_{w|z1}; both CPTs document specific with HDP priors (Li, Blei & McCallum 2007)."""
    return Network([Latent("super", HDP(alpha, gamma), index=("doc",)),
                    Latent("sub", HDP(alpha, gamma), parents=("super",), index=("doc",)),
                    _words(n_words, beta, ("sub",))], indices=("doc",))


def pom(prior=None, alpha: float = 1.0, gamma: float = 1.0) -> Network:
    """Probabilistic object model (seed 002 §6-7): as PAM with 2 hidden layers, but pi_{z1|z2} is shared by all
    images (not j specific): topic z2_ji ~ pi_{z2|j}, visual word z1_ji ~ pi_{z1|z2}, feature x_ji Gaussian."""
    prior = NormalGamma(0.0, 0.1, 2.0, 2.0) if prior is None else prior
    return Network([Latent("topic", HDP(alpha, gamma), index=("doc",)),
                    Latent("word", HDP(alpha, gamma), parents=("topic",)),
                    Observed("x", Gaussian, prior, parents=("word",))], indices=("doc",))


def bihdp(likelihood=Bernoulli, prior=None, alpha: float = 1.0, gamma: float = 1.0, fixed: dict | None = None
          ) -> Network:
    """BiHDP (Fig. 2a, §7): customer group z1_ji ~ pi_{z1|j} (customer j), item group z2_ji ~ pi_{z2|i} (item i),
    x_ji ~ likelihood(phi_{x|z1,z2}); default Bernoulli-Beta (did customer j buy item i)."""
    prior = Beta(1.0, 1.0) if prior is None else prior
    return Network([Latent("customer_group", HDP(alpha, gamma), index=("customer",)),
                    Latent("item_group", HDP(alpha, gamma), index=("item",)),
                    Observed("x", likelihood, prior, parents=("customer_group", "item_group"), fixed=fixed or {})],
                   indices=("customer", "item"))


def mmsb(n_roles: int | None = 3, alpha: float = 1.0, gamma: float = 1.0, prior=None) -> Network:
    """Mixed-membership stochastic blockmodel (Fig. 2b; Airoldi et al. 2008) for directed edges x_pq, p != q:
    the sender's role z_p->q ~ pi_{.|p}, the receiver's role z_q<-p ~ pi_{.|q} from the same membership CPT
    (``tied``), x_pq ~ Bernoulli(phi_{x|z_p->q, z_q<-p}).

    ``n_roles``: finite Dirichlet memberships over that many roles (the tied model). ``n_roles=None``: HDP
    memberships, but then sender and receiver CPTs are separate (departure from seed 002 §6: the engine
    does not tie HDP CPTs).
    """
    prior = Beta(1.0, 1.0) if prior is None else prior
    if n_roles:
        pr = FiniteDirichlet(alpha, n_roles)
        roles = [Latent("send_role", pr, index=("sender",)), Latent("recv_role", pr, index=("receiver",),
                                                                      tied="send_role")]
    else:
        roles = [Latent("send_role", HDP(alpha, gamma), index=("sender",)),
                 Latent("recv_role", HDP(alpha, gamma), index=("receiver",))]
    return Network(roles + [Observed("x", Bernoulli, prior, parents=("send_role", "recv_role"))],
                   indices=("sender", "receiver"))


def nested_dp(depth: int = 2, likelihood=Categorical, prior=None, alphas=None, fixed: dict | None = None
              ) -> Network:
    """Nested DP (Fig. 3b, §5): level 1 ~ DP, level l+1 | level l ~ DP per parent state, so the state space
    forks into a tree of depth ``depth``; the leaf emits x."""
    alphas = [1.0] * depth if alphas is None else list(alphas)
    if prior is None:
        prior, fixed = Dirichlet(np.full(3, 0.5)), {"n_categories": 3}
    nodes = [Latent("level1", DP(alphas[0]))]
    for lv in range(2, depth + 1):
        nodes.append(Latent(f"level{lv}", DP(alphas[lv - 1]), parents=(f"level{lv - 1}",)))
    nodes.append(Observed("x", likelihood, prior, parents=(f"level{depth}",), fixed=fixed or {}))
    return Network(nodes)


def urp(n_ratings: int, alpha: float = 1.0, gamma: float = 1.0, beta: float = 1.0) -> Network:
    """Infinite user rating profile (§6): profile z_ji ~ pi_{z|j} (user j), rating x_ji ~ phi_{x|z,i} specific to
    item i (Marlin 2003): an HDP whose emission CPT depends on the item index."""
    return Network([Latent("profile", HDP(alpha, gamma), index=("user",)),
                    Observed("rating", Categorical, Dirichlet(np.full(n_ratings, beta)), parents=("profile",),
                             index=("item",), fixed={"n_categories": n_ratings})], indices=("user", "item"))


def multimedia(n_words: int, feature_prior=None, n_classes: int = 5, alpha: float = 1.0, gamma: float = 1.0,
               beta: float = 0.1) -> Network:
    """The multimedia model (Fig. 2c): a page class z0_j per document (``per=("doc",)``, finite Dirichlet prior),
    a word branch z1 | z0 -> w and a visual-feature branch z2 | z0 -> y (Gaussian) with HDP priors.

    Items are words or features of a page: pass ``present={"w": is_word, "y": ~is_word}`` to the sampler,
    so that the branch an item lacks dangles and is integrated out (seed 002 §5-6).
    """
    feature_prior = NormalGamma(0.0, 0.1, 2.0, 2.0) if feature_prior is None else feature_prior
    return Network([Latent("page_class", FiniteDirichlet(alpha, n_classes), per=("doc",)),
                    Latent("word_topic", HDP(alpha, gamma), parents=("page_class",)),
                    Latent("feature_topic", HDP(alpha, gamma), parents=("page_class",)),
                    _words(n_words, beta, ("word_topic",)),
                    Observed("y", Gaussian, feature_prior, parents=("feature_topic",))], indices=("doc",))


EXAMPLES = {"hdp": hdp, "hdp_random_effects": hdp_random_effects,
            "dp_mixture": dp_mixture, "infinite_pam": infinite_pam, "pom": pom, "bihdp": bihdp,
            "mmsb": mmsb, "nested_dp": nested_dp, "urp": urp,
            "multimedia": multimedia}

"""The ISBN declaration: valid models pass, bad ones get one clear message each."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.expfam import Beta, Categorical, Dirichlet, Gamma, Gaussian, NormalGamma, Poisson
from harmonium.models.directed import isbn
from harmonium.models.directed.isbn import DP, HDP, Latent, Network, Observed

V = 5
DIR = Dirichlet(np.full(V, 0.1))


def test_declared_example_models_validate():
    hdp = Network([Latent("z", HDP(1.0, 1.0), index=("doc",)),
                   Observed("w", Categorical, DIR, parents=("z",), fixed={"n_categories": V})], indices=("doc",))
    assert hdp.validate().topological_order() == ["z"]
    # infinite PAM (Fig. 3a): z2 -> z1 -> w, both document specific
    pam = Network([Latent("z1", HDP(1.0, 1.0), parents=("z2",), index=("doc",)),
                   Latent("z2", HDP(1.0, 1.0), index=("doc",)),
                   Observed("w", Categorical, DIR, parents=("z1",), fixed={"n_categories": V})], indices=("doc",))
    assert pam.validate().topological_order() == ["z2", "z1"]
    # BiHDP (Fig. 2a) with a Poisson-Gamma rating, and a nested DP (Fig. 3b) with a Gaussian leaf
    bi = Network([Latent("zc", HDP(1.0, 1.0), index=("customer",)), Latent("zp", HDP(1.0, 1.0), index=("product",)),
                  Observed("x", Poisson, Gamma(1.0, 1.0), parents=("zc", "zp"))], indices=("customer", "product"))
    bi.validate()
    ndp = Network([Latent("a", DP(1.0)), Latent("b", DP(1.0), parents=("a",)),
                   Observed("x", Gaussian, NormalGamma(0.0, 1.0, 2.0, 2.0), parents=("b",))])
    assert ndp.validate().topological_order() == ["a", "b"]


@pytest.mark.parametrize("nodes, indices, match", [
    ([Latent("z", HDP(1.0, 1.0), parents=("y",)), Observed("w", Categorical, DIR, parents=("z",))], (),
     "node 'z' has an unknown parent 'y'"),
    ([Latent("a", DP(1.0), parents=("b",)), Latent("b", DP(1.0), parents=("a",)),
      Observed("w", Categorical, DIR, parents=("a",))], (), "the ISBN has a cycle: .*a.*b.*a|the ISBN has a cycle"),
    ([Latent("z", DP(1.0)), Observed("w", Categorical, Gamma(1.0, 1.0), parents=("z",))], (),
     "a Categorical likelihood needs a Dirichlet prior to be conjugate; got Gamma"),
    ([Latent("z", DP(1.0)), Observed("w", Poisson, Beta(1.0, 1.0), parents=("z",))], (),
     "a Poisson likelihood needs a Gamma prior"),
    ([Latent("z", DP(1.0), parents=("w",)), Observed("w", Categorical, DIR)], (),
     "observed node 'w' as a parent"),
    ([Latent("z", HDP(1.0, 1.0), index=("doc",)), Observed("w", Categorical, DIR, parents=("z",))], (),
     "unknown data index 'doc'"),
    ([Latent("z", HDP(-1.0, 1.0)), Observed("w", Categorical, DIR, parents=("z",))], (),
     "'alpha' of the HDP prior of node 'z' must be a positive float"),
    ([Latent("z", isbn.Dirichlet(1.0, 0)), Observed("w", Categorical, DIR, parents=("z",))], (),
     "'n_states' of the Dirichlet prior of node 'z' must be an int >= 1"),
    ([Latent("z", DP(1.0)), Latent("z", DP(1.0)), Observed("w", Categorical, DIR)], (), "two ISBN nodes are named 'z'"),
    ([Latent("z", DP(1.0))], (), "at least one Observed node"),
    ([Latent("z", "HDP"), Observed("w", Categorical, DIR, parents=("z",))], (), "needs an HDP, DP or Dirichlet prior"),
    ([Latent("z", DP(1.0)), Observed("w", Categorical, Dirichlet(np.ones((2, V))), parents=("z",))], (),
     "must be a single distribution"),
])
def test_bad_declarations_are_rejected_clearly(nodes, indices, match):
    with pytest.raises(InvalidParameterError, match=match):
        Network(nodes, indices=indices).validate()

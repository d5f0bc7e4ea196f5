"""One engine package for HDP-family models and ISBN networks (seed 002): ``engine`` maps a declared network to
its sweep (``plan``, ``make_sampler``): the HDP direct-assignment sampler (``hdp``; Teh et al. 2006 §5.3), the
compiled engine for branch-shaped networks (``compiled``), or the general Python ISBN engine (``gibbs``, with its
junction tree ``junction``), which is also the tests' reference. Shared by all: the hyperparameter updates
(``hyper``) and the item conditionals' format (``conditionals``)."""

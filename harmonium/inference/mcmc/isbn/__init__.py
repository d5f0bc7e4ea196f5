"""Samplers for HDP-family models and ISBN networks (seed 002): the HDP direct-assignment sampler (Teh et al. 2006
§5.3), the Python ISBN engine derived from a declaration, its junction tree, and the compiled engine for
branch-shaped networks."""

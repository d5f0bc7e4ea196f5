"""Samplers for the Bayesian exponential family harmonium (Guo & Xing, seed 000 §3): Langevin / MALA / SGLD over
the couplings W with brief sampling, and Metropolis-Hastings with partition-function ratios."""

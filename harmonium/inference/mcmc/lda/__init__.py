"""Samplers for LDA (Blei, Ng & Jordan 2003): the collapsed Gibbs sweeps (Griffiths & Steyvers 2004) and their
registry, alias-table Metropolis-Hastings, AD-LDA on threads and on Dask, naive Gibbs, chain estimates and
inference on new documents."""

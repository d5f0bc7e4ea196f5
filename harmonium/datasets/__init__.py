"""Bundled real corpora and their loaders (read from the package each call, never cached)."""

from harmonium.datasets.debian import load_debian

__all__ = ["load_debian"]

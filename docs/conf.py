"""Sphinx configuration of the harmonium documentation (``make docs``; built with -W -n in the tests)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import harmonium  # noqa: E402

project = "harmonium"
author = "the harmonium developers"
copyright = "the harmonium developers"
release = version = harmonium.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
templates_path = ["_templates"]
exclude_patterns = ["_build", "api/generated/*.md", "README.md"]
root_doc = "index"

# API reference: one page per public object, generated from the numpydoc docstrings.
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"              # the numpydoc "Parameters" sections carry the types
autodoc_member_order = "bysource"
autodoc_default_options = {"exclude-members": "__init__, __new__"}
numpydoc_show_class_members = False     # members are listed by the autosummary class template
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# Markdown pages (the guides, notation.md, ARCHITECTURE.md).
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3


# Broken cross-references are errors (the tests build with -W -n).
nitpicky = True
nitpick_ignore_regex = [
    # Types named in prose by their library, not documented here.
    (r"py:.*", r"(np|numpy|scipy|sp|numba|distributed|dask|sklearn|gensim|matplotlib)\..*"),
]

html_theme = "alabaster"
html_title = f"harmonium {release}"
html_static_path: list[str] = []

doctest_global_setup = "import numpy as np\nimport harmonium"

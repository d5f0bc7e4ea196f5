"""Deferred imports: a module, or one of its attributes, imported on first use.

``import harmonium`` should not pay for numba, LLVM and scipy.special (about 140 MB of resident
memory and most of a second) before anything is fitted. Modules that sit on the import path of
``harmonium`` (the estimators) name their heavy dependencies through :func:`lazy`, and the name is
resolved the first time it is called or an attribute of it is read. tests/unit/test_layers.py reads
these calls as imports, so the layer rules still hold for them.
"""

from __future__ import annotations

import importlib


class _Lazy:
    __slots__ = ("_module", "_attr", "_target")

    def __init__(self, module: str, attr: str | None):
        self._module = module
        self._attr = attr
        self._target = None

    def _resolve(self):
        target = self._target
        if target is None:
            target = importlib.import_module(self._module)
            if self._attr is not None:
                target = getattr(target, self._attr)
            self._target = target
        return target

    def __getattr__(self, name):
        return getattr(self._resolve(), name)

    def __call__(self, *args, **kwargs):
        return self._resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy {self._module}{'.' + self._attr if self._attr else ''}>"


def lazy(module: str, attr: str | None = None):
    """``module`` (or ``module.attr``), imported when first called or when an attribute of it is read."""
    return _Lazy(module, attr)

"""Checkpoints of long runs: the model-file format with ``kind="checkpoint"``.

A checkpoint is an ordinary harmonium model file (see
:mod:`harmonium.io.modelfile`) whose manifest has ``kind == "checkpoint"``,
whose ``rng_state`` is the bit generator state of the run's Generator and whose
``extra["iteration"]`` is the number of completed iterations. The sampler or
optimiser state (assignments, count matrices, variational parameters...) goes
in the arrays, stored bit for bit.

Resuming is bit-identical: a run of ``n`` iterations gives exactly the same
arrays, trace and random stream as a run stopped after ``m`` iterations,
checkpointed, loaded and continued for ``n - m`` iterations, provided the caller

1. saves *after* iteration ``m`` has completed, with ``iteration=m``, every
   array the kernel reads or mutates, and the Generator that drives it;
2. on resume, restores those arrays (they come back writeable, with the same
   dtype, shape and byte order) and uses ``checkpoint.rng`` as the Generator;
3. continues the loop from iteration ``m`` (``range(checkpoint.iteration,
   n_iter)``) with the same hyperparameters and thread count.

Writes are atomic, so a crash during a save leaves the previous checkpoint
intact.

Examples
--------
>>> import numpy as np, tempfile, pathlib
>>> from harmonium.io import save_checkpoint, load_checkpoint
>>> rng = np.random.default_rng(0)
>>> x = rng.random(3)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run.hmn"
>>> _ = save_checkpoint(path, cls="Toy", params={"n": 3}, state_arrays={"x": x},
...                     rng=rng, iteration=1, trace={"loss": [0.5]})
>>> ckpt = load_checkpoint(path, expected_class="Toy")
>>> ckpt.iteration, bool(ckpt.rng.random() == rng.random())
(1, True)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harmonium._validation import Interval, validate_params
from harmonium.errors import InvalidParameterError, ModelFileError
from harmonium.io.modelfile import read_model_file, write_model_file
from harmonium.parallel.seeds import generator_from_state, get_state

__all__ = ["Checkpoint", "CheckpointPolicy", "load_checkpoint", "save_checkpoint"]

ITERATION_KEY = "iteration"
"""The key of ``manifest["extra"]`` that holds the number of completed iterations."""


@dataclass(frozen=True, eq=False)  # arrays make == ambiguous; compare fields instead
class Checkpoint:
    """A loaded checkpoint.

    Attributes
    ----------
    path : pathlib.Path
        The file it was read from.
    cls : str
        The class name given to :func:`save_checkpoint`.
    params : dict
        The hyperparameters.
    arrays : dict of str to numpy.ndarray
        The state arrays, writeable, bit-identical to those saved.
    rng : numpy.random.Generator
        A new Generator in exactly the state saved.
    iteration : int
        Number of completed iterations when the checkpoint was saved.
    trace : dict
        The training trace up to ``iteration``.
    extra : dict
        The caller's ``extra`` (without the iteration key).
    vocabulary : list of str or None
        The terms, if saved.
    manifest : dict
        The full manifest.
    """

    path: Path
    cls: str
    params: dict
    arrays: dict
    rng: np.random.Generator
    iteration: int
    trace: dict
    extra: dict
    vocabulary: list | None
    manifest: dict


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def save_checkpoint(
    path,
    *,
    cls: str,
    params: dict,
    state_arrays: dict,
    rng: np.random.Generator,
    iteration: int,
    trace: dict,
    extra: dict | None = None,
    vocabulary=None,
    compress: bool = False,
) -> Path:
    """Write a checkpoint atomically (a model file with ``kind="checkpoint"``).

    Parameters
    ----------
    path : str or os.PathLike
        Target file; an existing checkpoint is replaced only once the new one
        is complete.
    cls : str
        Class name of the model or algorithm being run.
    params : dict
        Hyperparameters (JSON).
    state_arrays : dict of str to numpy.ndarray
        Every array needed to continue the run.
    rng : numpy.random.Generator
        The Generator driving the run; its bit generator state is stored. It is
        not advanced.
    iteration : int
        Number of completed iterations (>= 0).
    trace : dict
        The training trace so far.
    extra : dict, optional
        Further JSON data; the key ``"iteration"`` is reserved.
    vocabulary : sequence of str, optional
        The terms in word-id order.
    compress : bool, default False
        DEFLATE the arrays (see :func:`~harmonium.io.write_model_file`).

    Returns
    -------
    pathlib.Path
        The path written; :func:`load_checkpoint` (with ``expected_class``)
        reads it back to resume the run.

    Raises
    ------
    ModelFileError
        If an argument cannot be stored (the message names it).
    OSError
        If the directory cannot be written; any previous checkpoint is intact.
    """
    where = f"Cannot write checkpoint '{Path(path)}'"
    if not isinstance(rng, np.random.Generator):
        raise ModelFileError(f"{where}: `rng` must be a numpy Generator, got {type(rng).__name__}.")
    if not _is_int(iteration) or iteration < 0:
        raise ModelFileError(f"{where}: `iteration` must be an int >= 0, got {iteration!r}.")
    if extra is not None and not isinstance(extra, Mapping):
        raise ModelFileError(f"{where}: `extra` must be a dict, got {type(extra).__name__}.")
    extra = dict(extra or {})
    if ITERATION_KEY in extra:
        raise ModelFileError(f"{where}: the key {ITERATION_KEY!r} of `extra` is reserved for the "
                             "iteration count.")
    extra[ITERATION_KEY] = int(iteration)
    return write_model_file(
        path,
        cls=cls,
        params=params,
        arrays=state_arrays,
        vocabulary=vocabulary,
        rng_state=get_state(rng),
        trace=trace,
        kind="checkpoint",
        extra=extra,
        compress=compress,
    )


def load_checkpoint(path, *, expected_class: str | None = None) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    expected_class : str, optional
        Refuse a checkpoint of another class.

    Returns
    -------
    Checkpoint
        Arrays, a Generator rebuilt in the saved state, the iteration count,
        params, trace and manifest.

    Raises
    ------
    ModelFileError
        For every problem :func:`~harmonium.io.read_model_file` reports, and if
        the file is a model rather than a checkpoint or its RNG state or
        iteration count is missing or invalid.
    """
    mf = read_model_file(path, expected_class=expected_class, expected_kind="checkpoint")
    where = f"Cannot read checkpoint '{mf.path}'"
    iteration = mf.extra.get(ITERATION_KEY)
    if not _is_int(iteration) or iteration < 0:
        raise ModelFileError(f"{where}: extra[{ITERATION_KEY!r}] should be an int >= 0, "
                             f"got {iteration!r}.")
    if mf.rng_state is None:
        raise ModelFileError(f"{where}: it holds no RNG state, so the run cannot be resumed.")
    try:
        rng = generator_from_state(mf.rng_state)
    except (InvalidParameterError, ValueError, TypeError, KeyError, OverflowError) as exc:
        raise ModelFileError(f"{where}: its RNG state cannot be restored ({exc}).") from exc
    extra = {k: v for k, v in mf.extra.items() if k != ITERATION_KEY}
    return Checkpoint(
        path=mf.path,
        cls=mf.cls,
        params=mf.params,
        arrays=mf.arrays,
        rng=rng,
        iteration=int(iteration),
        trace=mf.trace,
        extra=extra,
        vocabulary=mf.vocabulary,
        manifest=mf.manifest,
    )


@dataclass(frozen=True)
class CheckpointPolicy:
    """When and where a long run saves checkpoints.

    Parameters
    ----------
    path : str or os.PathLike
        Where to save. A path containing ``{iteration}`` (format spec allowed,
        e.g. ``"run-{iteration:06d}.hmn"``) keeps one file per checkpoint;
        otherwise each save replaces the previous one atomically.
    every : int
        Save after every ``every`` completed iterations (>= 1).

    Examples
    --------
    >>> policy = CheckpointPolicy("run.hmn", every=10)
    >>> [it for it in range(31) if policy.due(it)]
    [10, 20, 30]
    >>> str(CheckpointPolicy("run-{iteration:03d}.hmn", every=5).path_for(20))
    'run-020.hmn'
    """

    path: Path | str
    every: int

    def __post_init__(self):
        validate_params("CheckpointPolicy", {"every": self.every},
                        {"every": [Interval("int", 1, None)]})
        try:
            self.path_for(0)
        except (KeyError, IndexError, ValueError) as exc:
            raise InvalidParameterError(
                f"The 'path' parameter of CheckpointPolicy may contain only the placeholder "
                f"{{iteration}}. Got {str(self.path)!r}."
            ) from exc

    def due(self, iteration: int) -> bool:
        """Whether to save after ``iteration`` completed iterations (never at 0)."""
        return iteration > 0 and iteration % self.every == 0

    def path_for(self, iteration: int) -> Path:
        """The file for the checkpoint taken after ``iteration`` iterations."""
        text = str(self.path)
        if "{" in text:
            return Path(text.format(iteration=iteration))
        return Path(self.path)

    def save(self, iteration: int, **kwargs) -> Path:
        """:func:`save_checkpoint` to :meth:`path_for` ``(iteration)``; kwargs as there."""
        return save_checkpoint(self.path_for(iteration), iteration=iteration, **kwargs)

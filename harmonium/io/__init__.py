"""Model files and checkpoints: a JSON manifest plus ``.npy`` arrays in one ZIP, never pickle.

See :mod:`harmonium.io.modelfile` for the format and :mod:`harmonium.io.checkpoint`
for resuming long runs.
"""

from __future__ import annotations

from harmonium.io.atomic import atomic_write_bytes, atomic_writer, check_writable, check_writable_folder
from harmonium.io.checkpoint import Checkpoint, CheckpointPolicy, load_checkpoint, save_checkpoint
from harmonium.io.modelfile import (
    FORMAT,
    FORMAT_VERSION,
    MIGRATIONS,
    ModelFile,
    read_model_file,
    write_model_file,
)

__all__ = [
    "atomic_write_bytes",
    "atomic_writer",
    "check_writable",
    "check_writable_folder",
    "FORMAT",
    "FORMAT_VERSION",
    "MIGRATIONS",
    "Checkpoint",
    "CheckpointPolicy",
    "ModelFile",
    "load_checkpoint",
    "read_model_file",
    "save_checkpoint",
    "write_model_file",
]

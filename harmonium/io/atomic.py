"""Atomic file writes: a temporary file in the target's directory, fsync, then rename.

Every writer in harmonium (model files, checkpoints, corpus files, CLI
outputs) goes through :func:`atomic_writer`, so a crash or an exception never
leaves a half-written file under the target name, and an existing target is
replaced only once the new content is complete.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _current_umask() -> int:
    """The process umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # portable fallback: set and restore at once
    os.umask(mask)
    return mask


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable; not possible on every platform, hence best effort."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_writer(path, mode: str = "wb", encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary file next to ``path``; on clean exit it replaces ``path``.

    On any exception (including KeyboardInterrupt) the temporary file is
    removed and ``path`` is left as it was. The new file gets the permissions a
    plain ``open`` would give it, or keeps those of the file it replaces.

    Parameters
    ----------
    path : str or path-like
    mode : {"wb", "w"}
    encoding : str, optional
        For text mode; defaults to UTF-8.
    """
    target = Path(path)
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_writer mode must be 'wb' or 'w'; got {mode!r}")
    tmp = tempfile.NamedTemporaryFile(  # closed and removed explicitly below
        mode="w+b", dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    tmp_path = Path(tmp.name)
    try:
        try:
            if mode == "w":
                import io

                text = io.TextIOWrapper(tmp, encoding=encoding or "utf-8", newline="")
                try:
                    yield text
                    text.flush()
                finally:
                    text.detach()
            else:
                yield tmp
            tmp.flush()
            os.fsync(tmp.fileno())
        finally:
            tmp.close()
        try:
            file_mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            file_mode = 0o666 & ~_current_umask()
        os.chmod(tmp_path, file_mode)
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise
    _fsync_dir(target.parent)


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)
    return Path(path)

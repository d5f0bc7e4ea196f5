"""Atomic file writes: a temporary file in the target's directory, fsync, then rename.

Every writer in harmonium (model files, checkpoints, corpus files, CLI
outputs) goes through :func:`atomic_writer`, so a crash or an exception never
leaves a half-written file under the target name, and an existing target is
replaced only once the new content is complete.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from harmonium.errors import OutputPathError


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


def fsync_dir(directory) -> None:
    """Make renames into ``directory`` durable; not possible on every platform, hence best effort."""
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


@functools.cache
def _error_class(kind: type) -> type:
    """OutputPathError that is also ``kind`` (FileNotFoundError, PermissionError...), so both catch it."""
    if kind is OSError or issubclass(kind, OutputPathError):
        return OutputPathError
    return type("OutputPathError", (OutputPathError, kind), {"__module__": OutputPathError.__module__})


def _explain(exc: OSError, target: Path, folder: Path) -> OutputPathError:
    """``exc`` (raised on a temporary file or on the rename) as an error about the user's ``target``."""
    code = exc.errno
    if code == errno.ENOENT:
        why = f"the folder '{folder}' does not exist; create it first"
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = f"no permission to write in the folder '{folder}'"
    elif code == errno.ENOTDIR:
        why = f"'{folder}' is not a folder"
    elif code == errno.EISDIR:
        why = "it is a folder; name a file"
    elif code == errno.ENOSPC:
        why = "no space left on the device"
    else:
        why = exc.strerror or str(exc)
    return _error_class(type(exc))(f"Cannot write '{target}': {why}.")


def check_writable(path) -> Path:
    """Raise :class:`~harmonium.errors.OutputPathError` now if ``path`` could not be written later.

    Called before long work (a fit) whose result goes to ``path``: the folder
    must exist and accept a new file, and ``path`` must not be a folder. The
    check writes and removes a temporary file, so it holds on any platform and
    for any user; nothing is left behind and ``path`` is not touched.
    """
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise OutputPathError(f"Cannot write '{target}': it is a folder; name a file.")
    try:
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        err = exc
        if not folder.exists():  # a folder missing further up also reads as ENOENT
            err = FileNotFoundError(errno.ENOENT, "no such folder")
        elif not folder.is_dir():
            err = NotADirectoryError(errno.ENOTDIR, "not a folder")
        raise _explain(err, target, folder) from None
    probe.close()
    return target


def check_writable_folder(path) -> Path:
    """Like :func:`check_writable` for an output folder that will be created (with its parents) if missing."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise OutputPathError(f"Cannot write to the folder '{target}': a file of that name is in the way.")
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise OutputPathError(f"Cannot create the folder '{target}': '{existing}' is a file, not a folder.")
    try:
        tempfile.NamedTemporaryFile(dir=existing, prefix=".harmonium.", suffix=".tmp").close()
    except OSError as exc:
        raise OutputPathError(f"Cannot write to the folder '{target}': no permission to write in "
                              f"'{existing}' ({exc.strerror}).") from None
    return target


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

    Raises
    ------
    OutputPathError
        (an ``OSError``) naming ``path``, never the temporary file, when the
        folder is missing or not writable or ``path`` is a folder.
    """
    target = Path(path)
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_writer mode must be 'wb' or 'w'; got {mode!r}")
    try:
        tmp = tempfile.NamedTemporaryFile(  # closed and removed explicitly below
            mode="w+b", dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
        )
    except OSError as exc:  # the temporary name means nothing to the user: name the target
        err = FileNotFoundError(errno.ENOENT, "no such folder") if not target.parent.exists() else exc
        raise _explain(err, target, target.parent) from None
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
        try:
            os.replace(tmp_path, target)
        except OSError as exc:
            raise _explain(exc, target, target.parent) from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise
    fsync_dir(target.parent)


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)
    return Path(path)

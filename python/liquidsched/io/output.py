"""The one way liquidsched writes a file: whole or not at all, and never over something that is
not a file.

* ``-`` is standard output.
* A regular file (or a new one) is written to a temporary file beside it and renamed over it, so
  a reader never sees half of it and a failure leaves nothing behind.
* A symbolic link is followed: its target is written, the link stays; the target of a dangling
  link is created.
* An empty path, or one ending in a slash, is refused.
* A device, a FIFO or a socket is written in place (``/dev/null``, ``/dev/stdout``, a named pipe a
  reader waits on); it is never replaced by a file.
* A directory, a path under a file, or a directory that does not exist or cannot be written is
  refused, with one line naming the path, by :func:`check_output` before any long work starts.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from ..errors import InputError

STDOUT = "-"

#: Plot formats, chosen by the file's extension.
PLOT_FORMATS = ("png", "pdf", "svg")


def _plain_file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file under this process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# mkstemp creates files private; written files get the mode a plain open() would give them.
# Read once: changing the umask is process-wide and must not race with other threads.
_PLAIN_FILE_MODE = _plain_file_mode()


def _why(e: OSError) -> str:
    return e.strerror or str(e)


def _existing_kind(p: Path) -> str | None:
    """``"regular"``, ``"directory"``, ``"special"`` (device, FIFO, socket) or None when
    nothing is there; symbolic links are followed."""
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise InputError(f"{p}: a part of the path is a file, not a directory") from None
    except OSError as e:
        raise InputError(f"{p}: cannot write: {_why(e)}") from None
    if stat.S_ISDIR(mode):
        return "directory"
    return "regular" if stat.S_ISREG(mode) else "special"


def plot_format(path: str | os.PathLike) -> str:
    """The plot format named by ``path``'s extension.

    Raises
    ------
    InputError
        when the extension is not one of :data:`PLOT_FORMATS`.

    Examples
    --------
    >>> plot_format("out/schedule.pdf")
    'pdf'
    """
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:
        shown = f"'.{suffix}'" if suffix else "no extension"
        raise InputError(f"{path}: a plot is written as {', '.join(PLOT_FORMATS)} by its extension; "
                         f"this path has {shown}")
    return suffix


def _refuse_no_file_name(path: str | os.PathLike) -> None:
    """Refuse a path that names no file: empty, or ending in a slash (a directory's name, which
    pathlib would silently drop)."""
    text = str(path)
    if not text.strip():
        raise InputError("an empty output path: give a file name, or - for standard output")
    if text.endswith(("/", os.sep)):
        raise InputError(f"{text}: ends with /, so names a directory, not a file")


def _target(p: Path) -> Path:
    """The file ``p`` names: a symbolic link's target, followed to the end (a dangling link's
    too), so that the link stays and its target is written."""
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def check_output(path: str | os.PathLike) -> None:
    """Refuse, before any work, an output path that cannot be written.

    The directory must exist and accept a new file (tried for real: as root, permission bits do
    not tell); an existing directory is refused; a device or FIFO must be writable; a symbolic
    link is judged by its target.

    Examples
    --------
    >>> check_output("/nonexistent-dir/x.json")
    Traceback (most recent call last):
    ...
    liquidsched.errors.InputError: /nonexistent-dir/x.json: directory /nonexistent-dir does not exist
    """
    _refuse_no_file_name(path)
    if str(path) == STDOUT:
        return
    p = Path(path)
    kind = _existing_kind(p)
    if kind == "directory":
        raise InputError(f"{p}: is a directory")
    if kind == "special":
        if not os.access(p, os.W_OK):
            raise InputError(f"{p}: cannot write: permission denied")
        return
    target = _target(p)
    parent = target.parent
    parent_kind = _existing_kind(parent)
    if parent_kind is None:
        link = f" (where the symbolic link leads: {target})" if target != p else ""
        raise InputError(f"{p}: directory {parent} does not exist{link}")
    if parent_kind != "directory":
        raise InputError(f"{p}: {parent} is not a directory")
    try:
        fd, probe = _mkstemp(target.name, parent)
    except OSError as e:
        raise InputError(f"{p}: cannot write in {parent}: {_why(e)}") from None
    os.close(fd)
    os.unlink(probe)


def write_output(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` to ``path`` by the rules of this module.

    Raises
    ------
    InputError
        naming the path and the system's reason, when it cannot be written.
    """
    _refuse_no_file_name(path)
    if str(path) == STDOUT:
        _write_stdout(data)
        return
    p = Path(path)
    kind = _existing_kind(p)
    if kind == "directory":
        raise InputError(f"{p}: is a directory")
    target = p if kind == "special" else _target(p)
    try:
        if kind == "special":
            _write_in_place(p, data)
        else:
            _write_atomic(target, data)
    except OSError as e:
        if e.errno == errno.ENOENT and not target.parent.exists():
            raise InputError(f"{p}: directory {target.parent} does not exist") from None
        raise InputError(f"{p}: cannot write: {_why(e)}") from None


def stdout_error(e: OSError) -> InputError:
    """The one-line error of a write to standard output that failed for another reason than a
    reader gone away (a full device, a closed descriptor)."""
    return InputError(f"standard output: cannot write: {_why(e)}")


def _write_stdout(data: str | bytes) -> None:
    """Write ``data`` whole to standard output, or raise :class:`BrokenPipeError` when its
    reader went away. Written to the file descriptor, not through ``sys.stdout``: unbuffered
    (``PYTHONUNBUFFERED``), Python's stream takes a write the kernel cut short (the reader left)
    as done and loses the rest without an error."""
    stream = sys.stdout
    if stream is None:  # Python found descriptor 1 closed at start
        raise stdout_error(OSError(errno.EBADF, os.strerror(errno.EBADF)))
    stream.flush()
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream in memory (captured output)
        buffer = getattr(stream, "buffer", None)
        if isinstance(data, bytes) and buffer is not None:
            buffer.write(data)
        else:
            stream.write(data if isinstance(data, str) else data.decode("utf-8", "replace"))
        stream.flush()
        return
    view = memoryview(data if isinstance(data, bytes) else data.encode("utf-8"))
    try:
        while view:
            view = view[os.write(fd, view):]
    except BrokenPipeError:
        raise
    except OSError as e:
        raise stdout_error(e) from None


def _mkstemp(name: str, directory: Path) -> tuple[int, str]:
    """A new hidden file beside ``name`` in ``directory``, open: (descriptor, path)."""
    import tempfile  # not at start-up: most commands write nothing (tempfile pulls in shutil, bz2, lzma)

    return tempfile.mkstemp(prefix=f".{name}.", dir=directory)


def _write_in_place(p: Path, data: str | bytes) -> None:
    # No truncation and no rename: a device or a FIFO is what the user pointed at.
    with open(p, "ab" if isinstance(data, bytes) else "a", **_encoding(data)) as f:
        f.write(data)


def _encoding(data: str | bytes) -> dict:
    return {} if isinstance(data, bytes) else {"encoding": "utf-8"}


def _write_atomic(p: Path, data: str | bytes) -> None:
    fd, tmp = _mkstemp(p.name, p.parent)
    try:
        os.chmod(tmp, _PLAIN_FILE_MODE)
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w", **_encoding(data)) as f:
            f.write(data)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise

"""Reading documents and writing files whole or not at all."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError


def _plain_file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file under this process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# mkstemp creates files private; written files get the mode a plain open() would give them.
# Read once: changing the umask is process-wide and must not race with other threads.
_PLAIN_FILE_MODE = _plain_file_mode()


def read_document(path: str | os.PathLike, error: type[Exception] = InputError) -> Any:
    """Parse a JSON or YAML file (chosen by extension; YAML also reads JSON)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{p}: cannot read: {e}") from None
    try:
        if p.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as e:
        raise error(f"{p}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise error(f"{p}: not valid YAML: {problem}{place}") from None


def dump_document(data: Any, path: str | os.PathLike) -> str:
    """Serialise ``data`` as JSON (``.json``) or YAML (anything else)."""
    if Path(path).suffix.lower() == ".json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write a file whole: to a temporary file beside it, then renamed over it.

    A reader never sees a half-written file, and a failure leaves no file behind.
    """
    p = Path(path)
    if p.parent and not p.parent.exists():
        raise InputError(f"{p}: directory {p.parent} does not exist")
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent or ".")
    try:
        os.chmod(tmp, _PLAIN_FILE_MODE)
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
            f.write(data)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_document(data: Any, path: str | os.PathLike) -> None:
    """Write ``data`` as JSON or YAML (by extension), atomically."""
    write_atomic(path, dump_document(data, path))

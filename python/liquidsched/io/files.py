"""Reading JSON and YAML documents strictly, and writing them through the one output writer
(:mod:`liquidsched.io.output`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError
from .output import write_output


class _DuplicateKey(Exception):
    def __init__(self, key: object, line: int | None = None) -> None:
        self.key, self.line = key, line


class _StrictYamlLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (the YAML spec says keys
    are unique; PyYAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base class reports it
                break
            if duplicate:
                raise _DuplicateKey(key, key_node.start_mark.line + 1)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _strict_json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def parse_document(text: str, where: str, json_only: bool = False, error: type[Exception] = InputError) -> Any:
    """Parse JSON (``json_only``) or YAML (which also reads JSON) text, refusing duplicate keys;
    errors name ``where`` and the line."""
    try:
        if json_only:
            return json.loads(text, object_pairs_hook=_strict_json_object)
        return yaml.load(text, Loader=_StrictYamlLoader)  # noqa: S506 (a SafeLoader subclass)
    except _DuplicateKey as e:
        line = f" at line {e.line}" if e.line else ""
        raise error(f"{where}: key {e.key!r} appears twice in one mapping{line}") from None
    except json.JSONDecodeError as e:
        raise error(f"{where}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise error(f"{where}: not valid YAML: {problem}{place}") from None
    except RecursionError:
        raise error(f"{where}: nested too deeply") from None


def read_text(path: str | os.PathLike, error: type[Exception] = InputError) -> str:
    """The UTF-8 text of a file; a missing, unreadable or binary file is one line naming it."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory, not a file") from None
    except UnicodeDecodeError:
        raise error(f"{p}: not a text file (not UTF-8)") from None
    except OSError as e:
        raise error(f"{p}: cannot read: {e.strerror or e}") from None


def read_document(path: str | os.PathLike, error: type[Exception] = InputError) -> Any:
    """Parse a JSON or YAML file (chosen by extension; YAML also reads JSON), refusing
    duplicate keys."""
    p = Path(path)
    return parse_document(read_text(p, error), str(p), p.suffix.lower() == ".json", error)


def dump_document(data: Any, path: str | os.PathLike) -> str:
    """Serialise ``data`` as JSON (``.json`` or standard output) or YAML (anything else)."""
    if str(path) == "-" or Path(path).suffix.lower() == ".json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def write_document(data: Any, path: str | os.PathLike) -> None:
    """Write ``data`` as JSON or YAML (by extension), whole or not at all."""
    write_output(path, dump_document(data, path))

"""The one reader of input files, and JSON and YAML documents read strictly; documents are
written through the one output writer (:mod:`liquidsched.io.output`).

Every file liquidsched reads on a user's word (topology, traffic, schedule, machine map, Slurm,
InfiniBand, host file, fabric, selection table, run JSON) comes through :func:`read_bytes`:
a regular file only (a device such as ``/dev/zero`` or a FIFO could be read forever), at most
:func:`max_input_bytes` bytes, and, through :func:`read_text`, UTF-8 text.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from ..errors import InputError
from .output import write_output

#: The largest input file read unless ``LIQUIDSCHED_MAX_INPUT_BYTES`` says otherwise.
DEFAULT_MAX_INPUT_BYTES = 64 * 2**20
MAX_INPUT_VARIABLE = "LIQUIDSCHED_MAX_INPUT_BYTES"
STDIN = "-"

# What a path that is not a regular file is, for the message that refuses it.
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def max_input_bytes(error: type[Exception] = InputError) -> int:
    """The most bytes one input may hold: :data:`DEFAULT_MAX_INPUT_BYTES` (64 MiB), or the
    size the environment variable ``LIQUIDSCHED_MAX_INPUT_BYTES`` gives (units allowed:
    ``200MiB``)."""
    from ..units import parse_size

    text = os.environ.get(MAX_INPUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT_BYTES
    try:
        return parse_size(text)
    except ValueError as e:
        raise error(f"{MAX_INPUT_VARIABLE}: {e}") from None


def _size_text(n: int) -> str:
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} bytes"


def _too_large(where: str, cap: int, size: int | None, error: type[Exception]) -> Exception:
    # Exact byte counts: a rounded "64 MiB, more than 64 MiB" would not say which is larger.
    have = f"{size:,} bytes, " if size is not None else ""
    limit = f"{cap:,} bytes" + (f" ({_size_text(cap)})" if cap >= 2**10 else "")
    return error(f"{where}: {have}more than the {limit} liquidsched reads from one input "
                 f"(set {MAX_INPUT_VARIABLE}, e.g. {MAX_INPUT_VARIABLE}=1GiB, to read more)")


def read_bytes(path: str | os.PathLike, error: type[Exception] = InputError) -> bytes:
    """The bytes of a regular file (``-``: standard input), at most :func:`max_input_bytes`.

    Raises
    ------
    error
        one line naming the path: missing, unreadable, not a regular file (a directory, a
        device, a FIFO, a socket) or larger than the cap.
    """
    cap = max_input_bytes(error)
    if str(path) == STDIN:
        data = sys.stdin.buffer.read(cap + 1)
        if len(data) > cap:
            raise _too_large("standard input", cap, None, error)
        return data
    where = str(path)
    try:
        # Non-blocking, so that opening a FIFO without a writer does not hang before fstat refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except IsADirectoryError:
        raise error(f"{where}: is a directory, not a regular file") from None
    except OSError as e:
        raise error(f"{where}: cannot read: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), None)
            raise error(f"{where}: is {kind}, not a regular file" if kind else f"{where}: not a regular file")
        if info.st_size > cap:
            raise _too_large(where, cap, info.st_size, error)
        chunks, total = [], 0
        # Read to the cap only: a file that grows while it is read is still bounded.
        while total <= cap:
            chunk = os.read(fd, min(cap + 1 - total, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise _too_large(where, cap, None, error)
        return b"".join(chunks)
    except OSError as e:
        raise error(f"{where}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def decode_text(data: bytes, where: str, error: type[Exception] = InputError) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped); anything else is one line
    naming ``where``, the line and the byte offset of the first byte that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise error(f"{where}: not a UTF-8 text file: byte 0x{data[e.start]:02x} at offset {e.start} "
                    f"(line {line}, column {column}) is not UTF-8") from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | os.PathLike, error: type[Exception] = InputError) -> str:
    """The UTF-8 text of a file (``-``: standard input), read by :func:`read_bytes`; a missing,
    unreadable, special, over-large or binary file is one line naming it."""
    where = "standard input" if str(path) == STDIN else str(path)
    return decode_text(read_bytes(path, error), where, error)


class _DuplicateKey(Exception):
    def __init__(self, key: object, line: int | None = None) -> None:
        self.key, self.line = key, line


# libyaml's parser where PyYAML was built with it: a large file loads several times faster than
# by the pure-Python parser. Both construct only plain data (safe), with the same resolver.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictYamlLoader(_SafeLoader):  # type: ignore[misc,valid-type]
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


class _Unusual(Exception):
    """A document that uses what :func:`_load_yaml_events` leaves to the full loader."""


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NO_KEY = object()
#: Deeper than this, a document is refused as the full loader's recursion would refuse it.
_MAX_DEPTH = 900


def _load_yaml_events(text: str) -> Any:
    """Plain YAML built straight from the parser's events, without the node graph PyYAML's
    loader composes first: several times faster and smaller on a large topology (that graph holds
    a node and two marks per scalar). Scalars are resolved and constructed as the safe loader
    does; a key given twice is refused. Anchors, aliases, explicit tags, merge keys and
    non-scalar keys raise :class:`_Unusual`: the full loader reads those."""
    loader = _StrictYamlLoader(text)
    get, resolve, constructors, scalar_node = loader.get_event, loader.resolve, loader.yaml_constructors, yaml.ScalarNode
    tags: dict[str, str] = {}  # a plain scalar's tag depends on its text only
    try:
        get()  # the stream's start
        event = get()
        if isinstance(event, yaml.StreamEndEvent):
            return None
        stack: list[list] = []  # per open collection: [the collection, its pending key]
        result = None
        while True:
            event = get()
            kind = type(event)
            if kind is yaml.ScalarEvent:
                tag, value = event.tag, event.value
                if event.anchor is not None or (tag is not None and tag != "!"):
                    raise _Unusual
                if event.implicit[0] and tag is None:
                    tag = tags.get(value)
                    if tag is None:
                        tag = tags[value] = resolve(scalar_node, value, (True, False))
                else:
                    tag = _STR_TAG
                if tag == _STR_TAG:
                    item = value
                elif tag == _MERGE_TAG or tag not in constructors:
                    raise _Unusual
                else:
                    item = constructors[tag](loader, scalar_node(tag, value))
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                    raise _Unusual
                if len(stack) >= _MAX_DEPTH:
                    raise RecursionError
                stack.append([{} if kind is yaml.MappingStartEvent else [], _NO_KEY])
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                item = stack.pop()[0]
            elif kind is yaml.DocumentEndEvent:
                break
            else:  # an alias
                raise _Unusual
            if not stack:
                result = item
                continue
            top = stack[-1]
            collection = top[0]
            if type(collection) is list:
                collection.append(item)
            elif top[1] is _NO_KEY:
                if isinstance(item, (dict, list)):
                    raise _Unusual
                if item in collection:
                    raise _DuplicateKey(item, event.start_mark.line + 1)
                top[1] = item
            else:
                collection[top[1]] = item
                top[1] = _NO_KEY
        if not isinstance(get(), yaml.StreamEndEvent):
            raise _Unusual  # a second document: the full loader says so
        return result
    finally:
        loader.dispose()


def _load_yaml(text: str) -> Any:
    try:
        return _load_yaml_events(text)
    except _Unusual:
        return yaml.load(text, Loader=_StrictYamlLoader)  # noqa: S506 (a SafeLoader subclass)


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
        return _load_yaml(text)
    except _DuplicateKey as e:
        line = f" at line {e.line}" if e.line else ""
        raise error(f"{where}: key {e.key!r} appears twice in one mapping{line}") from None
    except json.JSONDecodeError as e:
        # json's own message may end where its place begins ("Unterminated string starting at").
        raise error(f"{where}: not valid JSON: {e.msg.removesuffix(' at')} at line {e.lineno}, column {e.colno}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if "nesting depth" in problem:
            # PyYAML 6.0.4 has a depth limit of its own; older ones reach our RecursionError.
            raise error(f"{where}: nested too deeply") from None
        raise error(f"{where}: not valid YAML: {problem}{place}") from None
    except RecursionError:
        raise error(f"{where}: nested too deeply") from None
    except ValueError as e:
        # Python refuses to convert an integer of more digits than its limit (a denial-of-service
        # guard); no field of ours needs one.
        if "integer string conversion" not in str(e):
            raise
        raise error(f"{where}: a number of more than {sys.get_int_max_str_digits():,} digits") from None


def read_document(path: str | os.PathLike, error: type[Exception] = InputError, json_only: bool | None = None) -> Any:
    """Parse a JSON or YAML file read by :func:`read_text` (JSON for a ``.json`` name unless
    ``json_only`` says; YAML also reads JSON), refusing duplicate keys."""
    p = Path(path)
    strict_json = p.suffix.lower() == ".json" if json_only is None else json_only
    return parse_document(read_text(path, error), str(p), strict_json, error)


def writes_json(path: str | os.PathLike) -> bool:
    """Whether :func:`dump_document` writes JSON to ``path`` (``.json`` or standard output)."""
    return str(path) == "-" or Path(path).suffix.lower() == ".json"


def encoded_numbers(values: Any) -> list[str]:
    """Each of ``values`` (an array of integers, or a sequence of numbers :func:`json.dumps`
    encodes) encoded as JSON."""
    if getattr(getattr(values, "dtype", None), "kind", None) in ("i", "u"):
        return list(map(str, values.tolist()))
    return [json.dumps(v) for v in values]


def dump_document(data: Any, path: str | os.PathLike, compact: bool = False) -> str:
    """Serialise ``data`` as JSON (``.json`` or standard output) or YAML (anything else);
    ``compact`` for documents of millions of items: JSON indented down to :data:`INDENTED_DEPTH`
    only, each item below on one line written by the C encoder (indented JSON is written by
    Python's pure-Python encoder, some ten times slower), YAML by libyaml where PyYAML has it."""
    if writes_json(path):
        if not compact:
            return json.dumps(data, indent=2) + "\n"
        parts: list[str] = []
        _json_parts(data, INDENTED_DEPTH, 0, parts)
        parts.append("\n")
        return "".join(parts)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper) if compact else yaml.SafeDumper
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=None, width=100)


#: How deep a compact JSON document is indented: below, a list is written as lines of
#: :data:`ITEMS_PER_LINE` items (a schedule's frames one a line, their pieces and a traffic's
#: transfers a hundred a line).
INDENTED_DEPTH = 2
ITEMS_PER_LINE = 100
_SEPARATORS = (", ", ": ")


class EncodedItems:
    """A list whose items are already encoded as JSON (compactly, ``", "`` and ``": "`` between
    their parts), which a compact JSON document writes as it would write the list: for lists of
    a million items whose every item Python would otherwise make as a dict to encode it."""

    def __init__(self, items: list[str]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)


class EncodedList:
    """A list whose JSON text is written by ``text(level, per_line)`` as a compact JSON
    document writes a list ``level`` levels deep (see :func:`_json_parts`): for lists of
    a million items that the Rust core writes from columns."""

    def __init__(self, text: Callable[[int, int], str]) -> None:
        self.text = text


def encoded_strings(strings: Iterable[str]) -> list[str]:
    """Each of ``strings`` encoded as JSON, as :func:`json.dumps` encodes it."""
    return list(map(json.encoder.encode_basestring_ascii, strings))


def _json_parts(value: Any, depth: int, level: int, out: list[str]) -> None:
    """``value`` as JSON, its mappings and lists indented by two spaces down to ``depth``, and
    a list there written :data:`ITEMS_PER_LINE` items a line, each line by the C encoder;
    appended to ``out`` in parts, joined once at the end (the text of a list of a million items
    is not copied again at each level above it)."""
    if isinstance(value, EncodedList):
        out.append(value.text(level, ITEMS_PER_LINE))
        return
    if isinstance(value, EncodedItems):
        items = value.items
        if level < depth:  # never so deep in the documents written: the items as values, slowly
            _json_parts([json.loads(item) for item in items], depth, level, out)
        elif len(items) <= ITEMS_PER_LINE:
            out.append("[" + ", ".join(items) + "]")
        else:
            lines = [", ".join(items[i:i + ITEMS_PER_LINE]) for i in range(0, len(items), ITEMS_PER_LINE)]
            inner, outer = "  " * (level + 1), "  " * level
            out.append("[\n" + ",\n".join(inner + line for line in lines) + f"\n{outer}]")
        return
    if not isinstance(value, (dict, list)) or not value:
        out.append(json.dumps(value, separators=_SEPARATORS))
        return
    inner, outer = "  " * (level + 1), "  " * level
    if level >= depth:
        if not isinstance(value, list) or len(value) <= ITEMS_PER_LINE:
            out.append(json.dumps(value, separators=_SEPARATORS))
            return
        # A list's items encoded a line at a time: each line is an encoded list without its brackets.
        lines = [json.dumps(value[i:i + ITEMS_PER_LINE], separators=_SEPARATORS)[1:-1]
                 for i in range(0, len(value), ITEMS_PER_LINE)]
        out.append("[\n" + ",\n".join(inner + line for line in lines) + f"\n{outer}]")
        return
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    out.append(f"{opening}\n")
    for i, item in enumerate(value.items() if isinstance(value, dict) else value):
        out.append(",\n" + inner if i else inner)
        if isinstance(value, dict):
            out.append(f"{json.dumps(item[0])}: ")
            item = item[1]
        _json_parts(item, depth, level + 1, out)
    out.append(f"\n{outer}{closing}")


def write_document(data: Any, path: str | os.PathLike, compact: bool = False) -> None:
    """Write ``data`` as JSON or YAML (by extension), whole or not at all (``compact``: see
    :func:`dump_document`)."""
    write_output(path, dump_document(data, path, compact))

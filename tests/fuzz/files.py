"""The classes of hostile files: special files, encodings, document bombs, field values and
random mutations, each in every slot that reads it.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from .cases import GUARDED, Case, Slot, _companions, _file, slots


# --------------------------------------------------------------------------------------------
# The classes of hostile inputs

SPECIAL = ("dev-zero", "dev-null", "dev-urandom", "link-to-dev-zero", "fifo", "directory", "dangling-link",
           "missing", "binary", "sparse-2GiB", "empty", "blank", "stdin-dev-zero", "link-loop", "under-a-file")


def special_files(seed: dict) -> list[Case]:
    """Every special file as every file argument."""
    cases = []
    for slot in slots():
        suffix = Path(seed[slot.seed][0]).suffix
        name = "in" + suffix
        comp = _companions(slot, seed)
        for kind in SPECIAL:
            files, path, stdin, expect = (), "{d}/" + name, "", "error"
            if kind.startswith("dev-"):
                path = "/" + kind.replace("-", "/", 1)
            elif kind == "link-to-dev-zero":
                files = (("in" + suffix, "link", b"/dev/zero"),)
            elif kind == "fifo":
                files = ((name, "fifo", b""),)
            elif kind == "directory":
                files = ((name, "dir", b""),)
            elif kind == "dangling-link":
                files = ((name, "link", ("{d}/nowhere" + suffix).encode()),)
            elif kind == "missing":
                pass
            elif kind == "binary":
                rng = random.Random(len(cases))
                files = (_file(name, bytes(rng.randrange(256) for _ in range(4096))),)
            elif kind == "sparse-2GiB":
                files = ((name, "sparse", str(2 << 30).encode()),)
            elif kind in ("empty", "blank"):
                files = (_file(name, b"" if kind == "empty" else b"\n  \n\t\n"),)
                # An empty machine map renames nothing: valid.
                expect = "any" if slot.reader == "map" else "error"
            elif kind == "stdin-dev-zero":
                path, stdin = "-", "/dev/zero"
            elif kind == "link-loop":
                files = ((name, "link", b"{d}/loop"), ("loop", "link", ("{d}/" + name).encode()))
            elif kind == "under-a-file":
                files, path = (_file("file", b"a file\n"),), "{d}/file/" + name
            if slot.outputs and SPECIAL.index(kind) % 2:
                # Every other input finds the user's own file where the output goes: kept as it was.
                files += tuple(_file(o, b"the user's own bytes\n") for o in slot.outputs)
            cases.append(Case("special-file", f"{slot.reader}:{kind}", slot.make(path), comp + files, expect,
                              slot.outputs, stdin))
    return cases


def _unguarded_slots(seed: dict):
    """Each slot whose command launches nothing, with its seed file's name and bytes and the
    companion files it reads beside them."""
    for slot in slots():
        if slot.argv[0] not in GUARDED:
            yield slot, *seed[slot.seed], _companions(slot, seed)


def encodings(seed: dict) -> list[Case]:
    """Valid files with a UTF-8 BOM or CRLF line ends (valid: text is text), and broken ones:
    invalid UTF-8, UTF-16, a NUL byte, Latin-1."""
    cases = []
    for slot, name, text, comp in _unguarded_slots(seed):
        mid = len(text) // 2
        mid = text.rfind(b"\n", 0, mid) + 1
        variants = {
            "utf8-bom": (b"\xef\xbb\xbf" + text, "valid"),
            "crlf": (text.replace(b"\n", b"\r\n"), "valid"),
            "invalid-utf8": (text[:mid] + b"\xff\xfe\xc3(\n" + text[mid:], "error"),
            "utf16": (text.decode().encode("utf-16"), "error"),
            "nul-byte": (text[:mid] + b"\0" + text[mid:], "error"),
            "latin1": (text[:mid] + "# caf\xe9\n".encode("latin-1") + text[mid:], "error"),
            "truncated": (text[:mid - 1], "any"),
        }
        if slot.seed == "traffic-csv-rows":
            # Columns by their names, in any order.
            rows = [line.split(",") for line in text.decode().splitlines()]
            variants["columns-reordered"] = ("".join(f"{r[1]},{r[0]},{r[2]}\n" for r in rows).encode(), "valid")
            variants["bom-and-crlf"] = (b"\xef\xbb\xbf" + text.replace(b"\n", b"\r\n"), "valid")
        for kind, (content, expect) in variants.items():
            cases.append(Case("encoding", f"{slot.reader}:{kind}", slot.make("{d}/" + name),
                              comp + (_file(name, content),), expect, slot.outputs))
    return cases


def _doc_slots(seed: dict) -> list[Slot]:
    """The slots whose seed is a JSON or YAML document, one per reader and format."""
    chosen, seen = [], set()
    for slot in slots():
        if slot.argv[0] in GUARDED and slot.reader != "selection":
            continue
        name = seed[slot.seed][0]
        fmt = Path(name).suffix
        if fmt in (".json", ".yaml") and (slot.reader, slot.seed) not in seen:
            seen.add((slot.reader, slot.seed))
            chosen.append(slot)
    return chosen


def bombs(seed: dict) -> list[Case]:
    """Deep nesting, billion laughs, recursive aliases, duplicate keys, unsafe tags, huge,
    non-finite and negative numbers, strings where numbers go: as whole documents."""
    cases = []
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
    for slot in _doc_slots(seed):
        name, text = seed[slot.seed]
        is_yaml = name.endswith(".yaml")
        comp = _companions(slot, seed)
        docs = {
            "deep-list": "[" * 200_000 + "]" * 200_000,
            "deep-map": '{"a":' * 100_000 + "1" + "}" * 100_000,
            "huge-number": "1" + "0" * 100_000,
            "number-1e400": "1e400",
            "nan": "NaN" if not is_yaml else ".nan",
            "string": '"abc"',
            "null": "null",
            "list": "[]",
            "map": "{}",
        }
        if is_yaml and slot.reader == "topology":
            # Large but under the 64 MiB cap: read in seconds, not minutes.
            docs["50MB-comment"] = text.decode() + ("# " + "x" * 98 + "\n") * 500_000
            docs["10MB-list"] = text.decode() + "extra: [" + "0, " * 3_000_000 + "0]\n"
        if is_yaml:
            docs.update({
                "billion-laughs": laughs,
                "recursive-alias": "a: &a [*a]\n",
                "recursive-alias-2": "&a\nx: *a\n",
                "unsafe-tag": "!!python/object/apply:os.system ['touch pwned']\n",
                "python-name-tag": "a: !!python/name:os.system\n",
                "deep-block": "".join("  " * i + "a:\n" for i in range(5000)) + "  " * 5000 + "1\n",
                "merge-key": "base: &b {x: 1}\nother:\n  <<: *b\n  <<: *b\n",
                "tab-indent": "a:\n\tb: 1\n",
            })
        else:
            docs.update({
                "infinity": "Infinity",
                "trailing-garbage": text.decode() + "\n}}}",
                "two-documents": text.decode() + text.decode(),
                "single-quotes": text.decode().replace('"', "'"),
            })
        # Duplicate keys: the first key of the document repeated with another value.
        first = re.search(rb'^\s*\{?\s*"?([A-Za-z_]+)"?\s*:', text, re.M)
        if first:
            key = first.group(1).decode()
            if is_yaml:
                docs["duplicate-top-key"] = text.decode() + f"{key}: null\n"
            else:
                docs["duplicate-top-key"] = text.decode().replace("{", "{" + f'"{key}": null, ', 1)
        for kind, doc in docs.items():
            expect = "any" if kind == "50MB-comment" else "error"  # valid, but must not take minutes
            cases.append(Case("document-bomb", f"{slot.reader}{Path(name).suffix}:{kind}", slot.make("{d}/" + name),
                              comp + (_file(name, doc),), expect, slot.outputs))
    return cases


#: Values put in a document's numeric fields: certainly wrong, or legitimate in some place.
FIELD_BAD_NUMBER = ["nan", "inf", "-inf", "-1", "1e400", '"abc"', "null", "[]", "{}", "true", '""']
FIELD_ODD_NUMBER = ["0", "-0", "1e308", "1e-300", "1" + "0" * 30, "9007199254740993", '"1MB"', '"1e3"', "0.5"]
FIELD_ODD_STRING = ["null", "5", "[]", "{}", '""', '"\\u0000"', '"' + "x" * 10_000 + '"', "true"]


def _leaves(doc, prefix=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:2]):  # the first two items of a list stand for all
            yield from _leaves(v, prefix + (i,))
    else:
        yield prefix, doc


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def field_values(seed: dict) -> list[Case]:
    """Every numeric and string field of every JSON document reader replaced by awkward values.

    Only topology and traffic fields are held to ``error`` for a certainly wrong number: a
    schedule or a selection table carries fields a reader may ignore."""
    cases = []
    for slot in _doc_slots(seed):
        name, text = seed[slot.seed]
        if not name.endswith(".json"):
            continue
        comp = _companions(slot, seed)
        doc = json.loads(text)
        strict = slot.reader in ("topology", "topology-json", "traffic")
        marker = "\x00FUZZ\x00"
        for path, value in _leaves(doc):
            if isinstance(value, bool):
                continue
            if isinstance(value, (int, float)):
                values = [(v, "error" if strict else "any") for v in FIELD_BAD_NUMBER]
                values += [(v, "any") for v in FIELD_ODD_NUMBER]
            elif isinstance(value, str):
                values = [(v, "any") for v in FIELD_ODD_STRING]
            else:
                continue
            copy = json.loads(text)
            _set(copy, path, marker)
            template = json.dumps(copy)
            where = "/".join(str(p) for p in path)
            group = f"{slot.reader}:{re.sub(r'[0-9]+', 'N', where)}"
            for raw, expect in values:
                content = template.replace(json.dumps(marker), raw)
                cases.append(Case("field-value", group, slot.make("{d}/" + name), comp + (_file(name, content),),
                                  expect, slot.outputs))
            # The field left out (a transfer without size_bytes is not 1 MB).
            if isinstance(path[-1], str):
                copy = json.loads(text)
                parent = copy
                for key in path[:-1]:
                    parent = parent[key]
                del parent[path[-1]]
                cases.append(Case("field-value", group + ":missing", slot.make("{d}/" + name),
                                  comp + (_file(name, json.dumps(copy)),), "any", slot.outputs))
    return cases


def _mutate_text(text: str, rng: random.Random) -> str:
    alphabet = "{}[]:,-\"'#&*!|>\n\t 0123456789.eE+xyzé\u2028\ufeff"
    noise = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
    if not text:
        return noise
    a = rng.randrange(len(text))
    b = min(len(text), a + rng.randint(1, 40))
    action = rng.choice(["delete", "repeat", "replace", "insert", "swap-lines"])
    if action == "delete":
        return text[:a] + text[b:]
    if action == "repeat":
        return text[:b] + text[a:b] + text[b:]
    if action == "replace":
        return text[:a] + noise + text[b:]
    if action == "swap-lines":
        lines = text.splitlines(keepends=True)
        if len(lines) > 2:
            i = rng.randrange(len(lines) - 1)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        return "".join(lines)
    return text[:a] + noise + text[a:]


def mutations(seed: dict, per_slot: int) -> list[Case]:
    """Random text mutations (deleted, repeated, replaced spans; swapped lines) of every seed in
    every slot that reads it: may stay valid, so any status, but never a crash."""
    cases = []
    for slot, name, text, comp in _unguarded_slots(seed):
        rng = random.Random(f"{slot.reader}{slot.argv}")
        for _ in range(per_slot):
            mutated = text.decode()
            for _ in range(rng.randint(1, 3)):
                mutated = _mutate_text(mutated, rng)
            cases.append(Case("mutation", slot.reader, slot.make("{d}/" + name),
                              comp + (_file(name, mutated.encode("utf-8", "surrogatepass")),), "any", slot.outputs))
    return cases

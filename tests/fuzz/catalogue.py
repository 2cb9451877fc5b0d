"""Every class of hostile input gathered (:func:`all_cases`), the inputs named one by one
(:data:`NAMED`), and the fast part's deterministic sample.
"""

from __future__ import annotations

import random
from collections import defaultdict

from .cases import Case, seeds
from .files import bombs, encodings, field_values, mutations, special_files
from .options import closed_pipes, hostfiles_and_maps, option_numbers, option_parsing, output_paths, specs


def all_cases(mutations_per_slot: int = 30) -> dict[str, list[Case]]:
    """Every class of hostile input → its distinct cases (first of equal inputs kept)."""
    seed = seeds()
    classes = {
        "special-file": special_files(seed),
        "encoding": encodings(seed),
        "document-bomb": bombs(seed),
        "field-value": field_values(seed),
        "option-number": option_numbers(),
        "spec": specs(),
        "hostfile-map": hostfiles_and_maps(),
        "output-path": output_paths(),
        "option-parse": option_parsing(),
        "mutation": mutations(seed, mutations_per_slot),
        "closed-pipe": closed_pipes(seed),
    }
    seen: set[str] = set()
    out = {}
    for cls, cases in classes.items():
        out[cls] = []
        for case in cases:
            k = case.key()
            if k not in seen:
                seen.add(k)
                out[cls].append(case)
    return out


#: The hostile inputs issue 27 names, and one of each kind the long part found since: each a
#: class, a group prefix, words its command line holds in a row, and bytes one of its files holds.
NAMED: list[tuple[str, str, tuple[str, ...], bytes]] = [
    ("spec", "complete", ("complete:n=4,bandwidth_Bps=0",), b""),
    ("spec", "star", ("star:n=4,bandwidth_Bps=0B/s",), b""),
    ("spec", "chain", ("chain:n=4,bandwidth_Bps=0",), b""),
    ("option-number", "plan --overhead", ("weighted", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("ggp", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("oggp", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("solstice", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("ggp", "--overhead", "1ms"), b""),
    ("option-number", "plan --time-limit", ("--time-limit", "1ms"), b""),
    ("option-number", "pmpi-config --latency", ("--latency", "1ms"), b""),
    ("option-number", "plan --packet-bytes", ("--packet-bytes", "1"), b""),
    ("option-number", "run --repeats", ("--repeats", "0"), b""),
    ("option-number", "plan --time-limit", ("--time-limit=--",), b""),
    ("option-number", "simulate --window", ("--window", "99999999999999999999"), b""),
    ("special-file", "map:binary", ("--map",), b""),
    ("hostfile-map", "hostfile", ("pmpi-config",), b"t1:99999999999\n"),
    ("hostfile-map", "hostfile", ("pmpi-config",), b"t1 slots=99999999999\n"),
    ("hostfile-map", "map", ("hostfile",), b"t1 m\0"),
    ("special-file", "topology:dev-zero", ("bound",), b""), ("special-file", "traffic:dev-zero", ("bound",), b""),
    ("special-file", "schedule:dev-zero", ("check",), b""), ("special-file", "map:dev-zero", ("hostfile",), b""),
    ("special-file", "slurm:dev-zero", ("bound",), b""), ("special-file", "infiniband:dev-zero", ("bound",), b""),
    ("special-file", "hostfile:dev-zero", ("pmpi-config",), b""),
    ("special-file", "selection:link-loop", ("launch",), b""),
    ("spec", "crossbar", ("crossbar:n=4,n=5",), b""), ("spec", "complete", ("complete:n=4,n=5",), b""),
    ("spec", "traffic scatter", ("scatter:root=",), b""),
    ("encoding", "traffic:utf8-bom", ("bound",), b""), ("encoding", "traffic:columns-reordered", ("bound",), b""),
    ("encoding", "topology-xml:utf8-bom", ("bound",), b""),
    ("spec", "steady reduce", ("steady", "reduce", "--topology", "complete:n=4"), b""),
    ("spec", "steady --participants", ("--participants", ""), b""),
    ("spec", "pmpi-config --hosts", ("--hosts", ""), b""), ("spec", "run --launcher", ("--launcher", "/tmp"), b""),
    ("output-path", "plan:empty", ("plan",), b""), ("output-path", "plan:dangling-link", ("plan",), b"target.json"),
    ("output-path", "plan:dangling-link-missing-dir", ("plan",), b""),
    ("output-path", "plan:trailing-slash", ("plan",), b""),
    ("closed-pipe", "topology", ("fat-tree:k=12",), b""),
    ("document-bomb", "topology.yaml:huge-number", ("bound",), b""),
    ("document-bomb", "topology.yaml:10MB-list", ("bound",), b""),
    ("document-bomb", "topology.yaml:deep-list", ("bound",), b""),
    ("document-bomb", "run-json.json:null", ("report",), b""),
    ("field-value", "run-json:modes/N/mode:missing", ("report",), b""),
    ("field-value", "selection:sizes/N/best", ("run",), b'"best": []'),
]


def _holds(argv: tuple[str, ...], words: tuple[str, ...]) -> bool:
    n = len(words)
    return any(argv[i:i + n] == words for i in range(len(argv) - n + 1))


def named(classes: dict[str, list[Case]]) -> list[Case]:
    """The first case of each entry of :data:`NAMED` (an entry that matches none is an error)."""
    out = []
    for cls, group, words, content in NAMED:
        match = next((c for c in classes[cls] if c.group.startswith(group) and _holds(c.argv, words)
                      and (not content or any(content in f[2] for f in c.files))), None)
        if match is None:
            raise LookupError(f"no {cls} input {group} with {words} {content!r}")
        out.append(match)
    return out


def sample(classes: dict[str, list[Case]], per_class: dict[str, int] | int) -> dict[str, list[Case]]:
    """A deterministic sample: in each class, groups taken in turn (so every reader and command
    of the class appears), each group's cases in a seeded shuffle."""
    out = {}
    for cls, cases in classes.items():
        n = per_class if isinstance(per_class, int) else per_class.get(cls, 0)
        groups: dict[str, list[Case]] = defaultdict(list)
        for case in cases:
            groups[case.group.partition(":")[0]].append(case)
        for g, members in groups.items():
            random.Random(f"{cls}/{g}").shuffle(members)
        order = sorted(groups)
        chosen: list[Case] = []
        i = 0
        while len(chosen) < n and any(i < len(groups[g]) for g in order):
            for g in order:
                if i < len(groups[g]) and len(chosen) < n:
                    chosen.append(groups[g][i])
            i += 1
        out[cls] = chosen
    return out

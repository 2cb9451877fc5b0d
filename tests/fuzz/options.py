"""The classes of hostile command lines: numbers in options, specs, host files and maps, output
paths, option parsing, and closed pipes.
"""

from __future__ import annotations

from .cases import GUARDED, Case, _file


# --------------------------------------------------------------------------------------------
# The classes of hostile inputs (continued): options and command lines

# Numbers in options. kind: size, time, count, rate, window, flops, share.
BAD_NUMBERS = ["", "abc", "nan", "NaN", "inf", "-inf", "-1", "1e400", "1..2", "--", "1 2"]
ODD_NUMBERS = ["0", "-0", "1e308", "1e-300", "99999999999999999999", "1ms", "4KiB", "1_000", "0x10", " 1", "1e3",
               "1.5"]
VALID_BY_KIND = {"time": {"1ms"}, "size": {"4KiB"}}
#: Options where a valid-looking value may still be refused for what it means (a period below
#: the optimum): any status for those.
NOT_ALWAYS_VALID = {"--fixed-period"}

NUMERIC_OPTIONS: list[tuple[tuple[str, ...], str, str, tuple[str, ...]]] = [
    # (base argv, option, kind, outputs)
    (("bound", "--topology", "two-switch"), "--size", "size", ()),
    (("bound", "--topology", "swiss-t1"), "--alloc", "alloc", ()),
    (("plan", "--topology", "two-switch"), "--size", "size", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "random"), "--seed", "seed", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "liquid"), "--time-limit", "time", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "liquid"), "--node-limit", "count", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "shuffle"), "--packet-bytes", "size", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "shuffle"), "--window", "window", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--algorithm", "ggp"), "--overhead", "time", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--traffic", "random:seed=1,density=0.7", "--algorithm", "weighted"),
     "--overhead", "time", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--algorithm", "oggp"), "--overhead", "time", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--algorithm", "solstice"), "--overhead", "time", ()),
    (("simulate", "--topology", "two-switch", "--algorithm", "round-robin"), "--overhead", "time", ()),
    (("simulate", "--topology", "two-switch", "--algorithm", "round-robin", "--model", "fluid", "--policy", "window"),
     "--window", "window", ()),
    (("simulate", "--topology", "two-switch", "--algorithm", "round-robin"), "--size", "size", ()),
    (("hostfile", "--topology", "two-switch"), "--size", "size", ()),
    (("report", "--topology", "two-switch", "--output", "{d}/r.html"), "--size", "size", ("r.html",)),
    (("steady", "scatter", "--topology", "complete:n=4"), "--message-bytes", "size", ()),
    (("steady", "scatter", "--topology", "complete:n=4"), "--operations", "count", ()),
    (("steady", "scatter", "--topology", "complete:n=4"), "--fixed-period", "time", ()),
    (("steady", "reduce", "--topology", "complete:n=4"), "--task-flops", "flops", ()),
    (("pmpi-config", "--topology", "two-switch", "--output", "{d}/fabric.out"), "--latency", "time", ("fabric.out",)),
    # Commands that launch: only what they must refuse.
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--repeats", "count", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--warmup", "count", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--timeout", "time", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--size", "size", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin", "--emulate"), "--time-scale", "count", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin", "--emulate"), "--queue-bytes", "size", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--sizes", "size", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--pace-headroom", "share", ()),
    (("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--output", "{d}/t.json"), "--sizes", "size",
     ()),
    (("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--sizes", "1KiB",
      "--output", "{d}/t.json"), "--repeats", "count", ()),
    (("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--sizes", "1KiB",
      "--output", "{d}/t.json"), "--pace-headroom", "share", ()),
    (("calibrate", "--topology", "two-switch"), "--repeats", "count", ()),
    (("calibrate", "--topology", "two-switch"), "--packet-bytes", "size", ()),
    (("calibrate", "--topology", "two-switch"), "--timeout", "time", ()),
    (("launch", "--topology", "two-switch"), "--timeout", "time", ()),
    (("netem", "up", "--topology", "two-switch"), "--time-scale", "count", ()),
    (("netem", "up", "--topology", "two-switch"), "--queue-packets", "count", ()),
]


def option_numbers() -> list[Case]:
    """Every number option of every command given numbers in every awkward form."""
    cases = []
    for base, option, kind, outs in NUMERIC_OPTIONS:
        guarded = base[0] in GUARDED
        values = [(v, "error") for v in BAD_NUMBERS]
        if not guarded:
            values += [(v, "valid" if v in VALID_BY_KIND.get(kind, ()) and option not in NOT_ALWAYS_VALID else "any")
                       for v in ODD_NUMBERS]
        elif kind == "count" and option in ("--repeats", "--time-scale", "--queue-packets"):
            values.append(("0", "error"))
        if option == "--packet-bytes" and not guarded:
            values += [("1", "error"), ("1B", "error")]  # 25 M packets: refused up front
        for value, expect in values:
            argv = base + (option, value)
            if base[0] == "launch":
                argv += ("--", "true")
            cases.append(Case("option-number", f"{base[0]} {option}", argv, (), expect, outs))
            if value and not value.startswith("-"):
                continue
            # A value that looks like an option, given as --option=VALUE.
            argv = base + (f"{option}={value}",) + (("--", "true") if base[0] == "launch" else ())
            cases.append(Case("option-number", f"{base[0]} {option}", argv, (), expect, outs))
    return cases


TOPOLOGY_PARAMS = {
    "two-switch": ["capacity_Bps"], "swiss-t1": ["capacity_Bps", "allocation"],
    "hierarchical": ["d1", "d2", "c1", "c2", "shared_uplinks", "buffer"],
    "fat-tree": ["k", "capacity_Bps", "oversubscription", "hosts_per_edge", "routing"],
    "torus": ["dims", "capacity_Bps", "hosts_per_router", "wrap"], "mesh": ["dims", "capacity_Bps", "hosts_per_router"],
    "crossbar": ["n", "capacity_Bps"], "backbone": ["n1", "n2", "card_Bps", "backbone_Bps"],
    "random": ["switches", "hosts", "extra_cables", "seed", "capacity_Bps", "heterogeneous", "shared"],
    "rail-optimised": ["servers", "gpus", "nic_Bps", "nvlink_Bps", "oversubscription", "spines", "pxn"],
    "two-tier": ["servers", "gpus", "servers_per_leaf", "nic_Bps", "internal_Bps", "oversubscription", "spines"],
    "dragonfly": ["a", "p", "h", "g", "capacity_Bps", "global_Bps"],
}
PLATFORM_PARAMS = {"complete": ["n", "bandwidth_Bps", "speed_flops"], "star": ["n", "bandwidth_Bps", "speed_flops"],
                   "chain": ["n", "bandwidth_Bps", "speed_flops"],
                   "tiers": ["nodes", "density", "extra_wan", "seed", "rate_scale"]}
SPEC_BAD = ["", "abc", "nan", "inf", "-1", "-inf", "1e400"]
SPEC_ODD = ["0", "-0", "1e308", "1e-300", "0B/s", "1e-300B/s", "99999999999", "1ms", "4KiB", "true", "1.5", "2,3"]
TRAFFIC_SPECS = {
    "scatter": {"root": ["", "nope", "s1", "r1"]}, "gather": {"root": ["", "nope", "s1"]},
    "random": {"seed": SPEC_BAD + ["0", "99999999999999999999"], "density": SPEC_BAD + ["0", "2", "1e-300"]},
    "permutation": {"seed": SPEC_BAD}, "skewed": {"seed": SPEC_BAD, "alpha": SPEC_BAD + ["0", "1e308"]},
    "half-all-to-all": {"include_self": ["", "maybe", "1"]},
    "moe": {"tokens": SPEC_BAD + ["0"], "imbalance": SPEC_BAD + ["0.5", "1e308"], "skew": ["", "nope", "zipf"],
            "experts": SPEC_BAD + ["0", "3"], "top_k": SPEC_BAD + ["0", "1000"]},
    "matrix": {"file": ["", "nope.csv"], "total": SPEC_BAD + ["0"], "step": SPEC_BAD + ["5"]},
}


def specs() -> list[Case]:
    """Built-in topologies, platforms and traffic generators with bad, repeated, unknown and
    empty parameters, and fabric specs without their files."""
    cases = []

    def add(group: str, argv: tuple[str, ...], expect: str) -> None:
        cases.append(Case("spec", group, argv, (), expect))

    for builders, command in ((TOPOLOGY_PARAMS, ("bound", "--topology")),
                              (PLATFORM_PARAMS, ("steady", "scatter", "--topology"))):
        for name, params in builders.items():
            for p in params:
                for v in SPEC_BAD:
                    add(f"{name}", command + (f"{name}:{p}={v}",), "error")
                for v in SPEC_ODD:
                    add(f"{name}", command + (f"{name}:{p}={v}",), "any")
            p = params[0]
            add(name, command + (f"{name}:{p}=4,{p}=5",), "error")
            add(name, command + (f"{name}:nope=1",), "error")
            add(name, command + (f"{name}:{p}",), "error")
            add(name, command + (f"{name}:=4",), "error")
            add(name, command + (f"{name}:{p}=4,",), "any")
            add(name, command + (f"{name}:,,",), "any")
            add(name, command + (f"{name}:",), "any")
            add(name, command + (f"{name.upper()}",), "any")
    for rate in ("bandwidth_Bps=0", "bandwidth_Bps=0B/s"):
        for name in ("complete", "star", "chain"):
            for what in ("scatter", "all-to-all", "reduce"):
                add(name, ("steady", what, "--topology", f"{name}:n=4,{rate}", "--task-flops", "1Mflop"), "error")
    for name, params in TRAFFIC_SPECS.items():
        for p, values in params.items():
            for v in values:
                expect = "error" if v in SPEC_BAD or v == "nope" or p == "include_self" and v != "1" else "any"
                add(f"traffic {name}", ("bound", "--topology", "two-switch", "--traffic", f"{name}:{p}={v}"), expect)
        add(f"traffic {name}", ("bound", "--topology", "two-switch", "--traffic", f"{name}:nope=1"), "error")
    for v in ("4,4,0,0,9", "-1", "99999999999", ",", "", "a,b", "0,0,0,0,0,0,0,0", "4", "1e3,4", "4,,4",
              "5,5,5,5,5,5,5,5"):
        add("alloc", ("bound", "--topology", "swiss-t1", "--alloc", v), "any" if v == "4" else "error")
    for spec in ("slurm:", "slurm:,hosts=1GB/s", "slurm:{d}/none.conf", "infiniband:", "infiniband:a",
                 "infiniband:a,b,c", "slurm:/dev/zero,hosts=1GB/s,hosts=2GB/s", ":", "", "-", "./", "two-switch:",
                 "nope", "slurm:/dev/null,speed=1"):
        add("fabric spec", ("bound", "--topology", spec), "any" if spec == "two-switch:" else "error")
    for option, values in (("--participants", ("", ",", "nope", "P0,P0", "P0")), ("--source", ("", "nope", "P9")),
                           ("--target", ("", "nope"))):
        what = "reduce" if option == "--target" else "scatter"
        for v in values:
            add(f"steady {option}", ("steady", what, "--topology", "complete:n=4", "--task-flops", "1Mflop", option, v),
                "any" if v in ("P0,P0", "P0") else "error")
    for v in ("", ",", "nope", "t1,nope", "t1,,r1"):
        add("pmpi-config --hosts", ("pmpi-config", "--topology", "two-switch", "--hosts", v, "--output", "-"), "error")
        add("calibrate --hosts", ("calibrate", "--topology", "two-switch", "--hosts", v), "error")
    for command in (("run", "--algorithm", "round-robin"), ("calibrate",),
                    ("tune", "--algorithm", "round-robin", "--sizes", "1KiB", "--output", "-")):
        for v in ("/tmp", "", "{d}/none", "/dev/null", "relative/none"):
            add(f"{command[0]} --launcher", command + ("--topology", "two-switch", "--launcher", v), "error")
    add("launch --launcher", ("launch", "--topology", "two-switch", "--launcher", "/tmp", "--", "true"), "error")
    # The input cap's variable: a bad value is an error naming it, not the default.
    for v in ("abc", "-1", "inf", "nan", "1e400", "0", "1ms", "99999999999999999999999GiB"):
        cases.append(Case("spec", "env LIQUIDSCHED_MAX_INPUT_BYTES", ("check", "{d}/s.json"),
                          (_file("s.json", b"{}"),), "error", (), "", (("LIQUIDSCHED_MAX_INPUT_BYTES", v),)))
    # alltoallv-scattered-0 is a mode (MPICH posts every message at once), so it is not here.
    for v in ("", "nope", "frames,nope", ",", "alltoallv-scattered-x", "alltoallv-scattered--1"):
        add("run --modes", ("run", "--topology", "two-switch", "--algorithm", "round-robin", "--modes", v), "error")
    add("steady reduce", ("steady", "reduce", "--topology", "complete:n=4"), "error")
    add("sweep", ("sweep", "--topology", "two-switch", "--output", "-"), "error")  # no host both sends and receives
    return cases


def hostfiles_and_maps() -> list[Case]:
    """Host files for pmpi-config, Slurm topology.conf files and machine maps for hostfile, line
    by line."""
    cases = []
    hostfile_lines = ["t1:99999999999", "t1 slots=99999999999", "t1:0", "t1:-1", "t1 slots=0", "t1 slots=-1",
                      "t1 slots=abc", "t1:abc", "t1:", ":4", "nope", "nope:2", "t1:1:2", "t1 slots=1e3",
                      "t1 slots=2 slots=3", "t1 slots", "t1 foo=2", "t1:1e308", "t1:nan", "t1:inf", "t1 slots=nan",
                      "t1:4294967297", "t1:" + "9" * 400, "t1" * 5000, "\0", "t1\0:2", "t1:2 # comment", "# only",
                      "t1 \t slots=2", "T1", "t1.local"]
    for line in hostfile_lines:
        expect = "any" if line in ("t1:2 # comment", "t1 \t slots=2", "# only", "t1 slots=1e3") else "error"
        if line == "# only":
            expect = "error"  # no ranks
        cases.append(Case("hostfile-map", "hostfile", (
            "pmpi-config", "--topology", "two-switch", "--hostfile", "{d}/hosts.txt", "--output", "{d}/fabric.out"),
            (_file("hosts.txt", line + "\n"),), expect, ("fabric.out",)))
    # Slurm topology.conf lines: hostlists that expand without end, rates, cycles, repeats.
    conf = [("SwitchName=s1 Nodes=n[1-99999999999]", "error"), ("SwitchName=s1 Nodes=n[0-9999999]", "error"),
            ("SwitchName=s1 Nodes=n[1-4],m[1-99999999]", "error"), ("SwitchName=s1 Nodes=n[4-1]", "error"),
            ("SwitchName=s1 Nodes=n[1-3,]", "error"), ("SwitchName=s1 Nodes=n[1-", "error"),
            ("SwitchName=s1 Nodes=n[]", "error"), ("SwitchName=s1 Nodes=n[a-c]", "error"),
            ("SwitchName=s1 Nodes=", "error"), ("SwitchName= Nodes=n1", "error"), ("Nodes=n1", "error"),
            ("SwitchName=s1 Switches=s1", "error"), ("SwitchName=s1 Switches=s2\nSwitchName=s2 Switches=s1", "error"),
            ("SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2", "error"),
            ("SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n1", "error"),
            ("SwitchName=s1 Nodes=n[1-4] LinkSpeed=nan", "any"), ("SwitchName=s1 Nodes=n[1-4] LinkSpeed=-1", "any"),
            ("SwitchName=s1 Nodes=n[1-4] LinkSpeed=1e400", "any"), ("SwitchName=s1 Nodes=n[1-4] Nodes=m1", "error"),
            ("SwitchName=s1 Nodes=n[1-4] \\", "any"), ("SwitchName=s1 Nodes=n[1-4] Bogus=1", "any"),
            ("SwitchName=s1 Nodes=n[1-4]\nSwitchName=r Switches=s1,nope", "error"),
            ("SwitchName=s1 Nodes=n[" + "1" * 400 + "-" + "2" * 400 + "]", "error"),
            ("SwitchName=s1 Nodes=n[1-4]", "valid")]
    for text, expect in conf:
        for rates in (",hosts=1GB/s,switches=10GB/s", ",hosts=0B/s,switches=10GB/s", ",hosts=1GB/s"):
            e = expect if rates.startswith(",hosts=1GB/s,") else "any" if expect == "valid" else expect
            if rates == ",hosts=0B/s,switches=10GB/s":
                e = "error"
            argv = ("bound", "--topology", "slurm:{d}/t.conf" + rates)
            cases.append(Case("hostfile-map", "slurm topology.conf", argv, (_file("t.conf", text + "\n"),), e))
    map_lines = ["t1 m1", "nope m1", "t1", "t1 m1 extra", "t1 m1\nt1 m2", "t1 m1\nt2 m1", " m1", "t1 " + "m" * 100_000,
                 "t1 m1 # c", "# c", "t1\tm1", "t1 m\0", "t1 -oProxyCommand=x", "t1 m:1", "t1 m slots=3", "T1 m1",
                 "t1 \u00e9", "\ufefft1 m1", "t1 m1\r", "t1\u00a0m1"]
    for line in map_lines:
        # A machine name may be odd (long, a colon, a leading dash) and still be a name.
        expect = "any" if line in ("t1 m1", "t1 m1 # c", "# c", "t1\tm1", "t1 \u00e9", "\ufefft1 m1", "t1 m1\r",
                                   "t1 m1\nt2 m1", "t1 " + "m" * 100_000, "t1 -oProxyCommand=x", "t1 m:1",
                                   "t1\u00a0m1") else "error"
        for fmt in ("hydra", "openmpi", "slurm"):
            cases.append(Case("hostfile-map", "map", (
                "hostfile", "--topology", "two-switch", "--format", fmt, "--map", "{d}/machines.txt"),
                (_file("machines.txt", line + "\n"),), expect))
    return cases


OUTPUT_COMMANDS = [
    # (argv with {O}, option is --output/--plot/..., what a success writes)
    ("plan", ("plan", "--topology", "two-switch", "--output", "{O}")),
    ("plan --plot", ("plan", "--topology", "two-switch", "--plot", "{O}")),
    ("sweep", ("sweep", "--topology", "hierarchical:d1=2,d2=2", "--output", "{O}")),
    ("topology export", ("topology", "export", "two-switch", "--output", "{O}")),
    ("pmpi-config", ("pmpi-config", "--topology", "two-switch", "--output", "{O}")),
    ("hostfile", ("hostfile", "--topology", "two-switch", "--output", "{O}")),
    ("steady", ("steady", "scatter", "--topology", "star:n=4", "--output", "{O}")),
    ("report", ("report", "--topology", "two-switch", "--output", "{O}")),
    ("simulate --plot", ("simulate", "--topology", "two-switch", "--algorithm", "round-robin", "--plot", "{O}")),
    ("tune", ("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--sizes", "1KiB", "--output", "{O}")),
    ("run", ("run", "--topology", "two-switch", "--algorithm", "round-robin", "--output", "{O}")),
    ("run --timeline", ("run", "--topology", "two-switch", "--algorithm", "round-robin", "--timeline", "{O}")),
]


def output_paths() -> list[Case]:
    """Output paths that cannot be written (error, nothing written, nothing of the user's
    touched), and paths that can (written through a link, never replacing it)."""
    cases = []
    for group, argv in OUTPUT_COMMANDS:
        guarded = argv[0] in GUARDED
        ext = (".png" if "--plot" in argv else ".html" if argv[0] == "report" else ".txt" if argv[0] == "hostfile"
               else ".fabric" if argv[0] == "pmpi-config" else ".json")
        bad = {
            "empty": ("", (), "error"),
            "directory": ("{d}/dir" + ext, (("dir" + ext, "dir", b""),), "error"),
            "dot": (".", (), "error"),
            "missing-dir": ("{d}/no/such/out" + ext, (), "error"),
            "under-a-file": ("{d}/file/out" + ext, (_file("file", b"user's file\n"),), "error"),
            # A full device takes the open and refuses the write only: a command that measures
            # first cannot know before it has run.
            "dev-full": ("{d}/full", (("full", "full", b""),), "any" if guarded else "error"),
            "dangling-link-missing-dir": ("{d}/link" + ext, (("link" + ext, "link", b"{d}/no/such/target"),), "error"),
            "trailing-slash": ("{d}/out" + ext + "/", (), "error"),
            "link-loop": ("{d}/link" + ext, (("link" + ext, "link", b"{d}/loop"),
                                             ("loop", "link", ("{d}/link" + ext).encode())), "error"),
            "long-name": ("{d}/" + "x" * 300 + ext, (), "error"),
            "control-character": ("{d}/a\x01b" + ext, (), "any"),
        }
        if "--plot" in argv:
            bad["plot-extension"] = ("{d}/plot.txt", (), "error")
            bad["plot-no-extension"] = ("{d}/plot", (), "error")
        for kind, (path, files, expect) in bad.items():
            if guarded and expect != "error" and kind != "dev-full":
                continue
            argv_out = tuple(w.replace("{O}", path) for w in argv)
            outs = (path[len("{d}/"):],) if expect == "any" else ()
            cases.append(Case("output-path", f"{group}:{kind}", argv_out, files, expect, outs))
        if guarded:
            continue
        good = {
            "dangling-link": ("{d}/link" + ext, (("link" + ext, "link", ("{d}/target" + ext).encode()),),
                              ("target" + ext,)),
            "link-to-file": ("{d}/link" + ext, (("link" + ext, "link", ("{d}/target" + ext).encode()),
                                                _file("target" + ext, b"old\n")), ("target" + ext,)),
            **({} if "--plot" in argv else {"dev-null": ("{d}/null", (("null", "null", b""),), ())}),
            "existing-file": ("{d}/out" + ext, (_file("out" + ext, b"old\n"),), ("out" + ext,)),
        }
        for kind, (path, files, outs) in good.items():
            argv_out = tuple(w.replace("{O}", path) for w in argv)
            cases.append(Case("output-path", f"{group}:{kind}", argv_out, files, "valid", outs))
        # The user's file and a failing input: kept as it was.
        for kind, (path, files) in {
            "user-file": ("{d}/mine" + ext, (_file("mine" + ext, b"the user's own bytes\n"),)),
            "user-link": ("{d}/link" + ext, (("link" + ext, "link", ("{d}/mine" + ext).encode()),
                                             _file("mine" + ext, b"the user's own bytes\n"))),
        }.items():
            failing = [w.replace("{O}", path) for w in argv]
            at = failing.index("--topology") + 1 if "--topology" in failing else failing.index("two-switch")
            failing[at] = "star:n=4,n=5" if argv[0] == "steady" else "crossbar:n=4,n=5"  # a key given twice
            failing = tuple(failing)
            cases.append(Case("output-path", f"{group}:{kind}+bad-topology", failing, files, "error"))
    return cases


PARSE_BASES = {
    "topology": ("topology", "show", "two-switch"), "bound": ("bound", "--topology", "two-switch"),
    "plan": ("plan", "--topology", "two-switch"), "simulate": ("simulate", "--topology", "two-switch"),
    "check": ("check", "{d}/s.json"), "sweep": ("sweep", "--topology", "two-switch", "--output", "-"),
    "steady": ("steady", "scatter", "--topology", "star:n=4"), "hostfile": ("hostfile", "--topology", "two-switch"),
    "pmpi-config": ("pmpi-config", "--topology", "two-switch", "--output", "-"),
    "report": ("report", "--topology", "two-switch", "--output", "-"),
    "run": ("run", "--topology", "two-switch", "--algorithm", "round-robin"),
    "tune": ("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--sizes", "1KiB", "--output", "-"),
    "calibrate": ("calibrate", "--topology", "two-switch"), "launch": ("launch", "--topology", "two-switch"),
    "netem": ("netem", "status"),
}
CHOICES = {"plan": ["--algorithm", "--permutation"], "simulate": ["--model", "--policy", "--backend", "--algorithm"],
           "hostfile": ["--format"], "run": ["--progress", "--buffers", "--tcp", "--algorithm"],
           "tune": ["--buffers", "--tcp"], "topology": [], "launch": ["--buffers", "--tcp"]}


def option_parsing() -> list[Case]:
    """Unknown options, missing values, bad choices, missing required options, stray words."""
    cases = [Case("option-parse", "main", (), (), "error"), Case("option-parse", "main", ("nope",), (), "error"),
             Case("option-parse", "main", ("--nope",), (), "error"),
             Case("option-parse", "main", ("-x", "plan"), (), "error")]
    for command, base in PARSE_BASES.items():
        tail = ("--", "true") if command == "launch" else ()
        words = base[:2] if command in ("topology", "steady") else base[:1]
        add = lambda argv, e="error": cases.append(Case("option-parse", command, argv, (), e))  # noqa: E731
        add(base + ("--nope",) + tail)
        add(base + ("--nope=1",) + tail)
        add(base + ("-z",) + tail)
        add(base + ("stray",) + tail)
        add(words)
        add(words + ("--topology",))
        add(base + ("--json=yes",) + tail)
        add(base + ("--topology",))
        add(base + ("--output",))
        add(base + ("--topol",) + tail)  # an abbreviation with no value
        for option in CHOICES.get(command, []):
            add(base + (option, "nope") + tail)
            add(base + (option, "") + tail)
    cases.append(Case("option-parse", "topology", ("topology", "nope"), (), "error"))
    cases.append(Case("option-parse", "netem", ("netem", "nope"), (), "error"))
    cases.append(Case("option-parse", "steady", ("steady", "nope", "--topology", "star:n=4"), (), "error"))
    cases.append(Case("option-parse", "launch", ("launch", "--topology", "two-switch"), (), "error"))  # no program
    return cases


def closed_pipes(seed: dict) -> list[Case]:
    """Every command that prints, its reader gone before the first byte (``| head -0``): status
    141 and nothing on standard error, as a shell tool killed by SIGPIPE."""
    name, text = seed["schedule-json"]
    schedule = (_file(name, text),)
    printing = [
        ("topology", "export", "fat-tree:k=12", "--output", "-"), ("topology", "export", "two-switch", "--output", "-"),
        ("topology", "show", "two-switch"), ("topology", "show", "--json", "two-switch"), ("topology", "list"),
        ("bound", "--topology", "two-switch"), ("bound", "--topology", "two-switch", "--json"),
        ("plan", "--topology", "two-switch"), ("plan", "--topology", "two-switch", "--output", "-"),
        ("plan", "--topology", "fat-tree:k=4", "--traffic", "all-to-all", "--output", "-"),
        ("simulate", "--topology", "two-switch", "--algorithm", "round-robin"),
        ("simulate", "--schedule", "{d}/" + name, "--json"), ("check", "{d}/" + name),
        ("check", "--json", "{d}/" + name),
        ("sweep", "--topology", "hierarchical:d1=2,d2=2", "--output", "-"),
        ("steady", "scatter", "--topology", "star:n=4"), ("steady", "scatter", "--topology", "star:n=4", "--json"),
        ("hostfile", "--topology", "two-switch"), ("pmpi-config", "--topology", "two-switch", "--output", "-"),
        ("report", "--topology", "two-switch", "--output", "-"),
    ]
    cases = []
    for argv in printing:
        files = schedule if any("{d}" in w for w in argv) else ()
        cases.append(Case("closed-pipe", argv[0], argv, files, "pipe", closed_stdout=True))
    from liquidsched.cli.common import COMMANDS

    for command in COMMANDS:
        cases.append(Case("closed-pipe", command, (command, "--help"), (), "pipe", closed_stdout=True))
    cases.append(Case("closed-pipe", "main", ("--help",), (), "pipe", closed_stdout=True))
    return cases

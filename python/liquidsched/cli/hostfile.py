"""``liquidsched hostfile``: the rank-to-machine order of a run, as a launcher's host file.

A run's rank ``r`` plays the traffic's ``r``-th host in network order
(:func:`~liquidsched.execute.plan.rank_hosts`), so on a cluster rank ``r`` must start on the
machine of that host. This command writes that order in the syntax of the launcher that reads
it, one rank per line:

* ``hydra`` (MPICH's ``mpiexec -f FILE``): ``machine:1``;
* ``openmpi`` (``mpirun --hostfile FILE --map-by slot``): ``machine slots=1``; Open MPI merges
  repeated machines, so a map that puts two ranks on one machine is refused in this format;
* ``slurm`` (``SLURM_HOSTFILE=FILE srun --distribution=arbitrary``): ``machine``.

Machines are the hosts' names unless ``--map FILE`` renames them: one ``HOST MACHINE`` pair per
line, blank lines and ``#`` comments ignored; hosts it does not list keep their names.
"""

from __future__ import annotations

import argparse

from ..errors import InputError
from .common import add_problem_options, command_help, err, print_json, problem

#: Each format's line for one rank on ``machine``.
FORMATS = {"hydra": "{machine}:1", "openmpi": "{machine} slots=1", "slurm": "{machine}"}

#: How each format is used, for the note after writing it (``{file}``, ``{ranks}``).
USAGE = {
    "hydra": "mpiexec -f {file} -n {ranks} …; liquidsched run --launcher-args '-f {file}' --on-modelled-network",
    "openmpi": "mpirun --hostfile {file} --map-by slot -n {ranks} …; liquidsched run --launcher PATH/mpirun "
               "--launcher-args '--hostfile {file} --map-by slot' --on-modelled-network",
    "slurm": "SLURM_HOSTFILE={file} srun --distribution=arbitrary -n {ranks} …; SLURM_HOSTFILE={file} liquidsched run "
             "--launcher srun --launcher-args '--distribution=arbitrary' --on-modelled-network",
}


def read_machine_map(path: str, hosts: list[str]) -> dict[str, str]:
    """The machine of each host a ``--map`` file names (``HOST MACHINE`` per line).

    Raises
    ------
    InputError
        naming the file and line of a malformed line, a host the network lacks, or a host given
        twice.
    """
    from ..io.files import read_text

    text = read_text(path, InputError)
    known, machine_of, line_of = set(hosts), {}, {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2:
            raise InputError(f"{path}:{number}: expected 'HOST MACHINE', got {line.strip()!r}")
        host, machine = words
        if host not in known:
            raise InputError(f"{path}:{number}: {host!r} is not a host of the network")
        if not machine.isprintable():
            # A launcher would pass the control character on to the resolver, or cut the name at it.
            raise InputError(f"{path}:{number}: machine name {machine!r} holds a control character")
        if host in machine_of:
            raise InputError(f"{path}:{number}: host {host!r} is mapped twice (first on line {line_of[host]})")
        machine_of[host], line_of[host] = machine, number
    return machine_of


def host_file(machines: list[str], fmt: str) -> str:
    """The host file putting rank ``r`` on ``machines[r]``, in format ``fmt`` (:data:`FORMATS`).

    Examples
    --------
    >>> print(host_file(["n1", "n2"], "hydra"), end="")
    n1:1
    n2:1

    Raises
    ------
    InputError
        in the ``openmpi`` format, when a machine has two ranks.
    """
    if fmt == "openmpi":
        twice = sorted({m for m in machines if machines.count(m) > 1})
        if twice:
            raise InputError(f"machine {twice[0]} has more than one rank: Open MPI merges repeated machines of a "
                             "host file, so the ranks would not keep their order; use --format hydra or slurm")
    return "".join(FORMATS[fmt].format(machine=m) + "\n" for m in machines)


def cmd_hostfile(args: argparse.Namespace) -> int:
    from ..execute.plan import rank_hosts
    from ..io.output import write_output

    if args.json and args.output == "-":
        raise InputError("--json and the host file would both go to standard output: give --output FILE")
    net, traffic = problem(args)
    traffic.check(net)
    hosts = rank_hosts(net, traffic)
    machine_of = read_machine_map(args.map, net.hosts()) if args.map else {}
    machines = [machine_of.get(h, h) for h in hosts]
    write_output(args.output, host_file(machines, args.format))
    if args.json:
        print_json({"format": args.format, "output": args.output,
                    "ranks": [{"rank": r, "host": h, "machine": m} for r, (h, m) in enumerate(zip(hosts, machines))]})
        return 0
    shown = args.output if args.output != "-" else "FILE"
    err.print(f"{len(hosts)} ranks of {traffic.name} on {net.name}, rank r on the machine of the r-th host; use: "
              + USAGE[args.format].format(file=shown, ranks=len(hosts)), markup=False, soft_wrap=True)
    return 0


#: The command's description in ``--help``.
DESCRIPTION = """Rank r of a run plays the traffic's r-th host in network order, so on a cluster it must start on
that host's machine. Writes that order, one rank per line, as the launcher reads it:
  hydra    machine:1        mpiexec -f FILE
  openmpi  machine slots=1  mpirun --hostfile FILE --map-by slot (one rank per machine)
  slurm    machine          SLURM_HOSTFILE=FILE srun --distribution=arbitrary
Machines are the hosts' names unless --map FILE renames them ('HOST MACHINE' per line)."""


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hostfile", help=command_help("hostfile"), description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_problem_options(p)
    p.add_argument("--format", choices=list(FORMATS), default="hydra",
                   help="the launcher's syntax: hydra (mpiexec -f), openmpi (mpirun --hostfile), slurm "
                        "(SLURM_HOSTFILE with srun --distribution=arbitrary); default hydra")
    p.add_argument("--map", metavar="FILE",
                   help="machine names where they differ from the hosts': 'HOST MACHINE' per line, # comments")
    p.add_argument("--output", default="-", metavar="FILE", help="where to write it (default: standard output)")
    p.set_defaults(run=cmd_hostfile)

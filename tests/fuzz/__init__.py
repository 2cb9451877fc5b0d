"""Hostile inputs for every reader and every command of the command line, and the one checker
they all go through.

Used twice: by ``tests/test_fuzz.py`` (the fast part, a fixed, deterministic sample of every
class that ``make test`` runs) and by ``make fuzz`` (``python -m tests.fuzz``: every
input, at least a thousand distinct ones, counted per class, written to ``out/fuzz.json``).

Each input is a :class:`Case`: a command line, the files it needs created in its own directory
(regular files, FIFOs, directories, symbolic links, sparse files, device nodes), and what it may
legitimately end with. :func:`check` then holds every case to the same rules:

* exit status 2 for an error (1 only from ``check``), 0 only where the input is legitimately valid;
* an error is exactly one line on standard error, ``liquidsched: error: ...``, and nothing on
  standard output;
* no ``Traceback`` and no Rust ``panicked at`` anywhere;
* after a failure the case's directory is exactly as before: no output file, no temporary file,
  nothing of the user's replaced (bytes, mtime, kind and link target unchanged); after a success
  only the declared outputs changed, a symbolic link stayed a link, and a JSON output is whole;
* peak memory at most :data:`MEMORY_CAP_BYTES` (``ru_maxrss`` from ``os.wait4``, and the resident
  size polled while it runs: a runaway is killed, not waited for);
* it ends within its timeout (a FIFO opened for reading, a loop without end: killed, reported);
* with its reader gone (``| head -0``), a printing command ends with status 141 and says nothing;
* the commands that launch MPI or build networks (``run``, ``tune``, ``launch``, ``calibrate``,
  ``netem``) start no process at all: only inputs they must refuse are given to them, and a
  process they try to start is blocked and reported.

Every command runs in a child forked from a *zygote*: a Python process that imported liquidsched
and every command module once, so that a case costs its own work and not the start-up. The child
gets its own process group (killed whole on a timeout), its own standard streams as files, and
the case's directory as working directory; it calls :func:`liquidsched.cli.main` as the
``liquidsched`` script does, and an exception that escapes prints its traceback, as Python would.

The package, a module for each thing its parts do:

* :mod:`.cases`: a :class:`~.cases.Case`, the valid seeds the hostile files are made from, and
  the slots (every command's every file argument);
* :mod:`.files`: the classes of hostile files (special files, encodings, document bombs, field
  values, mutations);
* :mod:`.options`: the classes of hostile command lines (numbers in options, specs, host files
  and maps, output paths, option parsing, closed pipes);
* :mod:`.catalogue`: every class's distinct cases, the named inputs and the fast part's sample;
* :mod:`.running`: the zygote, its children, the watcher, and a case's files made and looked at;
* :mod:`.checking`: :func:`~.checking.check`, every case run and checked, and the failures
  summarised;
* :mod:`.__main__`: the long run (``python -m tests.fuzz``).
"""

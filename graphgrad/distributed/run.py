"""``python -m graphgrad.distributed.run -n 4 train.py [args]``: start a script on several ranks.

A thin wrapper over the ``mpiexec`` of the installed MPI (``pip install 'graphgrad[mpi]'`` brings the
MPICH wheel, whose ``mpiexec`` sits beside the Python interpreter). ``--hostfile FILE`` or ``--hosts
a,b,c`` spread the ranks over several machines; they are passed on in the spelling of the MPI found
(MPICH's Hydra or Open MPI). The exit status is the job's.

Examples:
    python -m graphgrad.distributed.run -n 2 examples/distributed_mlp.py --epochs 3
    python -m graphgrad.distributed.run -n 16 --hostfile hosts.txt train.py
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import Optional, Sequence


def find_mpiexec() -> str:
    """The ``mpiexec`` to use: the one beside this Python first (a pip-installed MPI), then ``PATH``."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("graphgrad.distributed.run: no mpiexec found; install an MPI with "
                         "pip install 'graphgrad[mpi]' (mpi4py and the mpich wheel)")
    return found


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Open MPI" in text or "OpenRTE" in text


def command(nprocs: int, script: Sequence[str], hostfile: Optional[str] = None, hosts: Optional[str] = None,
            mpiexec: Optional[str] = None, python: Optional[str] = None) -> list:
    """The ``mpiexec`` command line that runs ``script`` (a path and its arguments, or ``-m module ...``)
    on ``nprocs`` ranks."""
    mpiexec = mpiexec or find_mpiexec()
    open_mpi = _is_open_mpi(mpiexec)
    line = [mpiexec, "-n", str(nprocs)]
    if hostfile:
        line += ["--hostfile" if open_mpi else "-f", hostfile]
    if hosts:
        line += ["--host" if open_mpi else "-hosts", hosts]
    if open_mpi and os.geteuid() == 0:
        line.append("--allow-run-as-root")
    return line + [python or sys.executable] + list(script)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphgrad.distributed.run",
                                     description="Run a training script on several processes (MPI ranks).")
    parser.add_argument("-n", "--nprocs", type=int, default=2, help="number of ranks (default 2)")
    parser.add_argument("--hostfile", help="a file listing the machines (one per line, 'host:slots')")
    parser.add_argument("--hosts", help="machines as a comma-separated list (e.g. node1,node2)")
    parser.add_argument("--mpiexec", help="the mpiexec to use (default: the one beside this Python, then PATH)")
    parser.add_argument("script", nargs=argparse.REMAINDER, help="the script and its arguments, or -m module ...")
    args = parser.parse_args(argv)
    if not args.script:
        parser.error("give the script to run, e.g. python -m graphgrad.distributed.run -n 2 train.py")
    if args.nprocs < 1:
        parser.error(f"-n must be at least 1, got {args.nprocs}")
    line = command(args.nprocs, args.script, args.hostfile, args.hosts, args.mpiexec)
    try:
        return subprocess.run(line).returncode
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

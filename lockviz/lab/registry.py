"""Where the lab keeps its run dirs, and which servers it has started in them.

Every server set lives in a run dir of its own (``lockviz-run-*``, ``lockviz-lab-*`` for ``lab
up``; 0700) under one base per user, ``<tmp>/lockviz-<uid>/``: created 0700, and refused when it
is a symlink or belongs to someone else (on a shared machine anyone can create names in /tmp).
Each set writes ``lab.json`` into its dir: its servers' pids, each with its start time (clock
ticks since boot, :attr:`lockviz.lab.procs.Stat.start_ticks`), their ports, and the pid and
start time of the app that owns it. ``manage.py lab status|down`` and the start-up
:func:`sweep` look in this base only.

A ``lab.json`` is believed only as far as it can be checked: only dirs and files the current
user owns are read, the dir removed is the one the file was found in (never a path the file
names), and a pid is signalled only while its start time still matches what was recorded, so a
forged file or a pid the kernel has since given to another process is left alone.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Callable
from typing import TypedDict

from lockviz.lab import procs
from lockviz.lab.errors import LabError

PATTERN = "lockviz-*"
LAB_FILE = "lab.json"


class _Written(TypedDict):
    workdir: str
    owner_pid: int
    pids: dict[str, int]  # by name ("redis-1", "pg-1#2": the third process of pg-1)
    start_ticks: dict[str, int | None]  # each pid's start: with the pid, it names one process


class Entry(_Written, total=False):
    """One server set's lab.json."""

    owner_start_ticks: int | None
    standing: bool  # started by ``lab up``: it has no owner to outlive
    ports: dict[str, int]  # by server name


def base_dir(base: str | None = None) -> str:
    """The current user's lab base (``base`` instead, if given), created 0700 when missing.

    LabError when it is a symlink, not a dir, or someone else's. Group and others may keep
    search permission (as root, the lab gives it to PostgreSQL's OS user, see
    :mod:`lockviz.lab.servers.postgres`), never read or write.
    """
    path = base or os.path.join(tempfile.gettempdir(), f"lockviz-{os.geteuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    found = os.lstat(path)
    if not stat.S_ISDIR(found.st_mode):
        raise LabError(f"{path} is not a directory (a symlink?): the lab will not use it")
    if found.st_uid != os.geteuid():
        raise LabError(
            f"{path} belongs to uid {found.st_uid}, not to you (uid {os.geteuid()}): the lab "
            "will not use it; remove it, or set TMPDIR to a directory of your own"
        )
    if found.st_mode & 0o066:
        os.chmod(path, stat.S_IMODE(found.st_mode) & ~0o066)
    return path


def new_run_dir(prefix: str = "lockviz-run-", base: str | None = None) -> str:
    """A fresh run dir (0700) under the lab base."""
    return tempfile.mkdtemp(prefix=prefix, dir=base_dir(base))


def record(
    workdir: str,
    pids: dict[str, int],
    *,
    ports: dict[str, int] | None = None,
    standing: bool = False,
) -> None:
    """Write (or rewrite) ``workdir``'s lab.json: ``pids`` by name, each with its start time."""
    entry: Entry = {
        "workdir": workdir,
        "owner_pid": os.getpid(),
        "owner_start_ticks": procs.start_ticks(os.getpid()),
        "pids": pids,
        "start_ticks": {name: procs.start_ticks(pid) for name, pid in pids.items()},
        "ports": ports or {},
    }
    if standing:
        entry["standing"] = True
    tmp = os.path.join(workdir, LAB_FILE + ".tmp")
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        json.dump(entry, f)
    os.replace(tmp, os.path.join(workdir, LAB_FILE))


def forget(workdir: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(workdir, LAB_FILE))


def entries(base: str | None = None) -> list[Entry]:
    """Every server set recorded under the lab base, from dirs and files the user owns.

    Each entry's ``workdir`` is the dir its file was found in, whatever the file says.
    """
    found = []
    for workdir in sorted(glob.glob(os.path.join(base_dir(base), PATTERN))):
        entry = _read(workdir)
        if entry is not None:
            found.append(entry)
    return found


def _read(workdir: str) -> Entry | None:
    try:
        if not _ours(os.lstat(workdir), stat.S_ISDIR):
            return None
        fd = os.open(os.path.join(workdir, LAB_FILE), os.O_RDONLY | os.O_NOFOLLOW)
        with open(fd) as f:
            if not _ours(os.fstat(fd), stat.S_ISREG):
                return None
            entry = json.load(f)
        pids = {str(name): int(pid) for name, pid in entry["pids"].items()}
        ticks = entry.get("start_ticks") or {}
        found: Entry = {
            "workdir": workdir,
            "owner_pid": int(entry["owner_pid"]),
            "pids": pids,
            "start_ticks": {name: _ticks(ticks.get(name)) for name in pids},
            "owner_start_ticks": _ticks(entry.get("owner_start_ticks")),
            "standing": bool(entry.get("standing")),
            "ports": {str(name): int(port) for name, port in (entry.get("ports") or {}).items()},
        }
        return found
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _ticks(value: object) -> int | None:
    return int(value) if isinstance(value, int | str) else None


def _ours(found: os.stat_result, kind: Callable[[int], bool]) -> bool:
    return bool(kind(found.st_mode)) and found.st_uid == os.geteuid()


def owner_alive(entry: Entry) -> bool:
    """Is the app that started this set still running (the same process, not a reused pid)?"""
    return procs.same_process(entry["owner_pid"], entry.get("owner_start_ticks"))


def stop(entry: Entry) -> int:
    """SIGKILL every process of the set that is still the one recorded; how many there were."""
    stopped = 0
    for name, pid in entry["pids"].items():
        if not procs.same_process(pid, entry["start_ticks"].get(name)):
            continue  # gone, or the pid now names another process
        for sig in (signal.SIGCONT, signal.SIGKILL):  # a frozen process must be able to die
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
        stopped += 1
    return stopped


def remove(entry: Entry) -> int:
    """Stop the set's processes (see :func:`stop`) and delete its dir."""
    stopped = stop(entry)
    shutil.rmtree(entry["workdir"], ignore_errors=True)
    return stopped


def sweep(base: str | None = None) -> int:
    """Stop and remove what a dead app left behind (it was killed before it could clean up).

    Standing sets (``lab up``) have no owner to outlive and are left alone. Returns how many
    server sets were swept.
    """
    swept = 0
    for entry in entries(base):
        if entry.get("standing") or owner_alive(entry):
            continue
        remove(entry)
        swept += 1
    return swept

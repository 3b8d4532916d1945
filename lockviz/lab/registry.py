"""Which servers the lab has started, so ``manage.py lab status|down`` can find every one.

Each server set writes ``lab.json`` (its servers' pids and ports, and the pid of the app that
owns it) into its own temp dir. Nothing else is shared: the file disappears with the set.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
from typing import Any

from lockviz.lab import procs

PATTERN = "lockviz-*"


def record(workdir: str, pids: dict[str, int], **extra: Any) -> None:
    entry = {"workdir": workdir, "owner_pid": os.getpid(), "pids": pids, **extra}
    tmp = os.path.join(workdir, "lab.json.tmp")
    with open(tmp, "w") as f:
        json.dump(entry, f)
    os.replace(tmp, os.path.join(workdir, "lab.json"))


def forget(workdir: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(workdir, "lab.json"))


def entries(base_dir: str | None = None) -> list[dict[str, Any]]:
    found = []
    for path in sorted(
        glob.glob(os.path.join(base_dir or tempfile.gettempdir(), PATTERN, "lab.json"))
    ):
        try:
            with open(path) as f:
                found.append(json.load(f))
        except (OSError, ValueError):
            continue
    return found


def sweep(base_dir: str | None = None) -> int:
    """Stop and remove what a dead app left behind (it was killed before it could clean up).

    Standing sets (``lab up``) have no owner to outlive and are left alone. Returns how many
    server sets were swept.
    """
    import shutil
    import signal

    swept = 0
    for entry in entries(base_dir):
        if entry.get("standing") or procs.alive(int(entry["owner_pid"])):
            continue
        for pid in entry["pids"].values():
            if procs.alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(entry["workdir"], ignore_errors=True)
        swept += 1
    return swept

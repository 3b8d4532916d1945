#!/usr/bin/python3
"""``systemctl`` on the test's Debian machine (tests/deploy/machine.py), which boots no systemd:
it starts the units docs/deploy.md installs as systemd would start them, from their files.

Installed there as /usr/local/sbin/systemctl, ahead of the real one in root's PATH; run by the
machine's own python3 (the standard library only). What it reads of a unit, and does:

- ``User=``, ``Group=``: the process runs as them (their groups too), with their HOME, USER,
  LOGNAME and SHELL, as systemd sets them;
- ``WorkingDirectory=``, ``EnvironmentFile=`` (``KEY=VALUE`` lines; ``#`` comments),
  ``Environment=``, and ``%i``, the instance of a template unit (``lockviz-web@2``);
- ``ExecStart=``: split as a shell would (no shell runs it), in a session of its own, its output
  in /var/log/<unit>.log (the journal's stand-in), its pid in /run/sandbox-systemd/;
- ``KillMode=mixed`` and ``TimeoutStopSec=``: ``stop`` sends SIGTERM to the main process only,
  then SIGKILL after the timeout (at most 60 s here).

Verbs: ``daemon-reload`` (nothing to do), ``enable [--now]`` (``--now``: start), ``start``,
``stop``, ``restart``, ``is-active``. Not emulated: ``Restart=``, dependencies and ordering
(the route starts the units in the order it needs them), cgroups. Anything else is refused with
a sentence and exit status 1, so a route that needs more fails loudly here.
"""

from __future__ import annotations

import os
import pwd
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

UNITS = Path("/etc/systemd/system")
RUN = Path("/run/sandbox-systemd")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def unit_file(name: str) -> tuple[str, Path, str]:
    """``name`` (``lockviz-web@1`` or ``lockviz-labhost.service``): its full name, its file and
    its instance ("" for none)."""
    full = name if name.endswith(".service") else f"{name}.service"
    stem = full[: -len(".service")]
    if "@" in stem:
        prefix, instance = stem.split("@", 1)
        return full, UNITS / f"{prefix}@.service", instance
    return full, UNITS / full, ""


def read_unit(path: Path, instance: str) -> dict[str, list[str]]:
    """The ``[Service]`` section's keys, each with every value it was given, in order."""
    if not path.is_file():
        sys.exit(f"systemctl (test machine): Unit {path.name} not found in {UNITS}.")
    found: dict[str, list[str]] = {}
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]" and "=" in line:
            key, value = line.split("=", 1)
            found.setdefault(key.strip(), []).append(value.strip().replace("%i", instance))
    return found


def environment(unit: dict[str, list[str]]) -> dict[str, str]:
    env = {"PATH": PATH, "LANG": "C.UTF-8"}
    for name in unit.get("EnvironmentFile", []):
        for raw in Path(name.lstrip("-")).read_text().splitlines():
            line = raw.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                env[key.strip()] = value.strip().strip("\"'")
    for assignment in unit.get("Environment", []):
        for word in shlex.split(assignment):
            key, value = word.split("=", 1)
            env[key] = value
    user = (unit.get("User") or ["root"])[-1]
    account = pwd.getpwnam(user)
    env.update(HOME=account.pw_dir, USER=user, LOGNAME=user, SHELL=account.pw_shell)
    return env


def pid_of(full: str) -> int | None:
    try:
        pid = int((RUN / f"{full}.pid").read_text())
        os.kill(pid, 0)
        return pid
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return None


def start(name: str) -> None:
    full, path, instance = unit_file(name)
    if pid_of(full) is not None:
        return
    unit = read_unit(path, instance)
    user = (unit.get("User") or ["root"])[-1]
    group = (unit.get("Group") or [user])[-1]
    log = open(f"/var/log/{full}.log", "ab")  # noqa: SIM115 (the process keeps it)
    proc = subprocess.Popen(
        shlex.split(unit["ExecStart"][-1]),
        cwd=(unit.get("WorkingDirectory") or ["/"])[-1],
        env=environment(unit),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        user=user,
        group=group,
        extra_groups=[g for g in os.getgrouplist(user, pwd.getpwnam(user).pw_gid)],
    )
    RUN.mkdir(parents=True, exist_ok=True)
    (RUN / f"{full}.pid").write_text(str(proc.pid))
    print(f"started {full} (pid {proc.pid}, as {user})")


def stop(name: str) -> None:
    full, path, instance = unit_file(name)
    pid = pid_of(full)
    if pid is None:
        return
    unit = read_unit(path, instance)
    timeout = min(60.0, seconds((unit.get("TimeoutStopSec") or ["90s"])[-1]))
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_of(full) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    if pid_of(full) is not None:
        os.kill(pid, signal.SIGKILL)


def seconds(value: str) -> float:
    """``90s``, ``15min``, ``2`` as systemd reads them."""
    for suffix, factor in (("min", 60.0), ("ms", 0.001), ("s", 1.0), ("h", 3600.0)):
        if value.endswith(suffix):
            return float(value[: -len(suffix)]) * factor
    return float(value)


VERBS = {
    "daemon-reload": lambda names, now: None,
    "enable": lambda names, now: [start(n) for n in names if now],
    "start": lambda names, now: [start(n) for n in names],
    "stop": lambda names, now: [stop(n) for n in names],
    "restart": lambda names, now: [(stop(n), start(n)) for n in names],
}


def main(argv: list[str]) -> int:
    if not argv:
        sys.exit("systemctl (test machine): say what to do")
    verb, rest = argv[0], argv[1:]
    names = [a for a in rest if not a.startswith("-")]
    if verb == "is-active":
        active = all(pid_of(unit_file(n)[0]) is not None for n in names)
        print("active" if active else "inactive")
        return 0 if active else 3
    if verb not in VERBS:
        sys.exit(f"systemctl (test machine): {verb!r} is not something this stand-in does")
    VERBS[verb](names, "--now" in rest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

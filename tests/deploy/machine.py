"""A fresh Debian machine of the test's own, on this one, for docs/deploy.md's route without
Docker (tests/deploy/test_route.py): what an admin finds after installing Debian 12 and the
packages of ``make serve-setup``, nothing of lockviz set up yet.

It is this machine's own Debian in namespaces of its own (``unshare``, as root): a file system
whose ``/etc``, ``/var``, ``/usr/local`` and ``/root`` are overlays (it may change any file; this
machine's stay as they are), fresh ``/run`` and ``/tmp``, ``/srv/lockviz`` a copy-on-write view
of this checkout; a network of its own, so its nginx takes port 80 and its PostgreSQL and Redis
their usual ports without meeting anyone's; its own host name and process tree, whose first
process's end ends every process the route started. What a fresh install would have and this
machine's may not: a new PostgreSQL cluster (as the postgresql package's postinst makes one),
an empty Redis. It boots no systemd: ``systemctl`` is tests/deploy/systemctl.py, which starts a
unit from its file as systemd would; Debian's daemons start from their init scripts
(``service``), as they do on a Debian without systemd.

``Machine.run(script)`` runs a shell script there as root, in a login-like environment;
``Machine.browser_binary(folder)`` is a chromium that joins its network (a browser on the
school's network: 127.0.0.1 is the machine's).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from bench.app import ROOT
from lockviz.lab import procs

SHIM = Path(__file__).with_name("systemctl.py")
HOST_NAME = "school"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def can_make_one() -> str:
    """Why this machine cannot make one ("" if it can)."""
    if os.geteuid() != 0:
        return "namespaces and overlays need root (the test runs as root in CI)"
    for tool in ("unshare", "nsenter", "pg_createcluster", "nginx", "redis-server", "runuser"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            return f"{tool} is missing (make setup installs it)"
    return ""


def setup_script(work: Path) -> str:
    """What the machine's first process does before it waits: its file system, network and
    name, then a fresh PostgreSQL cluster and Redis."""

    def overlay(lower: str, name: str, at: str) -> str:
        up, scratch = f"{work}/up/{name}", f"{work}/work/{name}"
        return (
            f"mkdir -p {up} {scratch}\n"
            f"mount -t overlay overlay -o lowerdir={lower},upperdir={up},workdir={scratch} {at}"
        )

    overlays = "\n".join(overlay(f"/{d}", d, f"/{d}") for d in ("etc", "var", "usr/local", "root"))
    return f"""set -e
ip link set lo up
hostname {HOST_NAME}
{overlays}
mount -t tmpfs tmpfs /srv
mkdir /srv/lockviz
{overlay(ROOT, "srv", "/srv/lockviz")}
rm -f /srv/lockviz/lockviz.sqlite3  # a clone has none (not in git); a checkout may
install -m 0755 {SHIM} /usr/local/sbin/systemctl
mount -t tmpfs tmpfs /run
mkdir -p /run/lock
mount -t tmpfs -o mode=1777 tmpfs /tmp
echo {HOST_NAME} > /etc/hostname
(pg_dropcluster --stop 15 main || true) >/dev/null 2>&1
pg_createcluster 15 main >/dev/null
rm -rf /var/lib/redis/*
echo ready
exec sleep infinity
"""


class Machine:
    """The test's machine, up once constructed; :meth:`stop` ends it and all it runs."""

    def __init__(self, work: Path) -> None:
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        self.log = open(work / "machine.log", "ab")  # noqa: SIM115 (closed in stop())
        self.proc = procs.spawn(
            ["unshare", "--mount", "--net", "--uts", "--ipc", "--pid", "--fork", "--mount-proc",
             "--kill-child", "--propagation", "private", "sh", "-c", setup_script(work)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log,
        )  # fmt: skip
        assert self.proc.stdout is not None
        said = self.proc.stdout.readline().decode().strip()
        if said != "ready":
            self.stop()
            raise RuntimeError(f"the test's machine did not start: {self.output()}")
        self.pid = self._first_process()

    def _first_process(self) -> int:
        """The machine's first process (its pid 1), as this machine numbers it."""
        children = procs.children(self.proc.pid)
        assert len(children) == 1, children
        return children[0]

    def run(
        self, script: str, stdin: str = "", timeout_s: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """``script`` run by bash as root on the machine, in /root, output and errors together."""
        env = {"HOME": "/root", "PATH": PATH, "LANG": "C.UTF-8", "TERM": "dumb", "USER": "root"}
        return subprocess.run(
            ["nsenter", "--target", str(self.pid), "--mount", "--net", "--uts", "--ipc", "--pid",
             "--wd=/root", "--", "bash", "-c", script],
            input=stdin, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=timeout_s,
        )  # fmt: skip

    def browser_binary(self, folder: Path) -> str:
        """A chromium that runs on the machine's network (Playwright launches it as a browser)."""
        wrapper = folder / "chromium-on-the-machine"
        wrapper.write_text(
            f'#!/bin/sh\nexec nsenter --net=/proc/{self.pid}/ns/net -- {CHROMIUM} "$@"\n'
        )
        wrapper.chmod(0o755)
        return str(wrapper)

    def changed(self, path: str) -> Path:
        """Where the machine keeps what it wrote under /srv/lockviz (the checkout's overlay)."""
        return self.work / "up" / "srv" / path

    def output(self) -> str:
        return (self.work / "machine.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        """Its first process ends, and with it every process of the machine (the kernel ends a
        PID namespace's processes with its first); its mounts go with its mount namespace."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self.log.close()

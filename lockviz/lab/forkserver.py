"""Client processes and proxies forked from one warm process, instead of each started cold:
the app's side (the server's own side is :mod:`lockviz.lab.children.forkserver`).

A Python process that imports a lock client costs ~120 ms of CPU before it can do anything
(redis-py alone is 70 ms of imports), a proxy ~50 ms, and every run needs one per client and a
proxy: on two cores, that was half of what a run cost. So the lab starts one *fork server*
(``python -m lockviz.lab.children.forkserver``, like multiprocessing's) that imports every
client library and the proxy once, and forks a copy of itself for each process a run needs (~1
ms and a few MB of its own: the rest is shared with the server until written). A forked child
becomes what it was asked for — a client process (:mod:`lockviz.lab.children.worker`) or a
network proxy (:mod:`lockviz.lab.children.proxy`) — and from there on is exactly what a cold
start would have been: it reads its first line (a ClientConfig, a proxy's links) from its own
stdin.

How the app talks to it: over a Unix socket, one request at a time, each carrying the two ends
of the child's pipes (``SCM_RIGHTS``); the answer is the child's pid and a *pidfd* for it. The
app holds the pidfd (:class:`Forked`): it signals and waits on that process, never on a pid the
kernel may have given to another process since.

How nothing outlives the app: the server is spawned by :func:`lockviz.lab.procs.spawn` from the
spawner thread (``PR_SET_PDEATHSIG``), and each child asks for ``PR_SET_PDEATHSIG`` itself as
soon as it is forked, relative to the server (which forks from its only thread), then checks it
was not orphaned meanwhile. Killing the app kills the server; that kills every child.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from typing import IO

from lockviz.lab import children, procs
from lockviz.lab.errors import LabError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORKED = (children.WORKER, children.PROXY)  # what a forked child can become
EXITED = -1  # a forked child's exit code is its server's to know: the app knows it exited


class Forked:
    """The app's handle on a forked child: the part of :class:`subprocess.Popen` the lab uses.

    Signals go through the pidfd (``pidfd_send_signal``), so they reach this process or none.
    """

    def __init__(self, pid: int, pidfd: int, stdin: IO[str], stdout: IO[str]) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.stdin: IO[str] | None = stdin
        self.stdout: IO[str] | None = stdout
        self.returncode: int | None = None
        self._killed = False

    def poll(self) -> int | None:
        if self.returncode is None and _readable(self.pidfd, 0):
            self.returncode = -signal.SIGKILL if self._killed else EXITED
            os.close(self.pidfd)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not _readable(self.pidfd, timeout):
            raise subprocess.TimeoutExpired(f"forked {self.pid}", timeout or 0)
        code = self.poll()
        assert code is not None
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self.pidfd, sig)

    def kill(self) -> None:
        self._killed = True
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def _readable(fd: int, timeout: float | None) -> bool:
    """A pidfd is readable once its process has exited."""
    return bool(select.select([fd], [], [], timeout)[0])


def start(role: str) -> procs.Child:
    """A new process that will be ``role`` (a module of :data:`FORKED`) once it reads its first
    line: forked from the warm server, or (where pidfds are missing: Linux before 5.3) started
    cold; at low priority when the calling thread's run yields (:func:`procs.yielding`)."""
    if not warm():
        return _cold(role)  # procs.spawn: started low if this run yields
    child = _server.fork(role)
    if procs.yielding():  # forked at the fork server's priority: lowered before its first line
        procs.lower(child.pid)
    return child


def warm() -> bool:
    """Whether children are forked from the warm server here: this kernel has pidfds."""
    return hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal")


def _cold(role: str) -> subprocess.Popen[str]:
    return procs.spawn(
        [sys.executable, "-m", role],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=procs.environment(PYTHONPATH=ROOT, PYTHONUNBUFFERED="1"),
        cwd=ROOT,
    )


class ForkServer:
    """The app's side: the server process, started on first use, and one request at a time."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the server now (``serve`` does, so that the first run need not wait)."""
        with self._lock:
            self._ensure_started()

    def fork(self, role: str) -> Forked:
        """A new process that will be ``role`` (a module of :data:`FORKED`) once it has read its
        first line; the server is started (again) if it is not running."""
        child_in, app_in = os.pipe()
        app_out, child_out = os.pipe()
        try:
            with self._lock:
                pid, pidfd = self._ask(role, child_in, child_out)
        except BaseException:
            for fd in (app_in, app_out):
                os.close(fd)
            raise
        finally:
            os.close(child_in)
            os.close(child_out)
        return Forked(pid, pidfd, open(app_in, "w"), open(app_out))

    def close(self) -> None:
        with self._lock:
            if self.sock is not None:
                self.sock.close()  # the server reads EOF and exits; its children stay theirs
                self.sock = None
            if self.proc is not None:
                procs.stop(self.proc, grace_s=1.0)
                self.proc = None

    def _ask(self, role: str, child_in: int, child_out: int) -> tuple[int, int]:
        for attempt in (1, 2):  # a server that died (killed from outside) is started again
            sock = self._ensure_started()
            try:
                socket.send_fds(sock, [role.encode()], [child_in, child_out])
                answer, fds, _, _ = socket.recv_fds(sock, 64, 1)
            except OSError as exc:
                self._forget()
                if attempt == 2:
                    raise LabError(f"the fork server is gone: {exc}") from exc
                continue
            if not answer or not fds:
                self._forget()
                if attempt == 2:
                    raise LabError("the fork server did not answer")
                continue
            return int(answer), fds[0]
        raise AssertionError("unreachable")

    def _ensure_started(self) -> socket.socket:
        if self.sock is not None and self.proc is not None and self.proc.poll() is None:
            return self.sock
        self._forget()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = procs.spawn(
                [sys.executable, "-m", children.FORK_SERVER, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=procs.environment(PYTHONPATH=ROOT),
                cwd=ROOT,
            )
        finally:
            theirs.close()
        ready = ours.recv(5, socket.MSG_WAITALL)  # once it has imported everything
        if ready != b"ready":
            ours.close()
            raise LabError("the fork server did not start")
        self.sock = ours
        return ours

    def _forget(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            procs.stop(self.proc, grace_s=1.0)
            self.proc = None


_server = ForkServer()


def server() -> ForkServer:
    """This app's fork server."""
    return _server

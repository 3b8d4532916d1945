"""Starting child processes that cannot outlive the app.

Every server and client the lab starts is spawned here, from one long-lived thread, with
``PR_SET_PDEATHSIG = SIGKILL``: the kernel kills the child the moment its parent dies, even by
SIGKILL, when no cleanup code can run. The signal fires when the *thread* that forked the child
exits, not the process, so all spawns go through a single thread that lives as long as the
process does. Each child also gets its own process group, so a Ctrl-C in the terminal reaches
the app only, and the app tears its children down in order.

Over ~300 lines: what the lab knows of a child process is here and nowhere else: how it starts
(:class:`Options`, the ``Popen`` arguments it may take), its priority, how it is read from
``/proc``, and how it is stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import IO, Literal, Protocol, TypedDict, TypeVar, Unpack, overload

from lockviz.lab.errors import LabError

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def die_with_parent() -> None:
    """In a child process: ask the kernel for SIGKILL when the parent thread dies."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


_T = TypeVar("_T")


class _Spawner:
    """One daemon thread that performs every ``Popen`` of the process.

    Started with the module, by the thread that imports it: a thread inherits its creator's
    niceness, and so does every child forked from it. Started by the first thread to spawn, it
    ran at that thread's priority, and when that was a yielding run's (or the spare pool's,
    lowered: lockviz.lab.spares), every server and client the process started afterwards
    booted low."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="lab-spawner", daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], _T]) -> _T:
        if threading.current_thread() is self._thread:
            return job()
        future: Future[_T] = Future()

        def run() -> None:  # in the spawner's thread
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller, which re-raises it
                future.set_exception(exc)

        self._jobs.put(run)
        return future.result()

    def _loop(self) -> None:
        while True:
            self._jobs.get()()


_spawner = _Spawner()

# What a lab process may see of the app's environment: where programs and the temporary
# directory are, who and where it runs, its language. Nothing else: the app's own settings
# (LOCKVIZ_SECRET_KEY, a database URL with its password, a metrics token) are none of a lock
# server's or a client process's business, and a client process runs code a scenario drives.
PASSED_ON = (
    *("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"),
    "JAVA_HOME",  # ZooKeeper's JVM, where Debian's is not on PATH
)


def environment(**extra: str) -> dict[str, str]:
    """The environment of a lab process: :data:`PASSED_ON` from the app's, and ``extra``."""
    return {**{k: os.environ[k] for k in PASSED_ON if k in os.environ}, **extra}


# A child's stdin, stdout or stderr: subprocess.PIPE, DEVNULL or STDOUT, a file, or this one's.
Stream = int | IO[bytes] | IO[str] | None


class AsUser(TypedDict, total=False):
    """Whom a child runs as (``Popen``'s arguments): the app's own user unless set."""

    user: str
    group: int
    extra_groups: list[int]


class Options(AsUser, total=False):
    """How a lab process is started besides its arguments: the ``Popen`` arguments the lab uses
    (its output as bytes; ``text=True`` to :func:`spawn` for text)."""

    env: dict[str, str]
    cwd: str | os.PathLike[str]
    stdin: Stream
    stdout: Stream
    stderr: Stream
    pass_fds: tuple[int, ...]


@overload
def spawn(
    args: list[str], *, text: Literal[True], **popen: Unpack[Options]
) -> subprocess.Popen[str]: ...
@overload
def spawn(
    args: list[str], *, text: Literal[False] = False, **popen: Unpack[Options]
) -> subprocess.Popen[bytes]: ...
def spawn(
    args: list[str], *, text: bool = False, **popen: Unpack[Options]
) -> subprocess.Popen[str] | subprocess.Popen[bytes]:
    """``Popen`` a child that dies with this process and sits in its own process group, with
    only the environment it needs (:func:`environment`, unless given ``env``); started at
    :data:`LOW_NICENESS` when the calling thread's run yields (:func:`yielding`)."""
    popen.setdefault("env", environment())
    low = yielding()

    def prepare() -> None:
        die_with_parent()
        if low:
            os.nice(LOW_NICENESS)

    def start() -> subprocess.Popen[str] | subprocess.Popen[bytes]:
        if text:
            return subprocess.Popen(args, preexec_fn=prepare, process_group=0, text=True, **popen)
        return subprocess.Popen(args, preexec_fn=prepare, process_group=0, **popen)

    return _spawner.submit(start)


# -- priority -------------------------------------------------------------------------------------
#
# A presenter's run must keep its story while a class's runs play (the projector shows it): the
# runs that yield to it have their processes at a lower CPU priority. Niceness, not cgroups: it
# needs no privilege (a process may always lower its children's priority, never raise it back
# without CAP_SYS_NICE), works in any container, and weighs ~10:1 at LOW_NICENESS against the
# presenter's servers and clients, which stay at the app's own priority. The yielding run's own
# thread in the app (and the threads it starts) run low too: its engine, timers and readers
# compete with the presenter's for the app's cores. A yielding run stays low until it ends:
# taken back, its children could not be raised again unprivileged (its threads end with it).

LOW_NICENESS = 10
_yielding: set[int] = set()  # the threads (a run's own, by native id) whose children start low


def yielding() -> bool:
    """Whether the run executing in this thread yields: what it starts starts low."""
    return threading.get_native_id() in _yielding


def yield_from(thread: int, pids: list[int]) -> None:
    """The run executing in ``thread`` (a native thread id of this process) yields from now on:
    that thread runs low, and so do the threads it starts later (its timers, its clients'
    readers: a new thread inherits its creator's niceness) and the children it starts later;
    its processes ``pids`` are lowered now, every thread of each."""
    _yielding.add(thread)
    _lower_task(thread)
    for pid in pids:
        lower(pid)


def stop_yielding(thread: int) -> None:
    """The run in ``thread`` has ended (the thread ends with it)."""
    _yielding.discard(thread)


def lower(pid: int) -> None:
    """Every thread of ``pid`` at :data:`LOW_NICENESS` (a thread made later inherits it)."""
    try:
        tids = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:  # gone
        return
    for tid in tids:
        _lower_task(tid)


def _lower_task(tid: int) -> None:
    with contextlib.suppress(OSError):  # gone, or (never here) not ours
        if os.getpriority(os.PRIO_PROCESS, tid) < LOW_NICENESS:
            os.setpriority(os.PRIO_PROCESS, tid, LOW_NICENESS)


def restore(pid: int, niceness: int = 0) -> None:
    """Every thread of ``pid`` back at ``niceness`` (a thread made later inherits it): only
    where :func:`may_restore` (a spare, started low, taken by a run)."""
    try:
        tids = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:  # gone
        return
    for tid in tids:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, tid, niceness)


CAP_SYS_NICE = 23


def may_restore() -> bool:
    """Whether this process may raise a lowered process's priority back (``CAP_SYS_NICE``: root
    outside a container; not root in one with Docker's default capabilities)."""
    try:
        with open("/proc/self/status") as f:
            found = next((line.split()[1] for line in f if line.startswith("CapEff:")), "0")
        return bool(int(found, 16) >> CAP_SYS_NICE & 1)
    except (OSError, ValueError):
        return False


def niceness(pid: int) -> int:
    """The niceness of ``pid``'s main thread."""
    return os.getpriority(os.PRIO_PROCESS, pid)


def spawn_detached(args: list[str], **popen: Unpack[Options]) -> subprocess.Popen[bytes]:
    """``Popen`` a child that outlives this process (for ``lab up``): a session of its own."""
    popen.setdefault("env", environment())
    return subprocess.Popen(args, start_new_session=True, **popen)


class Child(Protocol):
    """A child process as the lab handles it: a :class:`subprocess.Popen`, or a process forked
    for it by the fork server (:class:`lockviz.lab.forkserver.Forked`)."""

    pid: int
    returncode: int | None

    @property
    def stdin(self) -> IO[str] | None: ...

    @property
    def stdout(self) -> IO[str] | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def kill(self) -> None: ...


def stop(
    proc: Child | subprocess.Popen[str] | subprocess.Popen[bytes],
    *,
    grace_s: float = 2.0,
    signals: tuple[signal.Signals, ...] = (signal.SIGCONT, signal.SIGTERM),
) -> None:
    """SIGCONT (a frozen process cannot die gracefully), SIGTERM (or ``signals``: SIGINT for an
    app, as Ctrl-C stops it), then SIGKILL after ``grace_s``; always reaped."""
    if proc.poll() is not None:
        return
    for sig in signals:
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            return
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@dataclass(frozen=True)
class Stat:
    """What ``/proc/<pid>/stat`` says of a process."""

    pid: int
    state: str  # R, S, T (stopped: a paused client), Z (zombie) ...
    ppid: int
    start_ticks: int  # since boot: with the pid, names one process (pids are reused)

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")


def stat(pid: int) -> Stat | None:
    """The process ``pid`` as the kernel sees it now; ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # the name may hold spaces and ")"
        return Stat(pid, fields[0], int(fields[1]), int(fields[19]))
    except (OSError, IndexError, ValueError):
        return None


def run_delay_ns(pid: int) -> int | None:
    """How long ``pid``'s main thread has waited, runnable, for a core since it started (the
    kernel's schedstat run-queue delay, in ns): what a busy machine took from it. A frozen or
    blocked process does not wait for a core. ``None`` once it is gone, or on a kernel without
    schedstat."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


def most_waited_ns(pid: int) -> int | None:
    """The longest any thread of ``pid`` has waited, runnable, for a core since it started
    (:func:`run_delay_ns` of each): a lower bound of what a busy machine took from a
    many-threaded process's work (a JVM booting). ``None`` once it is gone."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    waited = [run_delay_ns(int(t)) for t in threads if t.isdigit()]
    return max((w for w in waited if w is not None), default=None)


def alive(pid: int) -> bool:
    """True for a live process; a zombie (dead, not yet reaped) counts as dead."""
    found = stat(pid)
    return found is not None and found.alive


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot): with the pid, it names one process."""
    found = stat(pid)
    return found.start_ticks if found is not None else None


def same_process(pid: int, ticks: int | None) -> bool:
    """True if ``pid`` is alive and is the process that started at ``ticks`` (not a reused pid)."""
    found = stat(pid)
    return ticks is not None and found is not None and found.alive and found.start_ticks == ticks


def every_process() -> list[Stat]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (s := stat(int(entry))) is not None:
            found.append(s)
    return found


def cmdline(pid: int) -> str:
    """The command line of ``pid``, its arguments joined by spaces; "" once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    return [s.pid for s in every_process() if s.ppid == pid and s.alive]


def run_each(steps: Iterable[Callable[[], object]]) -> None:
    """Run every cleanup step even when an earlier one fails; then raise the first failure.

    The later failures are attached to it as notes. Stopping a run's servers, clients, proxy and
    watchers must not stop half-way: a server left running holds its port and its data, and a
    watcher left running reconnects to whatever listens there next.
    """
    failures: list[BaseException] = []
    for step in steps:
        try:
            step()
        except Exception as exc:  # every step runs; the first failure is raised below
            failures.append(exc)
    if failures:
        first = failures[0]
        for other in failures[1:]:
            first.add_note(f"also failed while cleaning up: {other!r}")
        raise first


def wait_until(
    ready: Callable[[], bool], timeout_s: float, what: str, every_s: float = 0.005
) -> None:
    """Poll ``ready`` every ``every_s`` until it is true; LabError naming ``what`` after
    ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            raise LabError(f"{what} did not become ready within {timeout_s:.0f} s")
        time.sleep(every_s)

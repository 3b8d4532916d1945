"""The run engine's handle on one client process (see :mod:`lockviz.lab.children.worker`).

The process gets its :class:`~lockviz.lab.config.ClientConfig` as the first line on its stdin,
then one command per line: the scenario step itself (``{"do": "acquire", ...}``). Faults are
done *to* the process from outside, as the world would do them: a GC pause is SIGSTOP then
SIGCONT (everything in the process stops, its timers and heartbeats included), a crash is
SIGKILL.

Nothing here blocks the engine. A frozen process reads nothing, so its stdin pipe fills up; a
writer thread of its own does the writing, from a bounded queue of commands. When that queue is
full (a client frozen while the scenario keeps sending it work), :meth:`ClientProcess.send`
refuses the command and the engine records that it was refused: a real single-threaded client
cannot take unlimited work either.

The storage service of a sequencer run (:mod:`lockviz.lab.children.storage_service`) is driven
the same way: a :class:`ClientProcess` of another ``module``, whose config names it ``storage``,
and whose ``_ready`` line says where it listens (``ready``).

One module past the usual ~300 lines, on purpose: a command's life in one process (sent,
queued, taken, run, answered) and what the machine and the faults did to it are measured where
the command is, by the one reader of the process's output.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from lockviz.jsontypes import JsonObject
from lockviz.lab import children, forkserver, procs
from lockviz.lab.errors import LabError
from lockviz.lab.events import Record
from lockviz.lab.procs import wait_until

MAX_QUEUED = 64  # commands waiting for one client before more are refused
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A command the machine held up: (the step's index, when it could have begun in the host's
# monotonic ns, how long the machine held it up in ns, how: "took" or "ran", and when a fault
# done to the client landed on it while it was not done, if one did). See _Command.
Took = Callable[[int | None, int, int, str, int | None], None]


@dataclass
class _Command:
    """A command sent to the client and not yet done, and how late a busy machine made it.

    It could begin once sent and the client's previous command was done, whichever came last.
    Only a busy machine makes it begin later than that, less the time the lab kept the client
    frozen: a command sent *before* a pause but taken only after the thaw was held up until the
    pause came (the thaw does not wipe that out, or the command would seem to be on time and the
    story told as if the pause had come first by design). While it runs, the machine can hold
    it up again: the time its process waited, runnable, for a core (the kernel's run-queue
    delay, :func:`procs.run_delay_ns`). Either way, what was reported is kept, so that only the
    excess is reported again.
    """

    index: int | None
    sent_ns: int
    delay_ns: int | None  # the process's run-queue delay when the command was sent (None: unknown)
    taken_ns: int = 0  # when the client took it (0: not yet)
    could_ns: int = 0  # when it could have begun (known once taken)
    held_ns: int = 0  # how long the machine held it up, as reported so far


@dataclass
class _Fault:
    """A fault done to the client (a pause, a crash, a clock change, its link): when it landed
    and its process's run-queue delay then. Judged once the client has said what it had done
    by then (its ``_done`` lines come later than the fault itself, or it is gone)."""

    at_ns: int
    delay_ns: int | None
    judged: bool = False


class ProcessConfig(Protocol):
    """What a lab process receives first (lockviz.lab.config): it names the process."""

    @property
    def name(self) -> str: ...

    def to_json(self) -> str: ...


class ClientProcess:
    def __init__(
        self,
        config: ProcessConfig,
        record: Record,
        on_took: Took | None = None,
        module: str = children.WORKER,
    ) -> None:
        self.name = config.name
        self.config = config
        self.record = record
        self.on_took = on_took
        self.module = module
        self.ready: JsonObject = {}  # what its _ready line said (the service's port)
        self._flight: deque[_Command] = deque()  # sent and not done yet, in order
        self._done_ns = 0  # when its last command was done
        self._frozen: list[list[int]] = []  # [SIGSTOP ns, SIGCONT ns (0: still frozen)]
        self._faults: list[_Fault] = []  # not judged yet
        self.proc: procs.Child | None = None
        self.paused = False
        self.crashed = False
        self._pending = 0
        self._ready = threading.Event()
        self._changed = threading.Condition()
        self._reader: threading.Thread | None = None
        self._lines: queue.Queue[str | None] = queue.Queue(MAX_QUEUED)
        self._writer: threading.Thread | None = None

    def start(self) -> None:
        if self.module == children.WORKER:
            self.proc = forkserver.start(children.WORKER)  # it waits for its config
        else:  # the storage service: one per sequencer run, started cold
            env = procs.environment(PYTHONPATH=ROOT, PYTHONUNBUFFERED="1")
            self.proc = procs.spawn(
                [sys.executable, "-m", self.module],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
        self._reader = threading.Thread(target=self._read, name=f"client-{self.name}", daemon=True)
        self._reader.start()
        self._lines.put(self.config.to_json())
        self._writer = threading.Thread(
            target=self._write_all, name=f"client-{self.name}-stdin", daemon=True
        )
        self._writer.start()

    def wait_ready(self, timeout_s: float = 15.0) -> None:
        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise LabError(f"client {self.name} exited at start (code {self.proc.returncode})")
            return self._ready.is_set()

        wait_until(ready, timeout_s, f"client {self.name}")

    def send(self, command: Mapping[str, object], index: int | None = None) -> str:
        """Queue a command (scenario step ``index``); a frozen client reads it when it thaws,
        as in real life.

        Never blocks. Returns ``""`` when queued, else why the command was refused.
        """
        if self.crashed or self.proc is None:
            return f"{self.name} has crashed"
        with self._changed:
            try:
                self._lines.put_nowait(json.dumps(command))
            except queue.Full:
                frozen = " while it is frozen" if self.paused else ""
                return f"{self.name} already has {MAX_QUEUED} commands waiting{frozen}"
            self._pending += 1
            self._flight.append(_Command(index, time.monotonic_ns(), self._run_delay()))
        return ""

    def _write_all(self) -> None:
        """The only writer of the process's stdin: it may block here, the engine never does."""
        while (line := self._lines.get()) is not None:
            if self.proc is None or self.proc.stdin is None:
                return
            try:
                self.proc.stdin.write(line + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):  # ValueError: stdin closed
                self._mark_gone()
                return

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)
        with self._changed:
            if not self.paused:
                self._frozen = [*self._frozen[-15:], [time.monotonic_ns(), 0]]
        self.paused = True

    def resume(self) -> None:
        self._signal(signal.SIGCONT)
        with self._changed:
            if self._frozen and not self._frozen[-1][1]:
                self._frozen[-1][1] = time.monotonic_ns()
        self.paused = False

    def fault_landed(self) -> None:
        """A fault was just done to the client (a crash: is being done). Whether it landed
        on a command the machine held up is judged once the client has told what it had done by
        then: when that command is done, or the client is gone."""
        with self._changed:
            if self._flight:
                self._faults.append(_Fault(time.monotonic_ns(), self._run_delay()))

    def crash(self) -> None:
        self.fault_landed()  # now, while its run-queue delay can still be read
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._mark_gone()

    @property
    def idle(self) -> bool:
        return self._pending == 0 or self.crashed

    def wait_idle(self, timeout_s: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.idle, timeout_s)

    def close(self) -> None:
        if self.proc is None:
            return
        self._drop_queued()
        with contextlib.suppress(queue.Full):
            self._lines.put_nowait(None)  # the writer's last line
        procs.stop(self.proc, grace_s=1.0)  # a writer blocked on the pipe gets EPIPE now
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()
        for thread in (self._writer, self._reader):
            if thread is not None:
                thread.join(timeout=2)

    def _drop_queued(self) -> None:
        """Forget the commands not yet written: the run is ending, nobody will run them."""
        with self._changed:
            while True:
                try:
                    if self._lines.get_nowait() is not None:
                        self._pending -= 1
                        if self._flight:
                            self._flight.pop()  # the newest: lines leave the queue in order
                except queue.Empty:
                    break
            self._changed.notify_all()

    def _signal(self, sig: signal.Signals) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def _mark_gone(self) -> None:
        with self._changed:
            self.crashed = True
            self._changed.notify_all()

    def _took(self, t_ns: int) -> None:
        with self._changed:
            command = next((c for c in self._flight if not c.taken_ns), None)
            if command is None:
                return
            command.taken_ns = t_ns
            command.could_ns = could = max(command.sent_ns, self._done_ns)
            command.held_ns = max(0, t_ns - could - self._frozen_ns(could, t_ns))
        if self.on_took is not None:
            self.on_took(command.index, could, command.held_ns, "took", None)

    def _done(self, t_ns: int) -> None:
        with self._changed:
            self._pending -= 1
            command = self._flight.popleft() if self._flight else None
            self._done_ns = max(self._done_ns, t_ns)
            self._changed.notify_all()
        if command is None or not command.taken_ns:
            return
        self._judge_faults(command, t_ns)
        ran_late = self._ran_late_ns(command)
        if ran_late > command.held_ns and self.on_took is not None:  # held up again as it ran
            self.on_took(command.index, command.could_ns, ran_late - command.held_ns, "ran", None)

    def _judge_faults(self, command: _Command, done_ns: int | None) -> None:
        """The faults that landed on ``command`` before it was done (``None``: never, the
        client is gone): how long the machine had held it up by then, each reported."""
        found: list[tuple[int, int, str, int]] = []  # (could, held, how, fault ns)
        with self._changed:
            for fault in self._faults:
                if fault.judged or not command.sent_ns < fault.at_ns < (done_ns or fault.at_ns + 1):
                    continue
                fault.judged = True
                if not command.taken_ns or command.taken_ns > fault.at_ns:  # not begun by then
                    could = command.could_ns or max(command.sent_ns, self._done_ns)
                    held = fault.at_ns - could - self._frozen_ns(could, fault.at_ns)
                    found.append((could, held, "took", fault.at_ns))
                elif fault.delay_ns is not None and command.delay_ns is not None:
                    waited = self._waited(command, fault.delay_ns, fault.at_ns)
                    held = waited - command.held_ns
                    found.append((command.could_ns, held, "ran", fault.at_ns))
            self._faults = [fault for fault in self._faults if not fault.judged]
        for could, held, how, at_ns in found:
            if held > 0 and self.on_took is not None:
                self.on_took(command.index, could, held, how, at_ns)

    def _ran_late_ns(self, command: _Command) -> int:
        """How long the client's process waited for a core since ``command`` was sent."""
        now, at = self._run_delay(), time.monotonic_ns()
        if now is None or command.delay_ns is None:
            return 0
        return self._waited(command, now, at)

    def _waited(self, command: _Command, delay_ns: int, at_ns: int) -> int:
        """The run-queue delay accrued since ``command`` was sent, as read at ``at_ns``: never
        more than the time the client was not frozen in between: a wait cannot outlast the
        time it took (a spread saw the counter grow 2.8 s during a 30 ms command; why, I could
        not tell)."""
        assert command.delay_ns is not None
        since = command.sent_ns
        return max(
            0, min(delay_ns - command.delay_ns, at_ns - since - self._frozen_ns(since, at_ns))
        )

    def _run_delay(self) -> int | None:
        return procs.run_delay_ns(self.proc.pid) if self.proc is not None else None

    def _frozen_ns(self, since: int, until: int) -> int:
        """How long, between ``since`` and ``until``, the lab kept the client frozen."""
        return sum(
            max(0, min(end or until, until) - max(start, since)) for start, end in self._frozen
        )

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            kind = message.pop("kind")
            t_ns = int(message.pop("t_ns"))
            if kind == "_ready":
                self.ready = message
                self._ready.set()
            elif kind == "_took":
                self._took(t_ns)
            elif kind == "_done":
                self._done(t_ns)
            else:
                self.record(self.name, kind, message, t_ns)
        if self._flight:  # gone (crashed) with a command not done: what a fault landed on
            self._judge_faults(self._flight[0], None)
        self._mark_gone()

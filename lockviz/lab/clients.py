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
from typing import Protocol

from lockviz.jsontypes import JsonObject
from lockviz.lab import children, forkserver, procs
from lockviz.lab.errors import LabError
from lockviz.lab.events import Record
from lockviz.lab.procs import wait_until

MAX_QUEUED = 64  # commands waiting for one client before more are refused
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A command the client took: (the step's index, when it could have begun, when it began), in
# the host's monotonic ns. It could begin once sent, the client's previous command done and the
# client thawed, whichever came last: only a busy machine makes it begin later than that.
Took = Callable[[int | None, int, int], None]


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
        self._sent: deque[tuple[int | None, int]] = deque()  # (index, sent ns), not yet taken
        self._free_ns = 0  # when its last command was done, or it thawed
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
            self._sent.append((index, time.monotonic_ns()))
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
        self.paused = True

    def resume(self) -> None:
        self._signal(signal.SIGCONT)
        self.paused = False
        self._free_ns = max(self._free_ns, time.monotonic_ns())

    def crash(self) -> None:
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
                        if self._sent:
                            self._sent.pop()  # the newest: lines leave the queue in order
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
            if not self._sent:
                return
            index, sent_ns = self._sent.popleft()
            could_ns = max(sent_ns, self._free_ns)
        if self.on_took is not None:
            self.on_took(index, could_ns, t_ns)

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
                with self._changed:
                    self._pending -= 1
                    self._free_ns = max(self._free_ns, t_ns)
                    self._changed.notify_all()
            else:
                self.record(self.name, kind, message, t_ns)
        self._mark_gone()

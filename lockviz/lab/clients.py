"""The run engine's handle on one client process (see :mod:`lockviz.lab.worker`).

The process gets its :class:`~lockviz.lab.config.ClientConfig` as the first line on its stdin,
then one command per line: the scenario step itself (``{"do": "acquire", ...}``). Faults are
done *to* the process from outside, as the world would do them: a GC pause is SIGSTOP then
SIGCONT (everything in the process stops, its timers and heartbeats included), a crash is
SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from lockviz.lab import procs
from lockviz.lab.config import ClientConfig
from lockviz.lab.errors import LabError
from lockviz.lab.events import Record
from lockviz.lab.procs import wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ClientProcess:
    def __init__(self, config: ClientConfig, record: Record) -> None:
        self.name = config.name
        self.config = config
        self.record = record
        self.proc: subprocess.Popen[str] | None = None
        self.paused = False
        self.crashed = False
        self._pending = 0
        self._ready = threading.Event()
        self._changed = threading.Condition()
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONUNBUFFERED": "1"}
        self.proc = procs.spawn(
            [sys.executable, "-m", "lockviz.lab.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self._reader = threading.Thread(target=self._read, name=f"client-{self.name}", daemon=True)
        self._reader.start()
        self._write(self.config.to_json())

    def wait_ready(self, timeout_s: float = 15.0) -> None:
        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise LabError(f"client {self.name} exited at start (code {self.proc.returncode})")
            return self._ready.is_set()

        wait_until(ready, timeout_s, f"client {self.name}")

    def send(self, command: dict[str, Any]) -> None:
        """Queue a command; a frozen client will read it when it thaws, as in real life."""
        if self.crashed or self.proc is None:
            return
        with self._changed:
            self._pending += 1
        self._write(json.dumps(command))

    def _write(self, line: str) -> None:
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._mark_gone()

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self._signal(signal.SIGCONT)
        self.paused = False

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
        if self.proc.poll() is None and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        procs.stop(self.proc, grace_s=1.0)
        if self._reader is not None:
            self._reader.join(timeout=2)

    def _signal(self, sig: signal.Signals) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def _mark_gone(self) -> None:
        with self._changed:
            self.crashed = True
            self._changed.notify_all()

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
                self._ready.set()
            elif kind == "_done":
                with self._changed:
                    self._pending -= 1
                    self._changed.notify_all()
            else:
                self.record(self.name, kind, message, t_ns)
        self._mark_gone()

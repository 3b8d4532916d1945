"""A storage service that checks sequencers: the resource's own process, in front of the storage.

The storage is a Lua script on a Redis node (:mod:`algorithms.fenced_storage`). A script cannot
call ZooKeeper or etcd, and a sequencer check must be made by the resource, not by the writer:
a writer that checked its own lock and then wrote could pause between the two, which is the
very hole the check is meant to close. So the check is made by this small service, which stands
where a real resource's server would: clients send it their writes (on their own network links,
so a partition between a client and ``storage`` still cuts them off), and for each write it

1. answers a repeated idempotency key with the first result, asking nobody;
2. checks the writer's :class:`~algorithms.sequencer.Sequencer` with the lock service
   (:mod:`algorithms.sequencer`): it must name the lock that protects this resource, and the
   lock service must say it is current;
3. if it is, applies the write with the storage's plain script; if not, refuses it with the
   lock service's reason.

Writes are served one at a time (check and apply under one mutex), so no other write through
the service comes between a write's check and its apply. Reads go straight to the storage.

The wire protocol is one JSON object per line each way, on plain TCP: ``{"op": "write",
"writer": ..., "value": ..., "token": ..., "read": ..., "key": ..., "sequencer": {...}}`` or
``{"op": "read"}``, answered by ``{"ok": true, ...}`` with the fields of the storage's reply, or
``{"ok": false, "error": ...}``. With a ``password`` (the storage node's own), a connection's
first line must be ``{"op": "auth", "password": ...}``; it gets no answer, and a wrong one closes
the connection: the service is as private as the storage behind it. The client sends it in the
same write as its first request, so it costs no round trip. :class:`ServiceStorage` is the
client side, with the same verbs and events as :class:`~algorithms.fenced_storage.FencedStorage`.
"""

from __future__ import annotations

import hmac
import json
import socket
import socketserver
import threading
from typing import Any, BinaryIO

from algorithms.errors import BackendUnavailable
from algorithms.events import EventSink, Reporter, discard
from algorithms.fenced_storage import (
    FencedStorage,
    ReadResult,
    WriteResult,
    read_details,
    write_args,
)
from algorithms.sequencer import Check, Sequencer

MAX_LINE = 64 * 1024  # a request is a few hundred bytes; anything longer is not a client's


class StorageService:
    """Checks each write's sequencer with the lock service, then applies it (see the module)."""

    def __init__(
        self, storage: FencedStorage, check: Check, lock: str, password: str | None = None
    ) -> None:
        if storage.kind != "plain":
            raise ValueError("the service makes the check: its storage must apply plainly")
        self.storage = storage
        self.check = check
        self.lock = lock  # the lock that protects this resource, as sequencers name it
        self.password = password
        self._mutex = threading.Lock()
        self._server: socketserver.ThreadingTCPServer | None = None

    def write(self, request: dict[str, Any]) -> WriteResult:
        writer = str(request.get("writer") or "")
        value, token = str(request["value"]), int(request.get("token") or 0)
        read = request.get("read")
        read = int(read) if read is not None else None
        key = request.get("key")
        key = str(key) if key else None
        with self._mutex:
            if key is not None and (first := self.storage.remembered(key, token, read)):
                return first
            sequencer = request.get("sequencer")
            refusal = self._refusal(writer, sequencer)
            if refusal:
                return WriteResult(False, token, 0, read=read, reason=refusal)
            return self.storage.apply(value, token, read=read, key=key, writer=writer)

    def _refusal(self, writer: str, data: object) -> str:
        """Why the write must be refused ('' when the lock service says its lock is current)."""
        if not isinstance(data, dict):
            return f"{writer or 'the writer'} has no sequencer: it was never granted the lock"
        try:
            sequencer = Sequencer.from_dict(data)
        except (KeyError, TypeError, ValueError):
            return "the sequencer cannot be read"
        if (sequencer.service, sequencer.lock) != (self.check.service, self.lock):
            return f"the sequencer names another lock ({sequencer.service} {sequencer.lock})"
        answer = self.check.check(sequencer)
        return "" if answer.current else answer.why

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request's reply, as it goes back on the wire."""
        try:
            if request.get("op") == "read":
                return {"ok": True, **read_details(self.storage.fetch())}
            if request.get("op") == "write":
                return {"ok": True, **self.write(request).details()}
        except BackendUnavailable as exc:
            return {"ok": False, "error": exc.detail}
        except (KeyError, TypeError, ValueError) as exc:
            return {"ok": False, "error": f"a malformed request ({exc})"}
        return {"ok": False, "error": f"unknown op {request.get('op')!r}"}

    def admits(self, first: bytes) -> bool:
        """Whether a connection's first line is the password."""
        try:
            given = json.loads(first)
        except ValueError:
            return False
        if not isinstance(given, dict) or given.get("op") != "auth":
            return False
        return hmac.compare_digest(str(given.get("password", "")), self.password or "")

    def serve(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen (port 0: any free one) in a thread of its own; returns the port."""
        service = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                if service.password is not None and not service.admits(
                    self.rfile.readline(MAX_LINE)
                ):
                    return  # no answer: the connection closes
                while line := self.rfile.readline(MAX_LINE):
                    try:
                        request = json.loads(line)
                    except ValueError:
                        return
                    reply = service.answer(request if isinstance(request, dict) else {})
                    self.wfile.write(json.dumps(reply).encode() + b"\n")

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer((host, port), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, name="storage-service", daemon=True
        ).start()
        return int(self._server.server_address[1])

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        self.check.close()


class ServiceStorage:
    """A client of :class:`StorageService`: the verbs and events of a FencedStorage."""

    kind = "sequencer"

    def __init__(
        self,
        host: str,
        port: int,
        *,
        writer: str,
        node: str = "storage",
        timeout_ms: int = 1000,
        password: str | None = None,
        on_event: EventSink = discard,
    ) -> None:
        self.host, self.port, self.node, self.writer = host, port, node, writer
        self.password = password
        self.timeout_s = timeout_ms / 1000
        self._report = Reporter(on_event)
        self._sock: socket.socket | None = None
        self._file: BinaryIO | None = None
        self._first = b""  # what goes out before the next request: a new connection's auth

    def prepare(self) -> None:
        """Connect now, so a write is one round trip (a failure here is tried again later)."""
        self._connect()

    def write(
        self,
        value: str,
        token: int,
        *,
        read: int | None = None,
        key: str | None = None,
        sequencer: Sequencer | None = None,
    ) -> WriteResult:
        args = write_args(value, token, read, key)
        call = self._report.request(self.node, "write", **args)
        request = {"op": "write", "writer": self.writer, **args}
        request["sequencer"] = sequencer.as_dict() if sequencer is not None else None
        try:
            reply = self._call(request)
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "write", False, error=exc.detail)
            raise
        result = WriteResult(
            accepted=bool(reply.get("accepted")),
            token=token,
            highest=int(reply.get("highest") or 0),
            found=reply.get("found"),
            version=reply.get("version"),
            read=read,
            duplicate=bool(reply.get("duplicate")),
            reason=str(reply.get("reason") or ""),
        )
        self._report.reply(call, self.node, "write", True, **result.details())
        return result

    def read_versioned(self) -> ReadResult:
        call = self._report.request(self.node, "read")
        try:
            reply = self._call({"op": "read"})
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "read", False, error=exc.detail)
            raise
        value = reply.get("value")
        result = ReadResult(None if value is None else str(value), int(reply.get("version") or 0))
        self._report.reply(call, self.node, "read", True, **read_details(result))
        return result

    def close(self) -> None:
        sock, self._sock, self._file = self._sock, None, None
        if sock is not None:
            sock.close()

    def _connect(self) -> None:
        if self._sock is None:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
            except OSError as exc:
                raise BackendUnavailable(self.node, f"connection failed ({exc})") from exc
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock, self._file = sock, sock.makefile("rb")
            if self.password is not None:
                auth = {"op": "auth", "password": self.password}
                self._first = json.dumps(auth).encode() + b"\n"

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request and its reply within the timeout; a failed call drops the connection,
        so a late reply is never read as the answer to the next request."""
        self._connect()
        assert self._sock is not None and self._file is not None
        try:
            first, self._first = self._first, b""
            self._sock.sendall(first + json.dumps(request).encode() + b"\n")
            line = self._file.readline(MAX_LINE)
        except TimeoutError as exc:
            self.close()
            raise BackendUnavailable(self.node, "no reply before the timeout") from exc
        except OSError as exc:
            self.close()
            raise BackendUnavailable(self.node, f"connection failed ({exc})") from exc
        if not line:
            self.close()
            raise BackendUnavailable(self.node, "connection failed (closed by the service)")
        reply: dict[str, Any] = json.loads(line)
        if not reply.get("ok"):
            raise BackendUnavailable(self.node, str(reply.get("error") or "failed"))
        return reply

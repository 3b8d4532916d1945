"""Request bodies are bounded before they are read, and uploads stop at the limit.

Django's ASGI handler reads a whole request body (to memory, then to a temp file) before a view
can look at its size. :class:`BodyLimit` sits in front of it: a request whose Content-Length
is over ``LOCKVIZ_MAX_BODY`` gets 413 with a sentence before a byte of its body is read, and a
body without a length (chunked) is counted as it arrives and cut off at the limit.
:class:`LimitedUploadHandler` is the second line, inside Django: a file part that grows past the
import limit stops being kept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest

# ASGI's own shapes (the spec's dicts of names to values of many types; the servers and
# Django's handlers each spell them a little differently): read here only after narrowing.
Scope = dict[str, object]
Message = Mapping[str, object]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def too_big_text(limit: int) -> bytes:
    mib = limit / 1024 / 1024
    return (
        f"This request is larger than {mib:.0f} MB, the most lockviz accepts. An exported run "
        "or a scenario is far smaller: check that you chose the right file."
    ).encode()


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: int | None = None) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit or settings.LOCKVIZ_MAX_BODY
        length = dict(headers(scope)).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await _refuse(send, limit)
            return
        seen = 0
        refused = False

        async def counted() -> Message:
            nonlocal seen, refused
            message: Message = await receive()
            body = message.get("body", b"")
            if message["type"] == "http.request" and isinstance(body, bytes):
                seen += len(body)
                if seen > limit:
                    refused = True
                    await _refuse(send, limit)
                    return {"type": "http.disconnect"}  # Django stops reading: the client left
            return message

        async def guarded(message: Message) -> None:
            if not refused:  # after the 413, Django's own answer must not follow it
                await send(message)

        await self.app(scope, counted, guarded)


def headers(scope: Mapping[str, object]) -> list[tuple[bytes, bytes]]:
    """The request's headers, as the ASGI spec has them: (name, value) byte pairs."""
    found = scope.get("headers")
    return [(bytes(n), bytes(v)) for n, v in found] if isinstance(found, list | tuple) else []


async def _refuse(send: Send, limit: int) -> None:
    body = too_big_text(limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class LimitedUploadHandler(FileUploadHandler):
    """Stops keeping an uploaded file once it is over the import limit (the view says so)."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > settings.LOCKVIZ_MAX_UPLOAD:
            # The view names the limit; Django's request has no field for "too big".
            too_big = (self.field_name, self.file_name)
            self.request.lockviz_upload_too_big = too_big  # type: ignore[union-attr]
            raise StopUpload(connection_reset=False)
        return raw_data  # the next handler (memory or temp file) keeps it

    def file_complete(self, file_size: int) -> None:
        return None


def guard_daphne(limit: int) -> None:
    """Make Daphne refuse an oversized body before it reads it (``serve`` calls this once).

    Daphne (on Twisted) reads a request's whole body, into a temp file past 100 kB, before the
    ASGI application sees the request, so :class:`BodyLimit` alone would come too late for a
    large upload. Twisted tells the request its Content-Length (``gotLength``) and then each
    chunk; this request class answers 413 and drops the connection at the first sign of an
    oversized body. Daphne builds its requests from ``daphne.http_protocol.WebRequest``.
    """
    from daphne import http_protocol

    if getattr(http_protocol.WebRequest, "lockviz_limit", None) is not None:
        return
    base = http_protocol.WebRequest

    class LimitedWebRequest(base):  # type: ignore[misc, valid-type]
        lockviz_limit = limit
        lockviz_seen = 0

        def gotLength(self, length: int | None) -> None:
            if length is not None and length > self.lockviz_limit:
                self._too_big()
                return
            super().gotLength(length)

        def handleContentChunk(self, data: bytes) -> None:
            self.lockviz_seen += len(data)
            if self.lockviz_seen > self.lockviz_limit:
                self._too_big()
                return
            super().handleContentChunk(data)

        def _too_big(self) -> None:
            body = too_big_text(self.lockviz_limit)
            transport = self.channel.transport
            transport.write(
                b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            transport.loseConnection()

    http_protocol.WebRequest = LimitedWebRequest

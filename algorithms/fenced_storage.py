"""The resource a lock protects: a store that can refuse writes it should not apply.

The check runs on the storage server (a Lua script on its own Redis node), atomically with the
write, so nothing can come between the check and the write. What it checks is the storage's
*kind*:

* ``plain`` accepts every write, as most real storage does: a stale write silently overwrites
  newer data.
* ``fenced`` remembers the highest fencing token it has seen and rejects a write carrying a
  lower one (Kleppmann's fencing). Equal tokens are accepted (the same holder writing twice).
  It only knows a token is old once it has seen a newer one: a stale write that arrives
  *before* the new holder's first write is accepted (the fencing hole).
* ``fenced_reads`` is ``fenced`` whose reads carry the reader's token too: a read raises the
  highest token seen and a lower one is refused, so a new holder that reads before it writes
  closes the fencing hole. Cost: every read carries a token; a writer that never reads does not.
* ``cas`` keeps a version number, raised by every accepted write, and applies a write only if
  the data is still at the version its writer last ``read`` (compare-and-set). A write based on
  an out-of-date read is rejected; a writer that never read compares against version 0. It
  needs no lock at all, and checks none: a client whose lock is gone but whose read is still
  current is accepted.
* ``sequencer`` is not checked here: a storage service in front of this node asks the lock
  service first (:mod:`algorithms.sequencer`) and then writes ``plain``.

Every kind keeps the version and reports it (``found``: the version a write found, ``version``:
the version after it), so the history says which writes were based on an out-of-date read.

Idempotency keys: a write may carry a ``key``. The first write with a key is checked and applied
as usual and its result is remembered under the key; every later write with that key is answered
with the first result (``duplicate``) and applies nothing. A client that retries a write whose
reply it never got (a timeout, a partition) can then not apply it twice.

It keeps an append-only log of every accepted write: what the data went through.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from algorithms.errors import BackendUnavailable
from algorithms.events import EventSink, Reporter, discard
from algorithms.redis_client import boundary

KINDS = ("plain", "fenced", "fenced_reads", "cas")  # the checks the script itself makes
FENCED = ("fenced", "fenced_reads")  # the kinds that compare tokens

# KEYS[1] highest token seen, KEYS[2] current value, KEYS[3] log of accepted writes, KEYS[4] the
# value's version, KEYS[5] first results by idempotency key;
# ARGV[1] writer's token, ARGV[2] value, ARGV[3] the check ('plain' | 'fenced' | 'fenced_reads'
# | 'cas'),
# ARGV[4] writer's name, ARGV[5] the version the writer last read ('' if it never read),
# ARGV[6] idempotency key ('' for none).
# Returns {accepted (1|0), highest token seen before, version found, version after, duplicate
# (1|0)}; a repeated key returns its first result, with duplicate 1, and changes nothing.
WRITE_SCRIPT = """
if ARGV[6] ~= '' then
    local first = redis.call('HGET', KEYS[5], ARGV[6])
    if first then
        local a, h, f, v = string.match(first, '^(%d+) (%d+) (%d+) (%d+)$')
        return {tonumber(a), tonumber(h), tonumber(f), tonumber(v), 1}
    end
end
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
local version = tonumber(redis.call('GET', KEYS[4]) or '0')
local token = tonumber(ARGV[1])
local accepted = 1
if (ARGV[3] == 'fenced' or ARGV[3] == 'fenced_reads') and token < highest then
    accepted = 0
elseif ARGV[3] == 'cas' and tonumber(ARGV[5] == '' and '0' or ARGV[5]) ~= version then
    accepted = 0
end
local after = version
if accepted == 1 then
    if token > highest then
        redis.call('SET', KEYS[1], token)
    end
    after = version + 1
    redis.call('SET', KEYS[2], ARGV[2])
    redis.call('SET', KEYS[4], after)
    redis.call('RPUSH', KEYS[3], ARGV[4] .. ' ' .. ARGV[1] .. ' ' .. ARGV[2])
end
if ARGV[6] ~= '' then
    local result = accepted .. ' ' .. highest .. ' ' .. version .. ' ' .. after
    redis.call('HSET', KEYS[5], ARGV[6], result)
end
return {accepted, highest, version, after, 0}
"""

# KEYS as WRITE_SCRIPT's; ARGV[1] the reader's token ('' for none), ARGV[2] the kind. Returns {1
# and the value, or 0 and '' (none yet, or refused); version; highest before; accepted (1|0)}.
READ_SCRIPT = """
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
local version = tonumber(redis.call('GET', KEYS[4]) or '0')
if ARGV[2] == 'fenced_reads' and ARGV[1] ~= '' then
    local token = tonumber(ARGV[1])
    if token < highest then
        return {0, '', version, highest, 0}
    end
    if token > highest then
        redis.call('SET', KEYS[1], token)
    end
end
local value = redis.call('GET', KEYS[2])
if value then
    return {1, value, version, highest, 1}
end
return {0, '', version, highest, 1}
"""


@dataclass(frozen=True)
class WriteResult:
    accepted: bool
    token: int
    highest: int  # the highest token the storage had seen before this write
    found: int | None = None  # the version the write found (None: it never reached the storage)
    version: int | None = None  # the version after it (found, when it was not applied)
    read: int | None = None  # the version its writer last read (None: it never read)
    duplicate: bool = False  # a repeated idempotency key: the first write's result, not applied
    reason: str = ""  # why it was rejected ("1 < 2", "read v0, now v1"); "" when accepted

    def details(self) -> dict[str, object]:
        """The reply event's fields (docs/events.md)."""
        found: dict[str, object] = {"accepted": self.accepted, "token": self.token}
        found["highest"] = self.highest
        if self.found is not None:
            found.update(found=self.found, version=self.version)
        if self.duplicate:
            found["duplicate"] = True
        if not self.accepted:
            found["reason"] = self.reason
        return found


@dataclass(frozen=True)
class ReadResult:
    value: str | None  # None: nothing written yet (or the read was refused)
    version: int
    token: int | None = None  # the reader's token, when the read carried one (fenced reads)
    highest: int | None = None  # the highest token the storage had seen before this read
    accepted: bool = True  # False: a fenced read with a lower token than the highest seen

    @property
    def reason(self) -> str:  # why the read was refused ("1 < 2"); "" when it was not
        return "" if self.accepted else f"{self.token} < {self.highest}"


class FencedStorage:
    """Client side of the storage server: ``write(value, token)`` and ``read()``.

    ``kind`` is one of :data:`KINDS`; the older ``fencing`` flag means ``fenced`` or ``plain``.
    """

    def __init__(
        self,
        client: redis.Redis,
        name: str,
        *,
        kind: str | None = None,
        fencing: bool | None = None,
        node: str = "storage",
        writer: str = "",
        on_event: EventSink = discard,
    ) -> None:
        self.client = client
        self.keys = [f"{name}:highest", f"{name}:value", f"{name}:log", f"{name}:version"]
        self.keys.append(f"{name}:keys")
        self.kind = kind or ("plain" if fencing is False else "fenced")
        if self.kind not in KINDS:
            raise ValueError(f"the storage script checks {KINDS}, not {self.kind!r}")
        self.node = node
        self.writer = writer
        self._report = Reporter(on_event)
        self._write = client.register_script(WRITE_SCRIPT)
        self._read = client.register_script(READ_SCRIPT)

    @property
    def fencing(self) -> bool:
        return self.kind in FENCED

    def prepare(self) -> None:
        """Connect and load the scripts now, so each write is exactly one round trip."""
        with boundary(self.node):
            self.client.script_load(WRITE_SCRIPT)
            self.client.script_load(READ_SCRIPT)

    def apply(
        self,
        value: str,
        token: int,
        *,
        read: int | None = None,
        key: str | None = None,
        writer: str | None = None,
    ) -> WriteResult:
        """The script's answer to one write, unreported (a storage service reports its own)."""
        with boundary(self.node):
            accepted, highest, found, after, duplicate = self._write(
                keys=self.keys,
                args=[
                    token,
                    value,
                    self.kind,
                    writer if writer is not None else self.writer,
                    "" if read is None else read,
                    key or "",
                ],
            )
        reason = ""
        if not accepted and duplicate:
            reason = f"the first write with key {key!r} was rejected"
        elif not accepted:
            reason = (
                f"{token} < {highest}"
                if self.kind in FENCED
                else f"read v{read or 0}, now v{found}"
            )
        return WriteResult(
            bool(accepted), token, int(highest), int(found), int(after), read, bool(duplicate),
            reason,
        )  # fmt: skip

    def remembered(self, key: str, token: int, read: int | None) -> WriteResult | None:
        """The first result of a write with idempotency ``key``, or ``None`` if there was none."""
        with boundary(self.node):
            first = self.client.hget(self.keys[4], key)
        if first is None:
            return None
        accepted, highest, found, after = (int(part) for part in str(first).split())
        reason = "" if accepted else f"the first write with key {key!r} was rejected"
        return WriteResult(bool(accepted), token, highest, found, after, read, True, reason)

    def write(
        self, value: str, token: int, *, read: int | None = None, key: str | None = None
    ) -> WriteResult:
        """Write ``value`` with the writer's fencing token (0 when it holds none), the version
        it last read (``None`` if it never read) and its idempotency ``key`` (if any)."""
        args = write_args(value, token, read, key)
        call = self._report.request(self.node, "write", **args)
        try:
            result = self.apply(value, token, read=read, key=key)
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "write", False, error=exc.detail)
            raise
        self._report.reply(call, self.node, "write", True, **result.details())
        return result

    def read_versioned(self, token: int | None = None) -> ReadResult:
        """The value and its version, reported as a ``read`` request and reply; ``token``, the
        reader's, only a ``fenced_reads`` storage is sent (it checks and remembers it)."""
        token = token if self.kind == "fenced_reads" else None
        carried = {} if token is None else {"token": token}
        call = self._report.request(self.node, "read", **carried)
        try:
            result = self.fetch(token)
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "read", False, error=exc.detail)
            raise
        self._report.reply(call, self.node, "read", True, **read_details(result))
        return result

    def fetch(self, token: int | None = None) -> ReadResult:
        """The value and its version, unreported (a ``fenced_reads`` storage checks ``token``)."""
        with boundary(self.node):
            present, value, version, highest, accepted = self._read(
                keys=self.keys, args=["" if token is None else token, self.kind]
            )
        found = str(value) if present else None
        if token is None:
            return ReadResult(found, int(version))
        return ReadResult(found, int(version), token, int(highest), bool(accepted))

    def read(self) -> tuple[str | None, list[str]]:
        """The current value and the log of accepted writes (``"writer token value"``)."""
        with boundary(self.node):
            value = self.client.get(self.keys[1])
            log = self.client.lrange(self.keys[2], 0, -1)
        return (None if value is None else str(value)), [str(entry) for entry in log]


def write_args(value: str, token: int, read: int | None, key: str | None) -> dict[str, object]:
    """A write request's fields: the value, the token, and what the write is based on."""
    args: dict[str, object] = {"value": value, "token": token}
    if read is not None:
        args["read"] = read
    if key is not None:
        args["key"] = key
    return args


def read_details(result: ReadResult) -> dict[str, object]:
    """A read reply's fields: the value (``None`` before any write) and its version; a fenced
    read's also whether it was accepted, the highest token seen before it, and why not."""
    found: dict[str, object] = {"value": result.value, "version": result.version}
    if result.token is not None:
        found.update(accepted=result.accepted, token=result.token, highest=result.highest)
        if not result.accepted:
            found["reason"] = result.reason
    return found

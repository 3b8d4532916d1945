"""The resource a lock protects: a store that can refuse writes from stale lock holders.

The check runs on the storage server (a Lua script on its own Redis node), atomically with the
write, exactly as Kleppmann's fencing proposal needs: the storage remembers the highest fencing
token it has seen and rejects any write carrying a lower one. Equal tokens are accepted (the
same holder writing twice). With ``fencing=False`` the storage accepts every write, as most real
storage does; stale writes then silently overwrite newer data.

The storage keeps an append-only log of every accepted write, so a run can show what the data
went through.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from algorithms.errors import BackendUnavailable
from algorithms.events import EventSink, Reporter, discard
from algorithms.redis_client import boundary

# KEYS[1] highest token seen, KEYS[2] current value, KEYS[3] log of accepted writes;
# ARGV[1] writer's token, ARGV[2] value, ARGV[3] '1' to fence, ARGV[4] writer's name.
# Returns {accepted (1|0), highest token seen before this write}.
WRITE_SCRIPT = """
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if ARGV[3] == '1' and token < highest then
    return {0, highest}
end
if token > highest then
    redis.call('SET', KEYS[1], token)
end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[4] .. ' ' .. ARGV[1] .. ' ' .. ARGV[2])
return {1, highest}
"""


@dataclass(frozen=True)
class WriteResult:
    accepted: bool
    token: int
    highest: int  # the highest token the storage had seen before this write

    @property
    def reason(self) -> str:
        return f"{self.token} < {self.highest}" if not self.accepted else ""


class FencedStorage:
    """Client side of the storage server: ``write(value, token)`` and ``read()``."""

    def __init__(
        self,
        client: redis.Redis,
        name: str,
        *,
        fencing: bool,
        node: str = "storage",
        writer: str = "",
        on_event: EventSink = discard,
    ) -> None:
        self.client = client
        self.keys = [f"{name}:highest", f"{name}:value", f"{name}:log"]
        self.fencing = fencing
        self.node = node
        self.writer = writer
        self._report = Reporter(on_event)
        self._write = client.register_script(WRITE_SCRIPT)

    def prepare(self) -> None:
        """Connect and load the script now, so each write is exactly one round trip."""
        with boundary(self.node):
            self.client.script_load(WRITE_SCRIPT)

    def write(self, value: str, token: int) -> WriteResult:
        """Write ``value`` with the writer's fencing token (0 when it holds none)."""
        call = self._report.request(self.node, "write", value=value, token=token)
        try:
            with boundary(self.node):
                accepted, highest = self._write(
                    keys=self.keys,
                    args=[token, value, "1" if self.fencing else "0", self.writer],
                )
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "write", False, error=exc.detail)
            raise
        result = WriteResult(bool(accepted), token, int(highest))
        details: dict[str, object] = {"accepted": result.accepted, "token": token}
        details["highest"] = result.highest
        if not result.accepted:
            details["reason"] = result.reason
        self._report.reply(call, self.node, "write", True, **details)
        return result

    def read(self) -> tuple[str | None, list[str]]:
        """The current value and the log of accepted writes (``"writer token value"``)."""
        with boundary(self.node):
            value = self.client.get(self.keys[1])
            log = self.client.lrange(self.keys[2], 0, -1)
        return (None if value is None else str(value)), [str(entry) for entry in log]

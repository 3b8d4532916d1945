"""A burst's publish: an event's stamp to Redis' answer to its PUBLISH, in this process.

What a lab host's publisher (lockviz.live.broadcast) does for a run: bursts of five events 0.8 ms
apart (a release), one burst every 50 ms, on the app's own channel layer (an embedded
redis-server). ``--busy N`` starts N threads that stay busy in Python beside it, as a run's
threads are at times; ``--switch-ms`` is the interpreter's switch interval (Python's default
5 ms; lockviz sets 1 ms); ``--one-at-a-time`` sends each message with its own ``group_send``, as
the publisher did before it pipelined what queued. Prints p50/p90/p99 of the lag in ms.

    .venv/bin/python -m bench.publish --busy 2 --switch-ms 5 --one-at-a-time
    .venv/bin/python -m bench.publish --busy 2 --switch-ms 1
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import django

BURSTS, PER_BURST, WARM_UP = 150, 5, 25


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=0, help="threads busy in Python beside it")
    parser.add_argument("--switch-ms", type=float, default=1.0)
    parser.add_argument("--one-at-a-time", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lockviz.settings")
    django.setup()
    from channels.layers import BaseChannelLayer

    from lockviz.live import broadcast

    lags: list[float] = []
    sent = broadcast._send_all

    async def timed(layer: BaseChannelLayer, sends: list[tuple[str, broadcast.Message]]) -> None:
        if args.one_at_a_time:
            for group, message in sends:
                await layer.group_send(group, dict(message))
        else:
            await sent(layer, sends)
        now = time.monotonic_ns()
        for _, message in sends:
            if message["type"] == "run.event" and message["seq"] > WARM_UP:
                stamp = int(message["text"].rsplit('"published_ns": ', 1)[1].rstrip("}"))
                lags.append((now - stamp) / 1e6)

    broadcast._send_all = timed
    sys.setswitchinterval(args.switch_ms / 1000)
    stop = threading.Event()
    for _ in range(args.busy):
        threading.Thread(target=busy, args=(stop,), daemon=True).start()
    play(broadcast.publish)
    stop.set()
    lags.sort()

    def pick(q: float) -> float:
        return lags[min(len(lags) - 1, int(q * len(lags)))]

    print(
        f"busy threads {args.busy}, switch {args.switch_ms:g} ms, "
        f"{'one at a time' if args.one_at_a_time else 'pipelined'}: {len(lags)} events, "
        f"p50 {pick(0.5):.2f} / p90 {pick(0.9):.2f} / p99 {pick(0.99):.2f} ms "
        f"(load average {os.getloadavg()[0]:.1f})"
    )


def busy(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(20_000))


def play(publish: Callable[[str, Any], None]) -> None:
    """The bursts, as a run's thread publishes them; then time for the last to go out."""
    seq = 0
    for _ in range(BURSTS):
        for _ in range(PER_BURST):
            seq += 1
            event = {"seq": seq, "kind": "note", "said": "x" * 300}
            publish("bench-publish", {"type": "run.event", "event": event})
            time.sleep(0.0008)
        time.sleep(0.05)
    time.sleep(0.5)


if __name__ == "__main__":
    main()

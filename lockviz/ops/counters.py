"""The counters, gauges and histogram the app moves as things happen, and their one-line hooks.

The bottom of :mod:`lockviz.ops`: the registry and what the rest of the app moves with one call
(``counters.refused("not_owner")``), importing nothing of lockviz, so that the live fan-out
(:mod:`lockviz.live.broadcast`) and the views can count without pulling in what
:mod:`lockviz.ops.metrics` reads at each scrape (the database, the lab hosts). Every metric's
name and meaning is in :mod:`lockviz.ops.metrics`' table.
"""

from __future__ import annotations

import time
from typing import Literal, get_args

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

Reason = Literal[
    "lab_busy", "database_busy", "over_share", "no_room", "not_owner", "not_live", "invalid"
]
Stream = Literal["run", "room"]

# No *_created series: they double the output and say nothing here (the call is untyped).
disable_created_metrics()  # type: ignore[no-untyped-call]
# The app's own registry: what /metrics shows is exactly what is declared here.
REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)

REFUSALS = Counter(
    "lockviz_refusals",
    "Requests the app refused, by reason: lab_busy (503), database_busy (503), over_share (429), "
    "no_room (404), not_owner (403), not_live (409), invalid (400)",
    ["reason"],
    registry=REGISTRY,
)
VIEWERS = Gauge(
    "lockviz_viewers",
    "Live streams open on this process: a run's events (run) or a class's room (room)",
    ["stream"],
    registry=REGISTRY,
)
DROPPED = Counter(
    "lockviz_viewers_dropped",
    "Live viewers dropped for not reading what they were sent (LOCKVIZ_MAX_UNSENT)",
    ["stream"],
    registry=REGISTRY,
)
PUBLISH_SECONDS = Histogram(
    "lockviz_event_publish_seconds",
    "Seconds from a live message handed to the publisher to the channel layer taking it",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=REGISTRY,
)
for _reason in get_args(Reason):  # every reason shows from the start, at 0
    REFUSALS.labels(_reason)
for _stream in get_args(Stream):
    VIEWERS.labels(_stream)
    DROPPED.labels(_stream)


# -- the hooks: one line where the thing happens ----------------------------------------------


def refused(reason: Reason) -> None:
    """The app refused a request, for ``reason``."""
    REFUSALS.labels(reason).inc()


def viewers(stream: Stream, change: int) -> None:
    """A live stream of kind ``stream`` opened (+1) or closed (-1) on this process."""
    VIEWERS.labels(stream).inc(change)


def dropped(stream: Stream) -> None:
    """A viewer of a live stream of kind ``stream`` was dropped: too far behind."""
    DROPPED.labels(stream).inc()


def published(queued_at: float) -> None:
    """A live message queued at ``queued_at`` (``time.monotonic()``) has been sent."""
    PUBLISH_SECONDS.observe(time.monotonic() - queued_at)

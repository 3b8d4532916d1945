"""Every metric lockviz exports to Prometheus (``/metrics``), and the hooks that move them.

What an admin running a class watches, by name:

================================== ======= =============================================
``lockviz_runs{status}``           gauge   runs in the database by status (queued,
                                           running, finished, failed, interrupted,
                                           cancelled), counted at each scrape
``lockviz_lab_slots{state}``       gauge   this process's lab: runs playing or starting
                                           (``in_use``) and room for more (``free``); a
                                           web process with lab hosts: every host's sum
``lockviz_lab_limit``              gauge   how many runs may play at once now: it adapts
                                           to the machine (lockviz.lab.capacity), up to
                                           ``LOCKVIZ_MAX_RUNS``
``lockviz_queue_length``           gauge   runs of this process waiting for a slot (with
                                           lab hosts: runs no host has taken yet)
``lockviz_viewers{stream}``        gauge   live streams open on this process: ``run``
                                           (a run's events) and ``room`` (a class)
``lockviz_refusals_total{reason}`` counter requests refused: ``lab_busy`` (503),
                                           ``database_busy`` (503, no connection to be had),
                                           ``over_share`` (429, a client's share: runs,
                                           imports, rooms, joins, answers, streams),
                                           ``no_room`` (404, a code of no open room),
                                           ``not_owner`` (403, a click on another's run),
                                           ``not_live`` (409, a click on an ended run),
                                           ``invalid`` (400, input that cannot be used)
``lockviz_event_publish_seconds``  histo.  from an event handed to the publisher to the
                                           channel layer taking it (lockviz.broadcast)
================================== ======= =============================================

plus the client library's ``process_*`` (memory, CPU, open files) and ``python_gc_*``.

Each app process exports its own: with several replicas, sum the gauges of this process
(viewers, slots, queue) across them; ``lockviz_runs`` reads the shared database, so every
replica reports the same counts (take one, or ``max``). Nothing here uses the client's
multiprocess mode: a replica is one Daphne process.

The rest of the app moves a metric with one call (``metrics.refused("not_owner")``), so that
every metric's name, help and labels are written here and nowhere else.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Literal, get_args

from django.db import DatabaseError
from django.db.models import Count
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from lockviz.lab import capacity
from lockviz.labhost import heartbeat
from lockviz.labhost import web as labhosts
from lockviz.models import Run

log = logging.getLogger(__name__)

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


# -- read at each scrape -----------------------------------------------------------------------


class LabCollector(Collector):
    """Runs by status (the database) and this process's lab (lockviz.lab.capacity), as they are
    when Prometheus asks: counts that cannot drift from what they count."""

    def describe(self) -> Iterator[Metric]:
        """The families without their values: registering must not query the database."""
        yield GaugeMetricFamily("lockviz_runs", "", labels=["status"])
        yield GaugeMetricFamily("lockviz_lab_slots", "", labels=["state"])
        yield GaugeMetricFamily("lockviz_lab_limit", "")
        yield GaugeMetricFamily("lockviz_queue_length", "")

    def collect(self) -> Iterator[Metric]:
        yield from self._runs()
        in_use, limit, waiting = self._slots()
        slots = GaugeMetricFamily(
            "lockviz_lab_slots", "This process's run slots: in use, and free", labels=["state"]
        )
        slots.add_metric(["in_use"], in_use)
        slots.add_metric(["free"], max(0, limit - in_use))
        yield slots
        yield GaugeMetricFamily(
            "lockviz_lab_limit", "Runs this process lets play at once now (adapts)", value=limit
        )
        yield GaugeMetricFamily(
            "lockviz_queue_length", "Runs of this process waiting for a slot", value=waiting
        )

    def _slots(self) -> tuple[int, int, int]:
        """(in use, limit, waiting): this process's lab, or every lab host's (the lab-slots
        metric a deployment scales its lab hosts on: docs/architecture.md)."""
        if labhosts.remote():
            hosts = heartbeat.hosts()
            try:
                waiting = labhosts.waiting()
            except DatabaseError:
                waiting = 0
            return sum(h.running for h in hosts), sum(h.limit for h in hosts), waiting
        lab = capacity.machine()
        return len(lab.running), lab.limit, lab.waiting

    def _runs(self) -> Iterator[Metric]:
        try:
            rows = Run.objects.order_by().values("status").annotate(n=Count("pk"))
            counted = {row["status"]: row["n"] for row in rows}
        except DatabaseError:  # the rest still helps while the database is away (see /readyz)
            log.warning("metrics: could not count runs", exc_info=True)
            return
        runs = GaugeMetricFamily(
            "lockviz_runs", "Runs in the database, by status", labels=["status"]
        )
        for status in Run.Status:
            runs.add_metric([status.value], counted.get(status.value, 0))
        yield runs


REGISTRY.register(LabCollector())


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST

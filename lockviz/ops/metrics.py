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
                                           channel layer taking it (lockviz.live.broadcast)
================================== ======= =============================================

plus the client library's ``process_*`` (memory, CPU, open files) and ``python_gc_*``.

Each app process exports its own: with several replicas, sum the gauges of this process
(viewers, slots, queue) across them; ``lockviz_runs`` reads the shared database, so every
replica reports the same counts (take one, or ``max``). Nothing here uses the client's
multiprocess mode: a replica is one Daphne process.

The rest of the app moves a metric with one call (``counters.refused("not_owner")``): the
counters, gauges and histogram and their hooks are in :mod:`lockviz.ops.counters` (which
imports nothing of lockviz, so anything may count); what is read at each scrape (the database,
the lab hosts) is collected here, above them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.db import DatabaseError
from django.db.models import Count
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from lockviz.lab import capacity
from lockviz.labhost import heartbeat
from lockviz.models import Run
from lockviz.ops.counters import REGISTRY
from lockviz.runs import labhosts

log = logging.getLogger(__name__)


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

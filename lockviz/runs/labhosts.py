"""The web side of lab hosts: admit a run against every host's free slots, publish it, and say
where it stands in the line.

With ``LOCKVIZ_LAB_HOSTS=remote`` (and under ``serve`` by default) a web process runs no lab:
lockviz.runs.recorder admits a run here (:func:`admit`: 503 when the line across all hosts is
full, as one machine's was), records it queued with no ``host``, and :func:`publish`\\es the
request once the run is stored. Fair shares (lockviz.shares) are counted as before, by the web
process, from the database.
"""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import transaction

from lockviz.errors import Busy
from lockviz.labhost import heartbeat, stream
from lockviz.models import Run
from lockviz.runs import recovery


def remote() -> bool:
    """Whether this process leaves runs to lab hosts."""
    return bool(settings.LOCKVIZ_LAB_HOSTS == "remote")


def waiting() -> int:
    """Runs recorded and not yet taken by any host."""
    return Run.objects.filter(status=Run.Status.QUEUED, host="").count()


def admit(count: int, first: bool) -> None:
    """:class:`Busy` when ``count`` more runs would make the line longer than
    ``LOCKVIZ_MAX_QUEUE`` beyond the hosts' free slots (a presenter's runs are never refused)."""
    if first:
        return
    free = sum(slots.free for slots in heartbeat.hosts())
    queued = waiting()
    if queued + count > settings.LOCKVIZ_MAX_QUEUE + free:
        raise Busy(
            f"The lab is busy: {queued} runs are waiting for it already. Try again in a minute.",
            retry_after_s=60,
        )


def publish(run_ids: list[str], first: bool) -> None:
    """Ask the lab hosts for these runs once they are stored (a host reads the run at once)."""

    def send() -> None:
        to = heartbeat.client()
        try:
            for run_id in run_ids:
                stream.publish(to, run_id, first)
        except redis.RedisError as exc:  # a run nobody will take must not wait forever
            for run in Run.objects.filter(pk__in=run_ids):
                recovery.interrupt(run, f"the lab hosts could not be asked to run it: {exc}")

    transaction.on_commit(send)


def position(run_id: str) -> int | None:
    """1 for the next run a host will take; None when the run is not waiting for one."""
    run = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED, host="").first()
    if run is None:
        return None
    return waiting_before(run) + 1


def waiting_before(run: Run) -> int:
    return Run.objects.filter(status=Run.Status.QUEUED, host="", created__lt=run.created).count()

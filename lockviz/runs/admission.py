"""Admission: whether a run may start now, and how a queued run waits for the lab.

The queue is bounded (``LOCKVIZ_MAX_QUEUE``: beyond it a new run is refused as :class:`Busy`,
try again later), each run takes a client's share (lockviz.shares.runs: a browser's, an
address's, or a room's allowance), and a queued run that nobody has watched for
:data:`UNWATCHED_S` is cancelled. The recorder (lockviz.runs.recorder) admits and creates runs
under :data:`lock`, as one step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.utils import timezone

from lockviz.errors import Busy
from lockviz.lab import capacity
from lockviz.models import Run
from lockviz.runs import labhosts, recovery
from lockviz.shares import UNKNOWN
from lockviz.shares import runs as shares
from lockviz.shares.runs import Charge

lock = threading.Lock()  # admit, then create: one step (lockviz.runs.launcher.launch_many)
UNWATCHED_S = 20.0  # a queued run nobody watches for this long is cancelled
WATCHED_EVERY_S = 1.0  # how often a queued run asks whether anyone watches it


def machine() -> capacity.Machine:
    """The machine's capacity, with this app's ceiling."""
    found = capacity.machine()
    found.ceiling = settings.LOCKVIZ_MAX_RUNS
    return found


def admit(
    owner: str, count: int = 1, address: str = "", open_ended: bool = False, first: bool = False
) -> Charge:
    """Whose share ``count`` more runs of ``owner`` (at ``address``) take (lockviz.shares.runs);
    :class:`Busy` or :class:`TooMany` if they may not start now (a presenter's runs, ``first``,
    go ahead of the queue: never refused as busy)."""
    if labhosts.remote():  # the line is across every lab host (lockviz.runs.labhosts)
        labhosts.admit(count, first)
        return shares.charge(owner, address or UNKNOWN, count, open_ended)
    lab_now = machine()
    waiting, free = lab_now.waiting, lab_now.limit - len(lab_now.running)
    if not first and waiting + count > settings.LOCKVIZ_MAX_QUEUE + max(0, free):
        raise Busy(
            f"The lab is busy: {waiting} runs are waiting for it already. Try again in a minute.",
            retry_after_s=60,
        )
    return shares.charge(owner, address or UNKNOWN, count, open_ended)


def wait_for_lab(run: Run, lab_now: capacity.Machine, moved: Callable[[Run], None]) -> bool:
    """Wait until ``run`` may enter the lab (True: it is marked running), telling ``moved``
    whenever its place in the queue changes; False when nobody watched it for
    :data:`UNWATCHED_S` and it was cancelled, or its owner cancelled it
    (lockviz.runs.recovery.cancel_queued)."""
    unwatched_since = asked = time.monotonic()
    told: int | None = None
    while not lab_now.enter(run.pk, timeout_s=0.5):
        if (position := lab_now.position(run.pk)) != told:  # viewers see their place move
            told = position
            moved(run)
        if time.monotonic() - asked < WATCHED_EVERY_S:
            continue
        asked = time.monotonic()
        found = Run.objects.filter(pk=run.pk).values_list("status", "watchers").first()
        if found is None or found[0] not in Run.LIVE:  # cancelled by its owner, or gone
            lab_now.forget(run.pk)
            return False
        if found[1] > 0:
            unwatched_since = time.monotonic()
        elif time.monotonic() - unwatched_since > UNWATCHED_S:
            why = f"nobody watched it for {UNWATCHED_S:g} s while it waited for the lab"
            lab_now.forget(run.pk)
            recovery.interrupt(run, why, Run.Status.CANCELLED)
            run.refresh_from_db()
            moved(run)
            return False
    # Only a run still live starts (a lab host marked it running as it took it): one cancelled
    # as it entered stays cancelled.
    return bool(
        Run.objects.filter(pk=run.pk, status__in=Run.LIVE).update(
            status=Run.Status.RUNNING, started=timezone.now()
        )
    )

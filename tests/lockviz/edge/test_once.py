"""Costly answers made once: two first requests for a run's Mermaid export at once make it
once (each made it, at 300 s of CPU for a crafted import; the cache was filled by whichever
finished), and a holder that died does not block the next for ever."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from lockviz.edge import workers
from lockviz.edge.once import single_flight
from lockviz.errors import Busy
from tests.lockviz.library.helpers import recorded_run


@pytest.mark.django_db(transaction=True)
def test_two_first_exports_at_once_make_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    run = recorded_run("contention")
    made = []
    submit = workers.run  # the drawing is a worker process's job (lockviz.edge.workers)

    def slow(job: Any, *args: Any) -> Any:
        made.append(job)
        time.sleep(0.5)  # long enough for the second request to arrive while it is made
        return submit(job, *args)

    monkeypatch.setattr(workers, "run", slow)
    answers: list[bytes] = []

    def fetch() -> None:
        answers.append(Client().get(f"/runs/{run.pk}/export.mmd").content)

    threads = [threading.Thread(target=fetch) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(made) == 1
    assert len(answers) == 2 and answers[0] == answers[1] and answers[0].startswith(b"sequence")


def test_a_lock_left_by_a_dead_holder_ends_and_a_waiter_is_told() -> None:
    cache.add("k:computing", 1, 1)  # a holder that died holding it
    with pytest.raises(Busy):
        single_flight("k", lambda: "made", 60, wait_s=0.2)
    time.sleep(1.1)
    assert single_flight("k", lambda: "made", 60, wait_s=0.2) == "made"

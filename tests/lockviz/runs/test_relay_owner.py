"""A relayed click speaks for a run's owner: the process that runs it applies it only for that
owner. Whoever could write to the channel Redis could put a step into any run; now they must
also know the owner's secret token (the Redis is the trust boundary: docs/deploy.md)."""

from __future__ import annotations

import json
import threading

import pytest
import redis

from lockviz.live import channel_layer
from lockviz.models import Run
from lockviz.runs import recorder, relay

pytestmark = pytest.mark.django_db


def test_a_relayed_request_not_speaking_for_the_runs_owner_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = Run.objects.create(title="t", scenario={}, owner="alice's browser")
    done: list[str] = []
    monkeypatch.setattr(recorder, "finish_here", lambda run_id, why: done.append(run_id) or True)
    forged = recorder._answer_finish(run.pk, "mallory", {"why": "forged"})
    assert forged == {"problems": ["this request does not speak for the run's owner"]}
    assert recorder._answer_inject(run.pk, "", {"do": "pause"})["problems"]
    assert done == []
    assert recorder._answer_finish(run.pk, "alice's browser", {}) == {"done": True}
    assert done == [run.pk]


@pytest.mark.live
def test_a_relay_request_names_the_owner_it_speaks_for(settings: object) -> None:
    url = channel_layer.embedded_url()  # a real Redis: the app's own, as make run has it
    settings.LOCKVIZ_CHANNEL_REDIS = url  # type: ignore[attr-defined]
    process = "host-of-this-test:1:2"
    answers: list[object] = []
    asking = threading.Thread(
        target=lambda: answers.append(relay.ask(process, "finish", "r1", "alice's browser", {}))
    )
    asking.start()
    client = redis.Redis.from_url(url)
    got = client.blpop([relay.inbox(process)], timeout=5)  # as the owner's listener reads it
    assert got is not None
    request = json.loads(got[1])
    client.rpush(request["reply"], json.dumps({"done": True}))
    asking.join(10)
    client.close()
    assert request["owner"] == "alice's browser" and request["run"] == "r1"
    assert answers == [{"done": True}]

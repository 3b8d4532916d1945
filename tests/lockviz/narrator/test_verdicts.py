"""A verdict's headline in a leader election says leaders: two clients that both believed they
led are "two leaders at once", not a lock's mutual exclusion (lockviz.narrator.verdicts). Read
on runs the live lab recorded (tests/browser/data/runs), stored as any run is."""

from __future__ import annotations

import pytest

from lockviz import narrator
from tests.lockviz.library.helpers import recorded_run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("slug", "said"),
    [
        ("leader-etcd-pause-plain", ("✖ Two leaders at once, data corrupted", "bad")),
        (
            "leader-etcd-pause-fenced",
            ("⚠ Two leaders at once — fencing saved the data", "warn"),
        ),
        ("leader-zk-partition-fenced", ("✔ One leader at a time", "good")),
        ("gc-pause-unfenced", ("✖ Mutual exclusion violated, data corrupted", "bad")),
    ],
)
def test_an_elections_headline_speaks_of_leaders_and_a_locks_of_mutual_exclusion(
    slug: str, said: tuple[str, str]
) -> None:
    run = recorded_run(slug)
    assert narrator.electing(run.scenario) is slug.startswith("leader-")
    assert run.headline[0].startswith(said[0]) and run.headline[1] == said[1]


def test_the_words_follow_the_verdict_not_the_scenario_name() -> None:
    violated = {"mutual_exclusion": "violated", "data_corrupted": False}
    assert narrator.headline(violated, election=True) == ("⚠ Two leaders at once", "warn")
    assert narrator.headline(violated) == ("⚠ Mutual exclusion violated", "warn")
    stuck = {"mutual_exclusion": "held", "liveness": "stuck"}
    assert (
        narrator.headline(stuck, election=True)[0]
        == "⚠ One leader at a time, but the lock is stuck"
    )

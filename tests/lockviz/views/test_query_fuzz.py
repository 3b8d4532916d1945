"""Whatever a query string holds, no page answers 500: every GET route of the app (filled with a
stored run, a room, a lesson and a poll) against generated query values, ``?room=`` first among
them (a slash in it was a 500 on every page: the room bar built a link from it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.urls import URLPattern, URLResolver
from hypothesis import example, given
from hypothesis import strategies as st

from lockviz import urls
from lockviz.models import Attempt, Member, Plan, Poll, Room, Run, SavedScenario
from lockviz.scenarios.library import builtin
from tests.strategies import FUZZ

pytestmark = pytest.mark.django_db
LESSON = "gc-pause-fenced"
EXERCISE = "fix-redis-fencing"
KEYS = ["room", "run", "at", "runs", "lanes", "scenario", "after", "step", "code", "s", "from"]
NOT_PAGES = {"readyz", "metrics"}  # the operator's (lockviz.ops): not what a visitor opens


def pages() -> list[str]:
    """Every route of the app, its arguments filled with things that exist."""
    run = Run.objects.create(
        pk="fuzzrun001", slug=LESSON, title="t", scenario=builtin()[LESSON].to_json(),
        status=Run.Status.FINISHED,
    )  # fmt: skip
    room = Room.objects.create(code="QRTUVW", presenter="someone")
    poll = Poll.objects.create(room=room, question="?", choices=["a", "b"])
    member = Member.objects.create(room=room, browser="a-student")
    attempt = Attempt.objects.create(
        exercise=EXERCISE, title="t", learner="someone", answer={}, goal="safe"
    )
    teacher = User.objects.create_user("fuzz-teacher")
    saved = SavedScenario.objects.create(
        pk="fuzzsaved01", user=teacher, title="t", scenario=builtin()[LESSON].to_json(),
        visibility="unlisted",
    )  # fmt: skip
    plan = Plan.objects.create(
        pk="fuzzplan001", title="t", owner="someone",
        items=[{"kind": "lesson", "lesson": LESSON, "note": ""}],
    )  # fmt: skip
    fill = {"plan_id": plan.pk, "number": "1", "run_id": run.pk, "code": room.code,
            "slug": LESSON, "poll_id": str(poll.pk), "member_id": str(member.pk),
            "key": "not-the-key", "state": "listed", "saved_id": saved.pk,
            "attempt_id": str(attempt.pk), "ref": EXERCISE}  # fmt: skip
    found = []
    for entry in urls.urlpatterns:
        if isinstance(entry, URLResolver):  # the admin site: Django's own
            continue
        assert isinstance(entry, URLPattern)
        if entry.name in NOT_PAGES:
            continue
        path = str(entry.pattern)
        for name, value in fill.items():
            path = path.replace(f"<str:{name}>", value).replace(f"<slug:{name}>", value)
            path = path.replace(f"<int:{name}>", value)
        assert "<" not in path, path
        found.append("/" + path)
    return found


@pytest.fixture
def routes() -> list[str]:
    return pages()


@pytest.mark.parametrize("value", ["a/b", "/", "..", "ABC/DEF", "\x00", "QRTUVW", " "])
def test_a_room_in_the_query_is_never_a_server_error_on_any_page(
    routes: list[str], value: str
) -> None:
    presenter = Client()
    session = presenter.session
    session["browser"], session["presenting"] = "someone", "QRTUVW"
    session.save()
    for client in (Client(), presenter):
        for path in routes:
            response = client.get(path, {"room": value})
            assert response.status_code < 500, (path, value, response.status_code)


@FUZZ
@given(
    index=st.integers(min_value=0),
    query=st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), st.text(max_size=30)),
)
@example(index=1, query={"room": "a/b"})  # /: the room bar builds a link from it
@example(index=3, query={"run": "\x00"})
def test_no_query_value_is_a_server_error(routes: list[str], index: int, query: Any) -> None:
    cache.clear()  # each example is a visitor of its own (lockviz.shares)
    path = routes[index % len(routes)]
    response = Client().get(path, query)
    assert response.status_code < 500, (path, query, response.status_code)

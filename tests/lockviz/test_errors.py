"""One tree of refusals (lockviz.errors), mapped to HTTP in one place (lockviz.views.refusals)."""

from __future__ import annotations

import html

import pytest
from django.test import RequestFactory

from lockviz import errors
from lockviz.errors import (
    Busy,
    ImportRefused,
    LabError,
    NotLive,
    NotYours,
    Refusal,
    RoomRefused,
    ScenarioError,
    TooMany,
)
from lockviz.lab.errors import LabError as LabsOwn
from lockviz.views.refusals import respond


def every_refusal() -> list[type[Refusal]]:
    found: list[type[Refusal]] = []
    todo: list[type[Refusal]] = [Refusal]
    while todo:
        kind = todo.pop()
        found.append(kind)
        todo.extend(kind.__subclasses__())
    return found


def test_every_refusal_is_drawn_in_the_tree_and_has_a_status() -> None:
    drawn = errors.__doc__ or ""
    for kind in every_refusal():
        if kind.__module__ != "lockviz.errors":
            continue  # a branch of a branch, drawn where it lives (lab servers' PortTaken)
        assert kind.__name__ in drawn, f"{kind.__name__} is missing from the tree"
        assert kind.status in (400, 403, 404, 409, 429, 503)


def test_the_old_roots_are_branches_of_the_one_tree() -> None:
    assert LabsOwn is LabError
    for kind in (ScenarioError, ImportRefused, RoomRefused, LabError):
        assert issubclass(kind, Refusal)
    assert not issubclass(NotLive, ScenarioError)  # "not live" is not a problem with a step


def test_a_refusal_keeps_its_sentences_whatever_it_was_given() -> None:
    assert RoomRefused("choices: at most 6").problems == ["choices: at most 6"]
    both = ScenarioError(["steps[0].ms: too long", "clients: none"])
    assert str(both) == "steps[0].ms: too long; clients: none"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("refusal", "status"),
    [
        (ScenarioError(["client: 'zed' is not one of the run's clients"]), 400),
        (NotYours("Only the browser that started run x can finish it"), 403),
        (NotLive("run x has finished"), 409),
        (TooMany("You already have 4 runs"), 429),
        (Busy("The lab is busy", retry_after_s=60), 503),
    ],
)
def test_each_refusal_has_its_status_and_htmx_gets_it_as_a_swappable_200(
    refusal: Refusal, status: int
) -> None:
    factory = RequestFactory()
    plain = factory.post("/runs/x/do")
    plain.htmx = False  # type: ignore[attr-defined]
    response = respond(plain, refusal)  # type: ignore[arg-type]
    assert response.status_code == status
    assert response["X-Fault"] == "refused"
    assert html.escape(refusal.problems[0]) in response.content.decode()
    if isinstance(refusal, Busy):
        assert response["Retry-After"] == "60"
    htmx = factory.post("/runs/x/do", HTTP_HX_REQUEST="true")
    htmx.htmx = True  # type: ignore[attr-defined]
    swapped = respond(htmx, refusal)  # type: ignore[arg-type]
    assert swapped.status_code == 200 and swapped["X-Fault"] == "refused"
    text = respond(plain, refusal, plain=True)  # type: ignore[arg-type]
    assert text.status_code == status and text["Content-Type"].startswith("text/plain")


@pytest.mark.django_db
def test_a_form_from_elsewhere_gets_a_page_that_says_what_to_do() -> None:
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post("/rooms/", HTTP_ORIGIN="http://127.0.0.1:9", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 403
    text = response.content.decode()
    assert "could not confirm that the form came from one of its" in text
    assert "LOCKVIZ_PUBLIC_URL" in text  # an origin problem: most likely the proxy's setting

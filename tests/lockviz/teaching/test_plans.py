"""Lecture plans' rules (lockviz.teaching.plans): every problem named by its item's number, the
bounds, what a plan keeps and exports, and who may change it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lockviz.errors import PlanRefused
from lockviz.models import Plan, Run, RunEvent
from lockviz.teaching import plan_files, plans
from tests.conftest import builtin_json

pytestmark = pytest.mark.django_db


def stored_run(events: int = 5) -> Run:
    run = Run.objects.create(title="A stored run", scenario=builtin_json("gc-pause-fenced"))
    for seq in range(1, events + 1):
        RunEvent.objects.create(run=run, seq=seq, t_ms=seq, actor="a", kind="step", data={})
    return run


def good(run: Run) -> list[dict[str, Any]]:
    return [
        {"kind": "lesson", "lesson": "gc-pause-fenced", "note": "start here"},
        {"kind": "replay", "run": run.pk, "from": 2, "to": 4, "note": ""},
        {"kind": "scenario", "slug": "contention"},
        {"kind": "scenario", "scenario": builtin_json("contention")},
        {"kind": "poll", "question": "Who wins?", "choices": ["Alice", "Bob"], "note": "B"},
    ]


def problems_of(data: Any) -> list[str]:
    with pytest.raises(PlanRefused) as refused:
        plans.read(data)
    return refused.value.problems


def test_a_good_plan_reads_into_its_items_in_order() -> None:
    run = stored_run()
    title, items = plans.read({"title": " Week 3 ", "items": good(run)})
    assert title == "Week 3"
    assert [i.kind for i in items] == ["lesson", "replay", "scenario", "scenario", "poll"]
    assert (items[1].run, items[1].seq_from, items[1].seq_to) == (run.pk, 2, 4)
    assert items[4].choices == ("Alice", "Bob") and items[0].note == "start here"
    assert items[0].title.startswith("Lesson ")
    assert items[1].title.startswith("Replay: A stored run")
    assert items[4].title == "Poll: Who wins?"


def test_every_problem_is_named_by_its_item_number_and_kind() -> None:
    run = stored_run(events=5)
    said = problems_of({
        "title": "",
        "items": [
            {"kind": "lesson", "lesson": "no-such-lesson"},
            {"kind": "replay", "run": run.pk, "from": 4, "to": 2},
            {"kind": "replay", "run": "nosuchrun"},
            {"kind": "replay", "run": run.pk, "to": 99},
            {"kind": "scenario", "scenario": {"format": 1, "title": "x"}},
            {"kind": "scenario", "slug": "contention", "scenario": {}},
            {"kind": "poll", "question": "Q?", "choices": ["only one"]},
            {"kind": "poll", "question": "", "choices": ["a", "a", "b"]},
            {"kind": "dance"},
            {"kind": "lesson", "lesson": "gc-pause-fenced", "note": "x" * 2001},
            "not an item",
        ],
    })  # fmt: skip
    text = "\n".join(said)
    assert "title: give the plan a title" in said
    assert "item 1 (lesson): lesson: 'no-such-lesson' is not a lesson of the course" in said
    assert "item 2 (replay): to: #2 comes before from (#4)" in said
    assert "item 3 (replay): run: there is no run 'nosuchrun' here" in text
    assert "item 4 (replay): to: #99 is past the run's last event (#5)" in said
    assert "item 5 (live run): scenario." in text
    assert "item 6 (live run): give a built-in scenario (slug) or a scenario's JSON, not" in text
    assert "item 7 (poll): choices: give 2 to 6 different answers" in text
    assert "item 8 (poll): question: ask something" in said
    assert any(p.startswith("item 8 (poll): choices:") for p in said)  # "a" twice
    assert "item 9: kind: 'dance' is not one of lesson, replay, scenario, poll, exercise" in said
    assert "item 10 (lesson): note: 2001 characters; the most is 2000" in said
    assert "item 11: must be an object with a kind" in said


def test_bounds_items_title_choices_and_control_characters() -> None:
    lesson = {"kind": "lesson", "lesson": "gc-pause-fenced"}
    assert problems_of({"title": "T", "items": [lesson] * 31}) == [
        "items: 31 items; a plan has at most 30"
    ]
    assert "items: a plan needs at least one item" in problems_of({"title": "T", "items": []})
    assert problems_of({"title": "x" * 121, "items": [lesson]}) == [
        "title: 121 characters; the most is 120"
    ]
    seven = {"kind": "poll", "question": "Q", "choices": list("abcdefg")}
    assert problems_of({"title": "T", "items": [seven]})[0].startswith("item 1 (poll): choices:")
    bell = {"kind": "poll", "question": "Ring\x07", "choices": ["a", "b"]}
    assert "control character" in problems_of({"title": "T", "items": [bell]})[0]
    nul = {**lesson, "note": "a\x00b"}
    assert "NUL" in problems_of({"title": "T", "items": [nul]})[0]
    assert plans.read({"title": "T", "items": [lesson] * 30})[1][29].lesson == "gc-pause-fenced"


def test_a_kept_plan_reads_back_and_exports_and_imports_the_same() -> None:
    run = stored_run()
    title, items = plans.read({"title": "Week 3", "items": good(run)})
    plan = plans.save(Plan(owner="teacher"), title, items)
    assert plans.items_of(Plan.objects.get(pk=plan.pk)) == items
    exported = json.dumps(plan_files.export(plan)).encode()
    again = plan_files.imported(exported, "someone-else")
    assert again.pk != plan.pk and again.owner == "someone-else"
    assert (again.title, again.items) == (plan.title, plan.items)


def test_an_import_names_what_is_wrong() -> None:
    def refused(data: bytes) -> list[str]:
        with pytest.raises(PlanRefused) as exc:
            plan_files.imported(data, "b")
        return exc.value.problems

    assert refused(b"{nope") == ["file: not a plan's JSON (its export.json) at line 1"]
    assert refused(b'{"format": 1}')[0].startswith("lockviz_plan: not a lecture plan's export")
    assert refused(b'{"lockviz_plan": 1, "title": "T", "items": [], "x": 1}') == [
        "x: unknown field"
    ]
    big = b'{"lockviz_plan": 1, "title": "' + b"x" * 600_000 + b'"}'
    assert refused(big)[0].startswith("file: 585 KB; a plan's file is at most 512 KB")
    bad = {"lockviz_plan": 1, "title": "T", "items": [{"kind": "poll", "question": "Q"}]}
    assert refused(json.dumps(bad).encode())[0].startswith("item 1 (poll): choices:")
    assert Plan.objects.count() == 0


def test_only_the_browser_that_made_a_plan_may_change_it() -> None:
    plan = Plan.objects.create(title="T", items=[], owner="mine")
    assert plans.may_edit(plan, "mine")
    assert not plans.may_edit(plan, "yours") and not plans.may_edit(plan, "")
    assert not plans.may_edit(Plan.objects.create(title="T", items=[], owner=""), "")
    copied = plans.copy(plan, "yours")
    assert plans.may_edit(copied, "yours") and copied.copied_from == plan.pk


def test_a_browser_keeps_a_bounded_number_of_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plans, "MAX_PLANS", 2)
    items = plans.read({"title": "T", "items": [{"kind": "lesson", "lesson": "contention"}]})[1]
    first = plans.save(Plan(owner="me"), "One", items)
    plans.save(Plan(owner="me"), "Two", items)
    with pytest.raises(PlanRefused, match="this browser keeps 2 plans already; delete one"):
        plans.save(Plan(owner="me"), "Three", items)
    with pytest.raises(PlanRefused):
        plans.copy(first, "me")
    assert plans.save(first, "One, changed", items).title == "One, changed"  # a change is fine
    assert plans.copy(first, "someone else").owner == "someone else"

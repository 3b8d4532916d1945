"""Checkpoints that do not give their answer away (lockviz/teaching/choices.py): across the
course no position holds more than 40% of the answers and the answer is seldom the longest
choice; each learner sees a stable order of their own, and a class its presenter's."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from lockviz.scenarios.schema import Ask
from lockviz.teaching import choices, rooms
from lockviz.teaching.lessons import course

ASKS = [step.ask for item in course() for step in item.scenario.steps if step.ask is not None]


def test_the_course_answers_are_spread_and_seldom_the_longest_choice() -> None:
    assert len(ASKS) >= 60
    assert choices.problems(ASKS) == []
    found = choices.bias(ASKS)
    assert max(found.positions.values()) <= 0.40 * found.total
    assert found.longest <= 0.20 * found.total
    assert max(found.lengths.values()) <= 0.45 * found.total


# The lengths of a choice set, the answer's first: it is the shortest, neither, or the longest.
LENGTHS = {"shortest": (5, 10, 20), "neither": (10, 5, 20), "longest": (20, 5, 10)}
SPREAD = ("shortest", "neither", "shortest", "neither", "longest")  # 40%, 40%, 20%


def ask(answer_at: int, rank: str = "neither") -> Ask:
    mine, *others = LENGTHS[rank]
    lengths = iter(others)
    texts = [f"{i} " + "x" * (mine if i == answer_at else next(lengths)) for i in range(3)]
    return Ask(question="Q?", choices=texts, answer=texts[answer_at], explain="")


def spread(n: int, answer_at: int | None = None) -> list[Ask]:
    """``n`` checkpoints with their answers' lengths spread (and positions, unless given)."""
    return [ask(i % 3 if answer_at is None else answer_at, SPREAD[i % 5]) for i in range(n)]


def test_a_biased_answer_set_is_refused_by_position_and_by_length() -> None:
    """The course as it was (issue 32): 28 of 60 answers in the middle, 24 the longest."""
    middle = spread(28, 1) + spread(16, 0) + spread(16, 2)
    assert choices.problems(middle) == ["position 2 holds 28 of 60 answers (47%; at most 40%)"]
    longest = [ask(i % 3, "longest" if i < 24 else SPREAD[i % 2]) for i in range(60)]
    assert choices.problems(longest) == [
        "the answer is the longest choice in 24 of 60 checkpoints (40%; at most 20%)"
    ]
    assert choices.problems(spread(60)) == []


def test_an_answer_set_guessed_by_length_the_other_way_round_is_refused() -> None:
    """Cut back from the longest, the answers were the choice of middle length in 51 of 89
    checkpoints: "never the longest, pick the one in between" found more than half of them."""
    biased = [ask(i % 3, "neither") for i in range(51)]
    biased += [ask(i % 3, "shortest") for i in range(38)]
    assert choices.problems(biased) == [
        "the answer is neither the longest nor the shortest choice in 51 of 89 checkpoints "
        "(57%; at most 45%)"
    ]
    fair = [ask(i % 3, rank) for rank, n in (("neither", 36), ("shortest", 36), ("longest", 17))
            for i in range(n)]  # fmt: skip
    assert choices.problems(fair) == []


def test_a_learner_sees_a_stable_order_of_their_own() -> None:
    texts = ["a", "b", "c", "d"]
    mine = choices.order(texts, "learner-1:zk-happy:3")
    assert sorted(mine) == texts and mine == choices.order(texts, "learner-1:zk-happy:3")
    orders = {tuple(choices.order(texts, f"learner-{n}:zk-happy:3")) for n in range(40)}
    assert len(orders) > 5  # others see other orders
    scenario = {"steps": [{"do": "acquire"}, {"do": "write", "ask": {"choices": texts}}]}
    shown = choices.for_learner(scenario, "learner-1:zk-happy")
    assert shown["steps"][1]["ask"]["choices"] == choices.order(texts, "learner-1:zk-happy:1")
    assert shown["steps"][0] == {"do": "acquire"}


@pytest.mark.django_db
def test_the_walkthrough_and_the_rooms_poll_show_the_presenters_order(client: Client) -> None:
    from tests.lockviz.teaching.test_lessons import stored_run

    run = stored_run("gc-pause-fenced")
    lesson = next(item for item in course() if item.slug == "gc-pause-fenced")
    written = list(lesson.scenario.steps[2].ask.choices)
    expected = choices.order(written, f"{run.owner}:gc-pause-fenced:2")
    page = client.get(f"/lessons/gc-pause-fenced/?run={run.pk}").content.decode()
    data = json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>',
                                page, re.S)[1])  # fmt: skip
    assert data["scenario"]["steps"][2]["ask"]["choices"] == expected
    poll = rooms.ask_checkpoint(rooms.open_room(run.owner), run, 2)
    assert poll.choices == expected  # every student of the class sees the presenter's order
    assert sorted(poll.choices) == sorted(written) and poll.answer in poll.choices

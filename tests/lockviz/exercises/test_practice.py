"""Exercises name the concepts they practise by the course's ids (lockviz.teaching.concepts), as
lessons do, and ask nothing taught after the last lesson they name (lockviz.exercises.practice).
Pure: no servers."""

from __future__ import annotations

import json

import pytest

from lockviz.errors import ExerciseRefused
from lockviz.exercises import practice
from lockviz.exercises.builtin import builtin
from lockviz.exercises.definition import read
from lockviz.teaching.concepts import Concept


@pytest.mark.parametrize("slug", list(builtin()))
def test_every_builtin_names_concepts_the_course_teaches_and_needs_nothing_later(
    slug: str,
) -> None:
    ex = builtin()[slug]
    assert ex.concepts, "an exercise names what it practises"
    assert all(c in practice.homes() for c in ex.practises), "each is taught by some lesson"
    assert practice.problems(ex) == []


def test_a_concept_that_is_not_the_courses_id_is_refused_by_name() -> None:
    data = builtin()["fix-redis-fencing"].to_json()
    with pytest.raises(ExerciseRefused) as refused:
        read(json.dumps({**data, "concepts": ["LEASE", "fencing"]}))
    said = " ".join(refused.value.problems)
    assert "concepts" in said and "'fencing' is not a concept of the course" in said
    assert "TOKEN" in said  # the sentence lists the ids it may use


def test_an_exercise_that_names_too_early_a_lesson_for_what_it_asks_is_caught() -> None:
    """fix-zk-storage-hole needs the sequencer check (lesson ~48); naming only leases says it
    can be done after lesson 1."""
    data = builtin()["fix-zk-storage-hole"].to_json()
    early = read(json.dumps({**data, "concepts": [Concept.LEASE.name]}))
    found = practice.problems(early)
    assert found and all(p.startswith("concepts: it needs ") for p in found)
    assert any("SEQUENCER" in p for p in found)


def test_exercise_text_is_read_by_the_bounded_decoder_with_a_sentence() -> None:
    deep = "[" * 1000 + "]" * 1000
    with pytest.raises(ExerciseRefused) as refused:
        read(deep, "upload")
    assert any("upload" in p and "nested 1,000 deep" in p for p in refused.value.problems)
    with pytest.raises(ExerciseRefused) as nan:
        read('{"format": 1, "reveal_after": NaN}')
    assert any("NaN" in p for p in nan.value.problems)

"""Checkpoint choices that do not give the answer away: the course's answers are spread over the
positions and are seldom the longest choice (:func:`problems`, held by
``tests/lockviz/teaching/test_choices.py``), and each learner sees a checkpoint's choices in an
order of their own (:func:`order`), the same on every visit.

A test-wise learner picks the middle choice, or the longest, without reading the question. So
across the course no position may hold more than :data:`MOST_AT_ONE_POSITION` of the answers, and
the answer may be the one strictly longest choice in at most :data:`MOST_LONGEST` of the
checkpoints. Nor may a rule by length guess well the other way round ("never the longest: pick the
one in between", which found 51 of 89 answers once the longest were cut back): the answer is the
longest, the shortest or neither in at most :data:`MOST_BY_LENGTH` of the checkpoints each. The
order a learner sees is a stable shuffle keyed by the run's owner (the learner, or the presenter
whose run a class follows: a room's poll carries the presenter's order, so every student sees one
order and the presenter's page matches it), the lesson and the step.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.scenarios.schema import Ask

MOST_AT_ONE_POSITION = 0.40
MOST_LONGEST = 0.20
MOST_BY_LENGTH = 0.45
RANKS = {
    "longest": "the strictly longest choice",
    "shortest": "the strictly shortest choice",
    "neither": "neither the longest nor the shortest choice",
}


@dataclass(frozen=True)
class Bias:
    """Where a set of checkpoints puts its answers: how many at each position (from 0), how
    many answers are the one strictly longest choice, and how many are the longest, the shortest
    or neither (``lengths``; a tie counts as neither)."""

    total: int
    positions: Mapping[int, int]
    longest: int
    lengths: Mapping[str, int]


def bias(asks: Iterable[Ask]) -> Bias:
    positions: Counter[int] = Counter()
    ranks: Counter[str] = Counter()
    total = 0
    for ask in asks:
        total += 1
        at = ask.choices.index(ask.answer)
        positions[at] += 1
        ranks[_rank([len(choice) for choice in ask.choices], at)] += 1
    return Bias(total, dict(positions), ranks["longest"], dict(ranks))


def _rank(lengths: list[int], at: int) -> str:
    """Whether choice ``at`` is the one strictly longest, the one strictly shortest, or neither."""
    mine = lengths[at]
    if lengths.count(mine) == 1 and mine == max(lengths):
        return "longest"
    if lengths.count(mine) == 1 and mine == min(lengths):
        return "shortest"
    return "neither"


def problems(asks: Iterable[Ask]) -> list[str]:
    """How the answers can be guessed without reading the questions, one sentence each."""
    found = bias(asks)
    if not found.total:
        return []
    told = [
        f"position {at + 1} holds {n} of {found.total} answers ({n / found.total:.0%}; at most "
        f"{MOST_AT_ONE_POSITION:.0%})"
        for at, n in sorted(found.positions.items())
        if n > MOST_AT_ONE_POSITION * found.total
    ]
    if found.longest > MOST_LONGEST * found.total:
        told.append(
            f"the answer is the longest choice in {found.longest} of {found.total} checkpoints "
            f"({found.longest / found.total:.0%}; at most {MOST_LONGEST:.0%})"
        )
    told += [
        f"the answer is {RANKS[rank]} in {n} of {found.total} checkpoints "
        f"({n / found.total:.0%}; at most {MOST_BY_LENGTH:.0%})"
        for rank, n in sorted(found.lengths.items())
        if n > MOST_BY_LENGTH * found.total
    ]
    return told


def order(choices: Sequence[str], seed: str) -> list[str]:
    """``choices`` in the order ``seed`` gives them: the same seed, the same order."""
    return sorted(choices, key=lambda c: hashlib.sha256(f"{seed}\x00{c}".encode()).digest())


def for_learner(scenario: JsonObject, seed: str) -> JsonObject:
    """A scenario's JSON (as a page gets it) with each checkpoint's choices in ``seed``'s order
    for that step (``seed`` names the learner and the lesson)."""
    steps = scenario.get("steps")
    if not isinstance(steps, list):
        return scenario
    return {**scenario, "steps": [_ordered(step, f"{seed}:{i}") for i, step in enumerate(steps)]}


def _ordered(step: JsonValue, seed: str) -> JsonValue:
    ask = step.get("ask") if isinstance(step, dict) else None
    if not isinstance(step, dict) or not isinstance(ask, dict):
        return step
    choices = ask.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        return step
    texts = [c for c in choices if isinstance(c, str)]
    return {**step, "ask": {**ask, "choices": list(order(texts, seed))}}

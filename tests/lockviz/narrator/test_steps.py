"""A scenario's steps in words: every step of every lesson is told to the learner as it happens.

A step reaches the learner twice: as the run's ``step`` event, said by the narrator (its click,
then its narration), and in the walkthrough's story panel (``story``: the step's number, click
and narration). A step that the narrator can only say by its click ("step 6: bob releases the
lock") leaves the panel saying nothing at that moment, so the test reads both from the lessons'
own data and the narrator's words, with no list of lessons kept here.
"""

from __future__ import annotations

import pytest

from lockviz.narrator import Narrator, click, setup, story
from lockviz.narrator.steps import electing, step_number
from lockviz.scenarios.schema import Scenario
from lockviz.teaching.lessons import Lesson, course


def silent_steps(scenario: Scenario) -> list[str]:
    """The steps of ``scenario`` that nothing puts into words beyond their click, as "step N
    (verb)": said as the engine records them (the step without its checkpoint, with its index)."""
    narrator = Narrator(scenario.backend)
    data = scenario.to_json()
    election = electing(data)
    panels = story([step.to_json() for step in scenario.steps], election)
    silent = []
    for index, step in enumerate(scenario.steps):
        fields = {k: v for k, v in step.to_json().items() if k != "ask"}
        said = narrator.said({"kind": "step", "actor": "lab", "t_ms": 0, "index": index, **fields})
        bare = f"step {step_number(index)}: {click(fields, election)}"
        told = str(panels[index]["say"]).strip()
        if said.text.strip() == bare or not told or told == click(fields, election):
            silent.append(f"step {step_number(index)} ({step.do})")
    return silent


@pytest.mark.parametrize("item", course(), ids=lambda item: item.slug)
def test_every_step_of_every_lesson_is_narrated_as_it_happens(item: Lesson) -> None:
    assert silent_steps(item.scenario) == [], f"{item.slug}: say what happens at these steps"


def test_a_step_without_narration_is_found() -> None:
    """The rule can fail: strip one step's narration from a lesson and it is named."""
    scenario = course()[0].scenario
    steps = [step.model_copy(update={"say": None}) if n == 2 else step
             for n, step in enumerate(scenario.steps)]  # fmt: skip
    stripped = scenario.model_copy(update={"steps": steps})
    assert silent_steps(stripped) == [f"step 3 ({scenario.steps[2].do})"]


def test_the_setting_names_what_each_lock_counts_down_with_its_article() -> None:
    """A ZooKeeper election has a session timeout, not a lease; an idle-in-transaction timeout
    takes "an" (the catalogue's words, read by the setting as by the header)."""
    words = {item.slug: setup(item.scenario.to_json()) for item in course()}
    assert "with a session timeout of 1.5 s" in words["leader-zk-partition-fenced"]
    assert "lease" not in words["leader-zk-partition-fenced"]
    assert "with a lease of 2 s" in words["leader-etcd-pause-fenced"]
    assert "with an idle-in-transaction timeout of 3 s" in words["pg-pooled-xact"]
    assert not [slug for slug, said in words.items() if " a idle" in said]

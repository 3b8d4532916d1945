"""What if…? forks: a run's steps up to a moment, fixed; the rest, as the learner edits them.

A *moment* is an event of a stored run (a replay's cursor). The steps the run had dispatched by
then are fixed, as they were; the others (the rest of the script, or a free-play session's later
clicks) can be edited: a pause made shorter, a step dropped or added, a fault added, another kind
of storage chosen. The fork is a new scenario, validated by the schema like any other, and a new
live run like any other, owned by whoever forks, remembering its parent and the moment it parts
from it (:class:`lockviz.models.Run` ``parent``, ``diverged_seq``, ``diverged_ms``). It is
stored, replayed, exported and forked again the same way.

The storage kind is the run's, from its start: the lab cannot swap the storage mid-run, so with
another kind the fixed steps are the same but a write before the moment may be answered
differently. The fork page says so.

The editor's rows arrive as form fields (``keep_<i>``, ``orig_<i>``, ``at_ms_<i>``, ``do_<i>``,
``who_<i>`` and the verb's fields); :func:`rest_from_form` turns them into steps, naming any
problem by its row's step number. A step kept unchanged keeps its narration; an edited one
loses it (its words were written for the original), and every checkpoint goes with ``expect``:
the predictions were made for the original.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from lockviz import jsontext, narrator
from lockviz.catalogue import STORAGE_KINDS
from lockviz.errors import JsonRefused, ScenarioError
from lockviz.jsontypes import JsonObject
from lockviz.models import Run
from lockviz.scenarios.schema import STEP_PATH, Scenario, Step, parse
from lockviz.teaching import reveals, steprows
from lockviz.teaching.play import Posted
from lockviz.teaching.steprows import EDITED as EDITED  # the row editor's, for the fork's readers
from lockviz.teaching.steprows import FIELDS as FIELDS
from lockviz.teaching.steprows import Row

NEW_ROWS = 2  # blank rows the editor offers for added steps
MAX_ROWS = 200
MAX_ORIGINAL_BYTES = 64 * 1024  # a row's original step, as the form carries it
MOMENTS = 60  # moments the fork page offers at once, around the one chosen
EDITABLE = 25  # the editor's rows for steps after the moment; later ones are kept as they are


@dataclass(frozen=True)
class Moment:
    """An event of the parent run: the fork parts from the parent after it."""

    seq: int
    t_ms: float
    text: str

    @property
    def at_ms(self) -> int:
        return math.floor(self.t_ms)


@dataclass(frozen=True)
class Split:
    """A run's steps at a moment: those already dispatched, and the rest."""

    moment: Moment
    fixed: list[JsonObject]  # each a step of the scenario's schema (lockviz.scenarios.schema)
    rest: list[JsonObject]

    @property
    def earliest_ms(self) -> int:
        """The earliest time an edited step may take: the moment, or a step that was late."""
        return min([self.moment.at_ms, *(at_ms(step) for step in self.rest)])


class ForkRow(Row):
    """A row of the fork's editor: a step's fields, and the step it edits."""

    orig: str  # the step it edits, as JSON ('' for a step added)
    said: str  # that step in words
    keep: bool  # whether the fork keeps it


def at_ms(step: JsonObject) -> int:
    """A step's time: a whole number of ms in every step a fork holds (the schema's, a row's)."""
    at = step["at_ms"]
    return int(at) if isinstance(at, int | float) else int(str(at))


def moments(
    run: Run, around: int = 0, most: int | None = None, hidden: frozenset[int] = frozenset()
) -> list[Moment]:
    """The run's events near event ``around`` (at most ``most``, :data:`MOMENTS` unless said,
    from up to half of them before it), in words: where a fork may part from it (without the
    narration of the ``hidden`` checkpoints: lockviz.teaching.reveals). A long run's other
    moments are a page away, not read at every request."""
    most = most or MOMENTS
    found = []
    for e in reveals.told(run, hidden, max(0, around - most // 2 - 1), most):  # stored words
        seq, t_ms, said = e["seq"], e["t_ms"], e["said"]
        if isinstance(seq, int) and isinstance(t_ms, int | float) and isinstance(said, dict):
            found.append(Moment(seq, float(t_ms), f"{e['actor']}: {said.get('text', '')}"))
    return found


def split(run: Run, seq: int, hidden: frozenset[int] = frozenset()) -> Split | None:
    """The run's steps at event ``seq`` (``None`` when it has no such event), without the
    answers and narration of the ``hidden`` checkpoints."""
    found = moments(run, seq, 1, hidden) if seq > 0 else []
    moment = next((m for m in found if m.seq == seq), None)
    if moment is None:
        return None
    fixed: list[JsonObject] = []
    rest: list[JsonObject] = []
    for dispatched, step in _steps_taken(run, hidden):
        (fixed if dispatched is not None and dispatched <= seq else rest).append(step)
    return Split(moment, fixed, sorted(rest, key=at_ms))


def _steps_taken(run: Run, hidden: frozenset[int]) -> list[tuple[int | None, JsonObject]]:
    """Each step with the seq of its ``step`` event (``None``: never dispatched), by index.

    A step event is the validated step itself, so a free-play click is a step like a
    scripted one; a scripted step the run never reached (it ended early) is taken from the
    scenario."""
    steps = reveals.scenario(run.scenario, hidden).get("steps")
    script = [s if isinstance(s, dict) else {} for s in steps] if isinstance(steps, list) else []
    taken: dict[int, tuple[int | None, JsonObject]] = {}
    fields = Step.model_fields
    for seq, t_ms, data in run.events.filter(kind="step").values_list("seq", "t_ms", "data"):
        index = int(data.get("index", len(taken)))
        # The script's step first (runs recorded before step events carried at_ms, and a
        # checkpoint never travels on the stream), then what the event says was done.
        step = dict(script[index]) if 0 <= index < len(script) else {}
        step.update({k: v for k, v in data.items() if k in fields})
        if index in hidden:
            step.pop("say", None)
        step.setdefault("at_ms", round(t_ms))
        taken[index] = (seq, step)
    for index, step in enumerate(script):
        taken.setdefault(index, (None, dict(step)))
    return [taken[i] for i in sorted(taken)]


def rest_from_form(form: Posted, at: Split, scenario: Scenario) -> list[JsonObject]:
    """The editable steps as the form has them, or :class:`ScenarioError` naming each row by
    its step's number in the fork (the fixed steps come first)."""
    try:
        rows = min(int(str(form.get("rows") or 0)), MAX_ROWS)
    except ValueError:
        raise ScenarioError(["rows: not a number"]) from None
    first = len(at.fixed)
    steps: list[JsonObject] = []
    problems: list[str] = []
    for i in range(rows):
        original = _original(form.get(f"orig_{i}"))
        if original is not None and not form.get(f"keep_{i}"):
            continue  # dropped
        if original is None and not str(form.get(f"do_{i}") or "").strip():
            continue  # a blank row for a step that was not added
        where = f"step {first + len(steps) + 1}"
        try:
            steps.append(_row(form, i, original, scenario))
        except ScenarioError as exc:
            problems.extend(f"{where}: {p}" for p in exc.problems)
    if problems:
        raise ScenarioError(problems)
    return steps + [dict(step) for step in later(at)]


def later(at: Split) -> list[JsonObject]:
    """The steps after the editor's :data:`EDITABLE` rows: kept as they are, not shown (a long
    run's hundreds of rows would make the page, not the learner, the bottleneck)."""
    return at.rest[EDITABLE:]


def _original(text: str | bool | None) -> JsonObject | None:
    if not text:
        return None
    try:
        found = jsontext.loads(str(text), max_bytes=MAX_ORIGINAL_BYTES, where="original")
    except JsonRefused:
        return None
    return found if isinstance(found, dict) else None


def _row(form: Posted, i: int, original: JsonObject | None, scenario: Scenario) -> JsonObject:
    step = steprows.step_of(form, i, scenario.clients, scenario.servers, "this run")
    if original is not None and original.get("do") == step["do"]:
        _keep_unseen(original, step)
    return step


def _keep_unseen(original: JsonObject, step: JsonObject) -> None:
    """The words of a step left unchanged stay (an edited step's words were written for the
    original)."""
    unchanged = {k: v for k, v in original.items() if k not in ("say", "ask")} == step
    if unchanged and original.get("say"):
        step["say"] = original["say"]


def fork_scenario(run: Run, at: Split, rest: list[JsonObject], storage: str) -> Scenario:
    """The fork as a scenario: the fixed steps, then ``rest``, on ``storage``; the run's other
    settings as they were. :class:`ScenarioError` names each problem."""
    early = [
        f"step {len(at.fixed) + n + 1}.at_ms: {step['at_ms']} ms is before the moment the fork "
        f"parts from the run ({at.earliest_ms} ms); the steps before it are fixed"
        for n, step in enumerate(rest)
        if at_ms(step) < at.earliest_ms
    ]
    if early:
        raise ScenarioError(early)
    if storage not in STORAGE_KINDS:
        raise ScenarioError([f"storage: unknown storage {storage[:20]!r}"])
    data = {k: v for k, v in run.scenario.items() if k not in ("steps", "expect", "fencing")}
    data["storage"] = storage
    data["title"] = title(str(run.scenario.get("title") or run.title))
    data["description"] = (
        f"What if…? A fork of run {run.pk}: its steps up to {at.moment.t_ms / 1000:.2f} s as they "
        "were, the rest changed."
    )
    fixed = [{k: v for k, v in step.items() if k != "ask"} for step in at.fixed]
    data["steps"] = fixed + [{k: v for k, v in step.items() if k != "ask"} for step in rest]
    try:
        return parse(data, allow_empty=True)
    except ScenarioError as exc:  # "steps[4].ms: ..." is the editor's "step 5.ms: ..."
        raise ScenarioError([STEP_PATH.sub(_numbered, p) for p in exc.problems]) from None


def _numbered(match: re.Match[str]) -> str:
    return f"step {int(match.group(1)) + 1}"


def title(original: str) -> str:
    prefix = "What if…? "
    text = original if original.startswith(prefix) else prefix + original
    return text if len(text) <= 120 else text[:119] + "…"


def posted_rows(form: Posted) -> list[ForkRow]:
    """The editor's rows as they were posted, so a refused fork shows the learner's edits."""
    try:
        count = min(int(str(form.get("rows") or 0)), MAX_ROWS)
    except ValueError:
        count = 0
    found: list[ForkRow] = []
    for i in range(count):
        orig = str(form.get(f"orig_{i}") or "")
        said = narrator.click(_original(orig) or {}) if orig else ""
        found.append(
            {
                **steprows.posted(form, i),
                "orig": orig,
                "keep": bool(form.get(f"keep_{i}")),
                "said": said,
            }
        )
    return found


def rows(at: Split) -> list[ForkRow]:
    """The editor's rows: each editable step (its fields, its words) and blank rows to add."""
    shown: list[ForkRow] = []
    for step in at.rest[:EDITABLE]:
        row = steprows.row_of(step)
        shown.append({**row, "orig": json.dumps(step), "said": narrator.click(step), "keep": True})
    blank: ForkRow = {**steprows.blank(), "orig": "", "said": "", "keep": False}
    return shown + [blank.copy() for _ in range(NEW_ROWS)]

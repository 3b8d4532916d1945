"""Hostile imports, generated: scenarios and exported runs, as JSON or as any bytes at all.

``imports.read`` accepts a file or raises ``ImportRefused`` whose every problem starts with the
path of a field (``events[0].seq: ...``, ``scenario.steps[3].ms: ...``) or with the form field
it came in (``file: ...``, ``text: ...``), and stays short. What it accepts, the pages can tell:
the narrator, the verdict's findings and the Mermaid export take any accepted run without
raising.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from lockviz import narrator
from lockviz.errors import ImportRefused
from lockviz.runs import exports
from lockviz.runs.imports import MAX_PROBLEMS, ImportedRun, read
from tests.strategies import EXPORTED, FUZZ, hostile_runs, hostile_scenarios, unnamed

MORE = f"… and more problems after these {MAX_PROBLEMS}"  # the cut-off line, not a problem
RUN = EXPORTED["gc-pause-fenced-run"]


def accepted_or_named(data: bytes | str, decoded: Any, where: str = "file") -> None:
    try:
        found = read(data, where)
    except ImportRefused as exc:
        assert exc.problems, "a refusal without a reason"
        problems = [p for p in exc.problems if p != MORE]
        assert unnamed(problems, decoded, roots=(where,)) == []
        return
    if isinstance(found, ImportedRun):
        told = narrator.narrate(found.events, found.scenario.backend)
        assert [e["seq"] for e in told] == [e["seq"] for e in found.events]
        narrator.headline(found.verdict, found.error, "finished")
        narrator.facts(found.verdict or {})
        run = {"run_id": "x", "scenario": found.scenario.to_json(), "verdict": found.verdict,
               "events": found.events}  # fmt: skip
        assert exports.mermaid(run).startswith("sequenceDiagram\n")


@FUZZ
@given(hostile_runs())
@example({**RUN, "scenario": [1]})
@example({**RUN, "verdict": {**RUN["verdict"], "stuck_clients": [1, None]}})
@example({**RUN, "events": [{**RUN["events"][0], "servers": {"x" * 5000: 1}}]})
@example({**RUN, "events": [{**RUN["events"][0], "Àttl_ms": 1}]})  # a name that is not ASCII
@example(
    {
        **RUN,
        "events": [
            *RUN["events"][:-1],
            {
                **RUN["events"][-1],
                "verdict": {
                    **RUN["events"][-1]["verdict"],
                    "holders": [{**RUN["events"][-1]["verdict"]["holders"][0], "Foo Bar": None}],
                },
            },
        ],
    }
)  # a name with a space, deep in a model's fields (found by a draw)
def test_every_exported_run_is_accepted_or_refused_by_its_fields(data: Any) -> None:
    accepted_or_named(json.dumps(data), data)


@FUZZ
@given(hostile_scenarios())
def test_every_scenario_file_is_accepted_or_refused_by_its_fields(data: Any) -> None:
    accepted_or_named(json.dumps(data).encode(), data)


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """The bytes of a real export or scenario, cut, spliced with garbage or re-encoded."""
    text = json.dumps(draw(st.sampled_from([RUN, *EXPORTED.values()]))).encode()
    how = draw(st.sampled_from(["cut", "splice", "utf16", "bom", "nul"]))
    at = draw(st.integers(0, len(text)))
    if how == "cut":
        return text[:at]
    if how == "splice":
        return text[:at] + draw(st.binary(min_size=1, max_size=8)) + text[at:]
    if how == "utf16":
        return text.decode().encode("utf-16")
    if how == "bom":
        return b"\xef\xbb\xbf" + text
    return text[:at] + b"\0" + text[at:]


@FUZZ
@given(damaged() | st.binary(max_size=300))
def test_any_bytes_are_refused_as_the_file_they_came_in(data: bytes) -> None:
    try:
        decoded = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        decoded = None
    accepted_or_named(data, decoded)


@FUZZ
@given(st.text(max_size=300))
def test_any_pasted_text_is_refused_as_text(text: str) -> None:
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = None
    accepted_or_named(text, decoded, "text")

"""Reading imported files: scenarios and exported runs, and every refusal naming its field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from lockviz.errors import ImportRefused
from lockviz.runs.imports import MAX_EVENTS, ImportedRun, ImportedScenario, read
from tests.conftest import builtin_json
from tests.lockviz.runs.test_exports import recorded


def refused(data: object, where: str = "file") -> list[str]:
    raw = data if isinstance(data, bytes | str) else json.dumps(data)
    with pytest.raises(ImportRefused) as info:
        read(raw, where)
    return info.value.problems


def exported() -> dict:
    return copy.deepcopy(recorded("gc-pause-fenced"))


def test_a_scenario_is_read_as_a_scenario() -> None:
    found = read(json.dumps(builtin_json("gc-pause-fenced")).encode())
    assert isinstance(found, ImportedScenario)
    assert found.scenario.title == "GC pause outlives the lease"


def test_an_exported_run_is_read_with_its_events_and_verdict() -> None:
    run = exported()
    found = read(json.dumps(run))
    assert isinstance(found, ImportedRun)
    assert found.events == run["events"]
    assert found.verdict == run["verdict"] and found.finished and found.expect_met is True


def test_a_scenario_error_names_its_field() -> None:
    data = builtin_json("gc-pause-fenced")
    data["steps"][1]["ms"] = 0
    assert refused(data) == ["steps[1].ms: a pause must last more than 0 ms"]
    run = exported()
    run["scenario"]["steps"][3]["ms"] = "long"
    assert refused(run) == [
        'scenario.steps[3].ms: Input should be a valid integer (got "long")'  # the value, quoted
    ]


def test_every_problem_is_listed_even_behind_a_value_of_the_wrong_type() -> None:
    data = builtin_json("contention")
    data["steps"][0]["at_ms"] = "soon"  # the schema stops at this kind of problem...
    data["steps"][1]["client"] = "carol"  # ...and these need the whole scenario
    data["steps"][2]["do"] = "fly"
    found = refused(data)
    assert found[0] == 'steps[0].at_ms: Input should be a valid integer (got "soon")'
    assert found[1].startswith("steps[1].client: 'carol' is not one of the scenario's clients")
    assert found[2].startswith("steps[2].do: unknown verb 'fly'")
    assert len(found) == 3


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"not json", "file: not valid JSON: Expecting value at line 1 column 1"),
        (b"[1, 2]", "file: holds a JSON array; it must be a JSON object"),
        (b'"text"', 'file: holds text ("text"); it must be a JSON object'),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "file: this is a binary file, not JSON text"),
        (b"{\xff}", "file: not UTF-8 text (byte 0xff at position 1)"),
        (b"  \n", "file: it is empty"),
        (b'{"t": NaN}', "file: NaN is not a finite number"),
        (b'{"t": 1e999}', "file: 1e999 is not a finite number"),
        (b'{"t": ' + b"9" * 5000 + b"}", "file: an integer of 5,000 digits; the most is 20"),
        (b"[" * 200_000, "file: nested 200,000 deep; the most is 32"),
        (b" " * (10 * 1024 * 1024), "file: 10 MB is too big; the most is 5 MB"),
    ],
)
def test_garbage_is_refused_with_a_reason(data: bytes, problem: str) -> None:
    problems = refused(data)
    assert len(problems) == 1 and problems[0].startswith(problem)


def test_pasted_text_is_named_as_text() -> None:
    assert refused("{", "text")[0].startswith("text: not valid JSON")


def test_each_bad_event_names_its_index_and_field() -> None:
    run = exported()
    run["events"][3]["t_ms"] = "soon"
    run["events"][5]["say"] = 42
    run["events"][7]["actor"] = ""
    del run["events"][8]["kind"]
    run["events"][12]["seq"] = 12  # the same as the one before
    run["events"][14]["seq"] = 2.5
    assert refused(run) == [
        'events[3].t_ms: must be a number of milliseconds, not text ("soon")',
        "events[5].say: must be text (a JSON string), not the number 42",
        "events[7].actor: must be 1 to 40 characters long",
        "events[8].kind: required field is missing",
        "events[12].seq: must be greater than the previous (12)",
        "events[14].seq: must be a whole number, not the number 2.5",
    ]


def test_seqs_must_strictly_increase_and_be_positive() -> None:
    run = exported()
    run["events"][0]["seq"] = 0
    run["events"][11]["seq"] = 11
    assert refused(run) == [
        "events[0].seq: must be from 1 to 2147483647, not 0",
        "events[11].seq: must be greater than the previous (11)",
    ]


def test_the_shape_of_the_file_and_the_verdict_is_named() -> None:
    assert refused({"events": []}) == [
        "scenario: required field is missing (the scenario the run ran)",
        "events: the run has no events",
    ]
    run = exported()
    run["events"] = {"1": {}}
    run["verdict"]["overlaps"][0]["start_ms"] = None
    run["verdict"]["writes"] = "many"
    run["expect_met"] = "yes"
    assert refused(run) == [
        "events: must be a list, not an object",
        "verdict.overlaps[0].start_ms: must be a number, not null",
        'verdict.writes: must be a list, not text ("many")',
        'expect_met: must be true or false, not text ("yes")',
    ]


def test_the_number_of_events_is_bounded() -> None:
    run = exported()
    one = run["events"][1]
    run["events"] = [{**one, "seq": i + 1} for i in range(MAX_EVENTS + 1)]
    assert refused(run) == [f"events: {MAX_EVENTS + 1} events; the most is {MAX_EVENTS}"]


def test_a_flood_of_problems_is_cut_short() -> None:
    run = exported()
    for e in run["events"]:
        e["actor"], e["kind"] = 7, None
    problems = refused(run)
    assert len(problems) <= 32 and problems[-1].startswith("… and more problems")


def test_a_run_without_a_verdict_or_that_failed_is_imported_as_failed() -> None:
    run = exported()
    run["verdict"] = None
    run["events"] = run["events"][:-1]
    found = read(json.dumps(run))
    assert isinstance(found, ImportedRun) and not found.finished
    assert "had not finished" in found.error
    run["events"].append({"seq": 99, "t_ms": 5000, "actor": "lab", "kind": "run_failed",
                          "error": "redis-1 did not start"})  # fmt: skip
    found = read(json.dumps(run))
    assert isinstance(found, ImportedRun) and found.error == "redis-1 did not start"


def test_every_built_in_run_recorded_on_the_lab_imports() -> None:
    runs = Path(__file__).parents[2] / "browser" / "data" / "runs"
    for path in sorted(runs.glob("*.json")):
        found = read(path.read_text())  # a PostgreSQL run's lock key is a number
        assert isinstance(found, ImportedRun) and found.finished, path.stem


def test_each_events_fields_are_checked_as_its_kind_declares_them() -> None:
    run = exported()
    run["events"][1]["index"] = "first"  # a step's index (lockviz/lab/events.py: Step)
    run["events"][2]["colour"] = "red"  # no request has one
    del run["events"][4]["token"]  # every grant has one (null for Redlock)
    run["events"][6]["kind"] = "evaporated"
    assert refused(run) == [
        'events[1].index: must be a whole number, not text ("first")',
        "events[2].colour: a request event has no such field",
        "events[4].token: required field is missing (every granted event has it)",
        'events[6].kind: "evaporated" is not a kind of event',
    ]

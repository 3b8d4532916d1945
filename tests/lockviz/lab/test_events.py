"""The event contract (lockviz/lab/events.py): every recorded event parses into its kind's
model and back to the same JSON, and the files generated from it are up to date."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from pydantic import ValidationError

from lockviz.lab import events
from tests.conftest import ROOT
from tests.without_django import run_without_django

RECORDED = sorted(
    [
        *(ROOT / "tests" / "browser" / "data" / "runs").glob("*.json"),
        *(ROOT / "tests" / "browser" / "data").glob("*.json"),
        *(ROOT / "tests" / "lockviz" / "data").glob("*.json"),
    ]
)


def generated(option: str) -> str:
    out = StringIO()
    call_command("events", option, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_every_stored_event_of_every_recorded_run_parses_and_keeps_its_json(path: Path) -> None:
    stored = json.loads(path.read_text())["events"]
    assert stored
    for data in stored:
        event = events.parse(data)
        assert event.kind == data["kind"]
        assert events.as_json(event) == data  # nothing added, dropped, or retyped (500 ≠ 500.0)


def test_the_recorded_runs_cover_most_kinds() -> None:
    seen = {e["kind"] for path in RECORDED for e in json.loads(path.read_text())["events"]}
    assert seen <= set(events.KINDS)
    # Not in any recorded run: a failed, interrupted or cancelled run, a refused step, an ended
    # one and a ZooKeeper session change (each has its own test where it is recorded).
    rare = {"run_failed", "run_interrupted", "run_cancelled", "step_refused", "session"}
    assert set(events.KINDS) - seen <= rare


def test_an_undeclared_field_or_a_wrong_type_is_refused() -> None:
    base = {"seq": 1, "t_ms": 0.0, "actor": "alice", "kind": "paused", "ms": 500}
    assert events.as_json(events.parse(base)) == base
    with pytest.raises(ValidationError):
        events.parse({**base, "seconds": 1})
    with pytest.raises(ValidationError):
        events.parse({**base, "ms": "500"})
    with pytest.raises(ValidationError):
        events.parse({**base, "kind": "frozen"})


def test_the_json_schema_file_is_up_to_date() -> None:
    committed = (ROOT / "static" / "lockviz" / "events.schema.json").read_text()
    assert committed == generated("--schema"), (
        "regenerate it: manage.py events --schema > static/lockviz/events.schema.json"
    )


def test_the_schema_names_every_kind() -> None:
    schema = json.loads(generated("--schema"))
    assert set(schema["discriminator"]["mapping"]) == set(events.KINDS)
    reply = schema["$defs"]["Reply"]["properties"]
    assert "from" in reply and "frm" not in reply


def test_docs_events_md_is_generated_from_the_models() -> None:
    committed = (ROOT / "docs" / "events.md").read_text()
    assert committed == generated("--markdown"), (
        "regenerate it: manage.py events --markdown > docs/events.md"
    )
    for kind in events.KINDS:
        assert f"| `{kind}` |" in committed


# Kinds no recorded run holds, as the lab records them.
RARE = [
    {"kind": "run_failed", "actor": "lab", "error": "redis-1 did not start"},
    {"kind": "run_interrupted", "actor": "lab", "why": "the app stopped"},
    {"kind": "run_cancelled", "actor": "lab", "why": "nobody watched it"},
    {"kind": "step_refused", "actor": "alice", "index": 3, "why": "alice has crashed"},
    {"kind": "session", "actor": "alice", "state": "SUSPENDED"},
]


def test_the_narrator_has_words_of_its_own_for_every_kind() -> None:
    """A kind declared here and not said by the narrator falls back to its bare name."""
    from lockviz.narrator import Narrator

    samples = {e["kind"]: e for path in RECORDED for e in json.loads(path.read_text())["events"]}
    samples.update({e["kind"]: {"seq": 1, "t_ms": 0.0, **e} for e in RARE})
    assert set(samples) == set(events.KINDS)
    for kind, data in samples.items():
        events.parse(data)  # a real event of its kind
        said = Narrator("redis").said(data)
        assert said.phrase != kind and said.text, kind


def test_the_event_module_imports_without_django() -> None:
    """The lab's processes read the contract too: it needs pydantic, never Django."""
    code = (
        "import sys, lockviz.lab.events\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('django', 'channels'))\n"
        "assert not bad, bad\n"
    )
    run_without_django(code)

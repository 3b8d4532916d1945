"""``manage.py events --markdown | --schema``: the event contract, written from its one source.

docs/events.md (``--markdown``) and static/lockviz/events.schema.json (``--schema``, the JSON
Schema the front end's unit tests check their handlers against) are both generated from
:mod:`lockviz.lab.events`; tests/lockviz/lab/test_events.py fails when a committed file differs
from what this prints. After changing an event kind::

    .venv/bin/python manage.py events --markdown > docs/events.md
    .venv/bin/python manage.py events --schema > static/lockviz/events.schema.json
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandParser

from lockviz.jsontypes import JsonValue
from lockviz.lab import events
from lockviz.lab.eventdoc import markdown

# What the narrator adds to every event the browser gets (lockviz.narrator.words.Said's
# ``as_data``): the words are part of what the front end reads, so part of its schema.
SAID: dict[str, JsonValue] = {
    "type": "object",
    "description": "The narrator's words for this event, as the browser gets them",
    "properties": {
        "text": {"type": "string", "description": "a sentence with its subject"},
        "label": {"type": "string", "description": "the diagram's label"},
        "mark": {"type": "string", "description": "a second mark's words"},
        "short": {"type": "string", "description": "the label cut short"},
        "tone": {"type": "string", "description": '"damage": an accepted stale write'},
        "round": {"type": "integer", "description": "the acquire round it belongs to"},
        "fold": {"type": "string", "description": "what the diagram folds, on a settling event"},
    },
    "required": ["text", "label", "mark"],
    "additionalProperties": False,
}


def told_schema() -> dict[str, JsonValue]:
    """The events as the browser gets them: each kind's fields, and the narrator's ``said``."""
    schema = events.json_schema()
    defs = schema.get("$defs")
    assert isinstance(defs, dict)
    for model in defs.values():
        properties = model.get("properties") if isinstance(model, dict) else None
        if isinstance(properties, dict) and "kind" in properties:
            properties["said"] = {"$ref": "#/$defs/Said"}
    defs["Said"] = SAID
    return schema


def schema_text() -> str:
    """The committed schema file's text: sorted keys, so a diff shows what changed."""
    return json.dumps(told_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class Command(BaseCommand):
    help = "Print docs/events.md (--markdown) or the events' JSON Schema (--schema)."

    def add_arguments(self, parser: CommandParser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--markdown", action="store_true", help="docs/events.md")
        what.add_argument("--schema", action="store_true", help="events.schema.json")

    def handle(self, *args: object, **options: object) -> None:
        self.stdout.write(markdown() if options["markdown"] else schema_text(), ending="")

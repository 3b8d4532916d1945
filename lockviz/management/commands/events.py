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

from lockviz.lab import events
from lockviz.lab.eventdoc import markdown


def schema_text() -> str:
    """The committed schema file's text: sorted keys, so a diff shows what changed."""
    return json.dumps(events.json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class Command(BaseCommand):
    help = "Print docs/events.md (--markdown) or the events' JSON Schema (--schema)."

    def add_arguments(self, parser: CommandParser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--markdown", action="store_true", help="docs/events.md")
        what.add_argument("--schema", action="store_true", help="events.schema.json")

    def handle(self, *args: object, **options: object) -> None:
        self.stdout.write(markdown() if options["markdown"] else schema_text(), ending="")

"""A NUL or other control character in any name, title or id is refused with a sentence, before
it reaches the database (PostgreSQL refuses NUL in text)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from lockviz.errors import ImportRefused, ScenarioError
from lockviz.models import Member, Poll
from lockviz.runs import imports
from tests.conftest import builtin_json, scenario
from tests.lockviz.teaching.test_rooms import open_room

pytestmark = pytest.mark.django_db


def test_a_scenario_title_or_name_with_a_control_character_is_refused() -> None:
    with pytest.raises(ScenarioError) as refused:
        scenario(title="GC\x00pause", clients=["al\x1bice", "bob"])
    assert refused.value.problems == [
        "title: holds a NUL character (U+0000), which no name, title or id may contain",
        "clients[0]: holds a control character (U+001B), which no name, title or id may contain",
    ]


def test_an_id_in_the_address_with_a_control_character_is_refused() -> None:
    for path in ("/runs/ab%00cd/", "/r/AB%07CD", "/lessons/?run=%00"):
        response = Client().get(path)
        said = response.content.decode()
        assert response.status_code == 400, path
        assert "NUL character (U+0000)" in said or "control character (U+0007)" in said, path


def test_a_member_name_and_a_poll_with_control_characters_are_refused() -> None:
    teacher, ada = Client(), Client()
    room = open_room(teacher)
    joined = ada.post(f"/r/{room.code}", {"name": "Ada\x00"})
    assert joined.status_code == 400 and "name: holds a NUL character" in joined.content.decode()
    assert not Member.objects.exists()
    asked = teacher.post(f"/rooms/{room.code}/polls", {"question": "Next\x1b?", "choices": "a\nb"})
    assert asked.status_code == 400 and asked.content.decode().startswith("question: holds")
    assert not Poll.objects.exists()


def test_an_import_holding_a_nul_is_refused() -> None:
    run = builtin_json("contention") | {"title": "a\u0000b"}
    with pytest.raises(ImportRefused) as refused:
        imports.read(json.dumps(run), "file")
    assert refused.value.problems == [
        "file: holds a NUL character (U+0000), which no text may contain"
    ]

"""Logins nobody can lock, and guessing that gets nowhere.

Failures are counted on the name as authentication reads it (NFKC, case folded: the full-width
spelling of a name is that name), per address *and* name, so a class's shared address is not
locked by guesses at another name. Past a name's failures from everywhere, a device that never
logged in as it is slowed (a few attempts a minute), not blocked; a device that did (its signed
device cookie) is let through with the right password.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

pytestmark = pytest.mark.django_db
GOOD = "lease-outlives-the-pause"
FULL_WIDTH_ADA = "ａｄａ"


def attempt(client: Client, password: str, name: str = "ada") -> int:
    return client.post("/accounts/login/", {"username": name, "password": password}).status_code


def test_guesses_from_many_addresses_do_not_lock_out_a_device_that_logged_in_before(
    settings: Any,
) -> None:
    """21 wrong passwords for a name from 7 addresses once kept its teacher out for an hour,
    whatever device they came back on."""
    User.objects.create_user("ada", password=GOOD)
    laptop = Client(REMOTE_ADDR="10.1.0.1")
    assert attempt(laptop, GOOD) == 302
    laptop.post("/accounts/logout/")
    for address in range(7):
        guesser = Client(REMOTE_ADDR=f"10.2.0.{address}")
        assert [attempt(guesser, f"guess {i}") for i in range(3)] == [400] * 3
    laptop.defaults["REMOTE_ADDR"] = "10.3.0.1"  # the teacher, at home now
    assert attempt(laptop, GOOD) == 302
    assert "_auth_user_id" in laptop.session


def test_a_shared_address_is_not_locked_by_guesses_at_another_name(settings: Any) -> None:
    """20 failures from a class's shared address once locked every login there."""
    User.objects.create_user("ada", password=GOOD)
    student = Client(REMOTE_ADDR="10.4.0.1")
    for i in range(settings.LOCKVIZ_LOGIN_FAILURES_PER_HOUR):
        attempt(student, f"guess {i}", name="mallory")
    assert attempt(student, "one more", name="mallory") == 429
    teacher = Client(REMOTE_ADDR="10.4.0.1")  # same NAT, a device new to this app
    assert attempt(teacher, GOOD) == 302


def test_past_a_names_failures_a_new_device_is_slowed_not_blocked(settings: Any) -> None:
    settings.LOCKVIZ_LOGIN_FAILURES_PER_HOUR = 3
    User.objects.create_user("ada", password=GOOD)
    for address in range(3):
        assert attempt(Client(REMOTE_ADDR=f"10.5.0.{address}"), "guess") == 400
    newcomer = Client(REMOTE_ADDR="10.5.1.1")
    assert attempt(newcomer, "a guess from a botnet") == 400  # one attempt in the minute
    slowed = newcomer.post("/accounts/login/", {"username": "ada", "password": GOOD})
    assert slowed.status_code == 429 and 0 < int(slowed["Retry-After"]) <= 60
    assert "a minute" in slowed.text


def test_the_full_width_spelling_of_a_name_is_counted_as_the_name(settings: Any) -> None:
    """The full-width spelling logged in as the name, and its failures were counted apart."""
    settings.LOCKVIZ_LOGIN_FAILURES_PER_HOUR = 3
    User.objects.create_user("ada", password=GOOD)
    assert attempt(Client(REMOTE_ADDR="10.6.0.9"), GOOD, FULL_WIDTH_ADA) == 302  # the same name
    for address in range(3):
        assert attempt(Client(REMOTE_ADDR=f"10.6.0.{address}"), "guess", FULL_WIDTH_ADA) == 400
    elsewhere = Client(REMOTE_ADDR="10.6.1.1")
    assert attempt(elsewhere, "guess", "Ada") == 400
    assert attempt(elsewhere, "guess", "ADA") == 429  # slowed: the name's failures, all of them


def test_createteacher_refuses_a_normalized_twin_with_a_sentence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    User.objects.create_user("ada", password=GOOD)
    for twin in (FULL_WIDTH_ADA, "Ada", "ADA"):
        monkeypatch.setattr("sys.stdin", io.StringIO(GOOD + "\n"))
        with pytest.raises(CommandError, match="'ada' exists already"):
            call_command("createteacher", twin, "--password-stdin", stdout=io.StringIO())
    assert User.objects.count() == 1

"""Teacher accounts: createteacher, logging in (and guessing refused), sign-up only when allowed,
and a browser's runs and rooms becoming the account's when it logs in."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from lockviz import accounts
from lockviz.library import saving
from lockviz.models import Room, Run, SavedRun
from tests.conftest import browser_of
from tests.lockviz.library.helpers import recorded_run

pytestmark = pytest.mark.django_db(transaction=True)
GOOD = "lease-outlives-the-pause"


def _create(monkeypatch: pytest.MonkeyPatch, *args: str, password: str = GOOD) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
    out = io.StringIO()
    call_command("createteacher", *args, "--password-stdin", stdout=out)
    return out.getvalue()


def test_createteacher_makes_an_account_that_logs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "Made the teacher account 'ada'" in _create(monkeypatch, "ada")
    ada = User.objects.get(username="ada")
    assert ada.check_password(GOOD) and not ada.is_staff
    client = Client()
    response = client.post("/accounts/login/", {"username": "ada", "password": GOOD})
    assert response.status_code == 302 and response["Location"] == "/library/"
    assert 'id="logout"' in client.get("/library/").content.decode()
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/library/").status_code == 302  # to the login page again


def test_createteacher_refuses_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CommandError, match="Password refused: This password is too short"):
        _create(monkeypatch, "ada", password="short")
    with pytest.raises(CommandError, match="more than 1024 characters"):
        _create(monkeypatch, "ada", password="x" * 5000)
    with pytest.raises(CommandError, match="No password on standard input"):
        _create(monkeypatch, "ada", password="")
    with pytest.raises(CommandError, match="Not a teacher account: username"):
        _create(monkeypatch, "ada lovelace!")
    with pytest.raises(CommandError, match="Not a teacher account: username"):
        _create(monkeypatch, "a" * 151)
    _create(monkeypatch, "ada", "--admin")
    assert User.objects.get(username="ada").is_staff
    with pytest.raises(CommandError, match="exists already"):
        _create(monkeypatch, "ada")
    assert "New password for 'ada'" in _create(
        monkeypatch, "ada", "--reset-password", password="another-long-passphrase"
    )
    with pytest.raises(CommandError, match="No terminal to ask"):
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        call_command("createteacher", "bob")


def test_guessing_a_password_is_refused_after_a_few_failures(settings: Any) -> None:
    settings.LOCKVIZ_LOGIN_FAILURES_PER_HOUR = 3
    User.objects.create_user("ada", password=GOOD)
    client = Client()
    for guess in ("a", "b", "c"):
        response = client.post("/accounts/login/", {"username": "ada", "password": guess})
        assert response.status_code == 400
        assert "enter a correct username and password" in response.content.decode()
    response = client.post("/accounts/login/", {"username": "ada", "password": GOOD})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "Too many failed logins" in response.content.decode()
    assert "_auth_user_id" not in client.session
    other = Client(REMOTE_ADDR="10.9.9.9")  # another address: slowed by the account's count
    assert other.post("/accounts/login/", {"username": "ada", "password": "d"}).status_code == 400
    response = other.post("/accounts/login/", {"username": "ada", "password": "e"})
    assert response.status_code == 429 and "LOCKVIZ_LOGIN_SLOWED_PER_MINUTE" in response.text
    assert "_auth_user_id" not in other.session  # (tests/lockviz/accounts/test_logins.py)


def test_the_admin_sites_login_is_the_counted_one() -> None:
    page = Client().get("/admin/login/?next=/admin/").content.decode()
    assert 'id="login-button"' in page and 'value="/admin/"' in page


def test_sign_up_is_off_unless_the_deployment_allows_it(settings: Any) -> None:
    client = Client()
    response = client.get("/accounts/signup/")
    assert response.status_code == 403 and "Sign-up is off" in response.content.decode()
    form = {"username": "ada", "password1": GOOD, "password2": GOOD}
    assert client.post("/accounts/signup/", form).status_code == 403
    settings.LOCKVIZ_SIGNUP = True
    bad = client.post("/accounts/signup/", {**form, "password2": "other"})
    assert bad.status_code == 400 and "didn" in bad.content.decode()
    response = client.post("/accounts/signup/", form)
    assert response.status_code == 302 and User.objects.filter(username="ada").exists()


def test_what_a_browser_owned_becomes_the_accounts_when_it_logs_in() -> None:
    User.objects.create_user("ada", password=GOOD)
    client = Client()
    token = browser_of(client)
    run = recorded_run(owner=token)
    client.post("/rooms/")
    room = Room.objects.get(presenter=token)
    client.post("/accounts/login/", {"username": "ada", "password": GOOD})
    ada = User.objects.get(username="ada")
    run = Run.objects.get(pk=run.pk)
    assert (run.owner, run.user) == (accounts.owner_of(ada), ada)
    assert Room.objects.get(pk=room.pk).presenter == accounts.owner_of(ada)
    second = Client()  # another device: the room is hers there too
    second.force_login(ada)
    assert second.get(f"/rooms/{room.code}/").status_code == 200  # the presenter's page
    assert Client().get(f"/rooms/{room.code}/").status_code == 302  # anyone else: to join
    assert second.post(f"/rooms/{room.code}/settings", {"joins_open": "on"}).status_code != 403
    assert Client().post(f"/rooms/{room.code}/settings", {"joins_open": "on"}).status_code == 403


def test_an_owner_name_is_never_a_browsers_token() -> None:
    assert accounts.account_id("account:12") == 12
    assert accounts.account_id("account:x") is None
    assert accounts.account_id("account:" + "9" * 40) is None
    assert accounts.account_id("Zk3-_abc") is None


def test_the_admin_site_shows_teachers_and_their_libraries_to_an_admin() -> None:
    admin = User.objects.create_superuser("root", password=GOOD)
    ada = User.objects.create_user("ada", password=GOOD)
    run = recorded_run(owner=accounts.owner_of(ada))
    saving.save_run(ada, run, "public", "Kept")
    client = Client()
    client.force_login(admin)
    for path in ("/admin/", "/admin/auth/user/", "/admin/lockviz/savedrun/",
                 f"/admin/lockviz/savedrun/{run.pk}/change/", "/admin/lockviz/savedscenario/",
                 "/admin/lockviz/run/", f"/admin/lockviz/run/{run.pk}/change/"):  # fmt: skip
        response = client.get(path)
        assert response.status_code == 200, path
    assert "Kept" in client.get("/admin/lockviz/savedrun/").content.decode()
    teacher = Client()
    teacher.force_login(ada)
    assert teacher.get("/admin/").status_code == 302  # a teacher is not an admin


def test_a_deleted_accounts_runs_and_rooms_are_nobodys() -> None:
    ada = User.objects.create_user("ada", password=GOOD)
    kept, other = (recorded_run(owner=accounts.owner_of(ada)) for _ in range(2))
    saving.save_run(ada, kept)
    ada.delete()
    assert not Run.objects.filter(pk=kept.pk).exclude(owner="").exists()
    assert Run.objects.get(pk=other.pk).owner == ""
    assert not SavedRun.objects.exists()  # the library went with the account

"""``manage.py createteacher NAME``: a teacher account (or a new password for one).

The password is asked for twice on a terminal, or read as one line from standard input with
``--password-stdin`` (for scripts: ``printf '%s\\n' "$PW" | manage.py createteacher ada
--password-stdin``); it never goes on the command line, where ``ps`` would show it. It must pass
the installation's password checks (settings.AUTH_PASSWORD_VALIDATORS: ten characters or more,
not common, not all digits, not like the name). ``--admin`` makes the teacher an admin of the
admin site (/admin/) too. Every refusal says what is wrong, never a traceback.

It writes to the database the replicas share only when it is run with their environment
(``LOCKVIZ_DATABASE_URL`` and its password file: docs/deploy.md, "Teacher accounts"). Run
without it, it would find the default SQLite file: it refuses, naming the database it was given,
before anything connects to it — so no empty ``lockviz.sqlite3`` is left behind — and refuses a
database with no tables yet the same way.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connection

from lockviz.accounts import logins

MAX_PASSWORD = 1024  # characters: a password line longer than this is refused, not read on


class Command(BaseCommand):
    help = "Make a teacher account NAME (the password is asked for, or read from stdin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the name the teacher logs in with")
        parser.add_argument("--email", default="", help="the teacher's e-mail address")
        parser.add_argument(
            "--password-stdin", action="store_true", help="read the password from stdin"
        )
        parser.add_argument("--admin", action="store_true", help="an admin of /admin/ too")
        parser.add_argument(
            "--reset-password", action="store_true", help="set a new password for NAME"
        )

    def execute(self, *args: object, **options: object) -> str | None:
        tables()  # before the system checks, which would connect (and make an empty SQLite file)
        return super().execute(*args, **options)

    def handle(self, *args: object, **options: object) -> None:
        given = str(options["name"]).strip()
        name = User.normalize_username(given)  # as a login reads it: NFKC
        email = str(options["email"] or "").strip()
        user = User(username=name, email=email)
        try:
            user.full_clean(exclude=["password"], validate_unique=False)
        except ValidationError as exc:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            raise CommandError(f"Not a teacher account: {problems}") from None
        key = logins.name_key(name)
        twins = [
            u
            for u in User.objects.filter(username__iexact=name)
            if logins.name_key(u.username) == key
        ]
        existing = next((u for u in twins if u.username == name), twins[0] if twins else None)
        if existing is not None and not options["reset_password"]:
            same = "" if existing.username == given else f" ({given!r} is the same name)"
            raise CommandError(
                f"A teacher named {existing.username!r} exists already{same}; "
                "--reset-password sets a new password."
            )
        if existing is None and options["reset_password"]:
            raise CommandError(f"There is no teacher named {name!r} to reset.")
        user = existing or user
        password = self._password(bool(options["password_stdin"]))
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise CommandError("Password refused: " + " ".join(exc.messages)) from None
        user.set_password(password)
        if options["admin"]:
            user.is_staff = user.is_superuser = True
        user.save()
        done = "New password for" if existing else "Made the teacher account"
        self.stdout.write(f"{done} {name!r}{' (an admin)' if user.is_staff else ''}.")

    def _password(self, from_stdin: bool) -> str:
        if from_stdin:
            line = sys.stdin.readline(MAX_PASSWORD + 2)
            password = line.rstrip("\r\n")
            if len(password) > MAX_PASSWORD:
                raise CommandError(f"Password refused: more than {MAX_PASSWORD} characters.")
            if not password:
                raise CommandError("No password on standard input (one line is read).")
            return password
        if not sys.stdin.isatty():
            raise CommandError(
                "No terminal to ask for the password on: pipe it in with --password-stdin."
            )
        try:
            first = getpass.getpass("Password: ")
            again = getpass.getpass("Password (again): ")
        except (EOFError, KeyboardInterrupt):
            raise CommandError("No password given.") from None
        if first != again:
            raise CommandError("The two passwords differ.")
        if len(first) > MAX_PASSWORD:
            raise CommandError(f"Password refused: more than {MAX_PASSWORD} characters.")
        return first


WITH_THE_REPLICAS = (
    "run it with the replicas' environment, LOCKVIZ_DATABASE_URL and its password file "
    '(docs/deploy.md, "Teacher accounts")'
)


def tables() -> None:
    """The accounts' table in the database this command was given, or a refusal that names
    that database and what to do."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        where = f"the SQLite file {db['NAME']}"
        name = str(db["NAME"])
        if not (name == ":memory:" or "mode=memory" in name or Path(name).is_file()):
            raise CommandError(
                f"There is no database at {where}: no LOCKVIZ_DATABASE_URL was set, so this "
                f"command looked there. To make a teacher on your server, {WITH_THE_REPLICAS}."
            )
    else:
        where = f"the database {db['NAME']} on {db['HOST'] or 'localhost'}:{db['PORT'] or 5432}"
    try:
        found = connection.introspection.table_names()
    except DatabaseError as exc:
        raise CommandError(f"Cannot read {where}: {str(exc).strip()}") from None
    if "auth_user" not in found:
        raise CommandError(
            f"{where[0].upper()}{where[1:]} has no tables yet: start a replica once (it "
            "creates them), or run `manage.py migrate` with the same environment; "
            f"if it is not your server's database, {WITH_THE_REPLICAS}."
        )

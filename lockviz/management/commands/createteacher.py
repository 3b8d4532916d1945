"""``manage.py createteacher NAME``: a teacher account (or a new password for one).

The password is asked for twice on a terminal, or read as one line from standard input with
``--password-stdin`` (for scripts: ``printf '%s\\n' "$PW" | manage.py createteacher ada
--password-stdin``); it never goes on the command line, where ``ps`` would show it. It must pass
the installation's password checks (settings.AUTH_PASSWORD_VALIDATORS: ten characters or more,
not common, not all digits, not like the name). ``--admin`` makes the teacher an admin of the
admin site (/admin/) too. Every refusal says what is wrong, never a traceback.
"""

from __future__ import annotations

import getpass
import sys

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

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

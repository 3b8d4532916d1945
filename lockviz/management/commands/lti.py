"""``manage.py lti``: lockviz as an LTI 1.3 tool, registered with a platform (docs/lms.md).

    manage.py lti addresses --base https://lockviz.example.edu   what to enter in the LMS
    manage.py lti register --issuer ... --client-id ... --auth-url ... --token-url ...
                           --keyset-url ... --deployment ID [--deployment ID2] [--name NAME]
    manage.py lti list                                           registrations and deployments
    manage.py lti key                                            the tool's key (made if none)

The admin (/admin/, django-lti's pages) makes and changes the same; ``manage.py rotate_keys``
(django-lti) makes a new key and retires old ones. Every refusal says what is wrong.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lockviz.errors import Invalid
from lockviz.lms import register


class Command(BaseCommand):
    help = "Register an LTI 1.3 platform with lockviz, list registrations, show the tool's URLs."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        shown = sub.add_parser("addresses", help="the tool's addresses to enter in the LMS")
        shown.add_argument("--base", required=True, help="the site's address, https://…")
        made = sub.add_parser("register", help="register a platform (or update it)")
        for name in ("issuer", "client-id", "auth-url", "token-url", "keyset-url"):
            made.add_argument(f"--{name}", required=True)
        made.add_argument("--deployment", action="append", default=[], required=True)
        made.add_argument("--name", default="")
        sub.add_parser("list", help="the platforms registered, with their deployments")
        sub.add_parser("key", help="the tool's signing key (made if there is none)")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "addresses":
            for label, url in register.addresses(str(options["base"]).rstrip("/")).items():
                self.stdout.write(f"{label}: {url}")
        elif action == "register":
            platform = register.Platform(
                name=options["name"], issuer=options["issuer"], client_id=options["client_id"],
                auth_url=options["auth_url"], token_url=options["token_url"],
                keyset_url=options["keyset_url"], deployments=tuple(options["deployment"]),
            )  # fmt: skip
            try:
                found = register.register(platform)
            except Invalid as exc:
                raise CommandError("; ".join(exc.problems)) from None
            self.stdout.write(
                f"registered {found.name} ({found.uuid}), client id {found.client_id}"
            )
        elif action == "list":
            for found in register.listed():
                ids = ", ".join(
                    f"{d.deployment_id}{'' if d.is_active else ' (inactive)'}"
                    for d in found.deployments.all()
                )
                state = "active" if found.is_active else "inactive"
                self.stdout.write(
                    f"{found.name}: {found.issuer} client {found.client_id} ({state}); "
                    f"deployments: {ids or 'none'}"
                )
        else:
            self.stdout.write(f"key {register.key().id} is active")

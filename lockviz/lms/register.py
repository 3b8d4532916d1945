"""A platform's registration with this tool, and the tool's own key: what ``manage.py lti``
and the admin make (django-lti's models: ``LtiRegistration``, ``LtiDeployment``, ``Key``).

A registration is what the platform told its administrator when they added lockviz: its issuer,
the client id it gave the tool, and its three addresses (OIDC authorization, OAuth token, its
JWKS). Each deployment id it will launch with is made active here: a launch from a deployment
that is not is refused. The tool's addresses for the platform are :func:`addresses`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db import transaction
from django.urls import reverse
from lti_tool.models import Key, LtiDeployment, LtiRegistration

from lockviz.errors import Invalid


@dataclass(frozen=True)
class Platform:
    name: str
    issuer: str
    client_id: str
    auth_url: str
    token_url: str
    keyset_url: str
    deployments: tuple[str, ...]


def _url(name: str, value: str) -> list[str]:
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.netloc or len(value) > 200:
        return [f"{name}: {value[:60]!r} is not an http(s) address of at most 200 characters"]
    return []


def register(platform: Platform) -> LtiRegistration:
    """Make (or update) the registration of ``platform`` and activate its deployments; the
    tool's key is made too if it has none. :class:`Invalid` names each field that is wrong."""
    problems = [
        p
        for name in ("issuer", "auth_url", "token_url", "keyset_url")
        for p in _url(name, getattr(platform, name))
    ]
    if not platform.client_id.strip() or len(platform.client_id) > 255:
        problems.append("client_id: the client id the platform gave lockviz (1 to 255 characters)")
    if not platform.deployments or any(not d or len(d) > 255 for d in platform.deployments):
        problems.append("deployment: at least one deployment id (1 to 255 characters each)")
    if problems:
        raise Invalid(problems)
    with transaction.atomic():
        found, _ = LtiRegistration.objects.update_or_create(
            issuer=platform.issuer, client_id=platform.client_id,
            defaults={"name": platform.name[:255] or platform.issuer[:255],
                      "auth_url": platform.auth_url, "token_url": platform.token_url,
                      "keyset_url": platform.keyset_url, "is_active": True},
        )  # fmt: skip
        for deployment in platform.deployments:
            LtiDeployment.objects.update_or_create(
                registration=found, deployment_id=deployment, defaults={"is_active": True}
            )
        key()
    return found


def key() -> Key:
    """The tool's newest active key, made if there is none (``manage.py rotate_keys`` makes a
    new one and retires old ones)."""
    found = Key.objects.filter(is_active=True).order_by("-datetime_created").first()
    return found if found is not None else Key.objects.generate()


def addresses(base: str) -> dict[str, str]:
    """What a platform's administrator enters for lockviz, on the site at ``base``."""
    return {
        "OIDC login (initiate login) URL": base + reverse("lti_login"),
        "Launch (redirect / target link) URL": base + reverse("lti_launch"),
        "Deep linking URL": base + reverse("lti_launch"),
        "Public keyset (JWKS) URL": base + reverse("lti_jwks"),
    }


def listed() -> Sequence[LtiRegistration]:
    return list(LtiRegistration.objects.prefetch_related("deployments").order_by("name"))

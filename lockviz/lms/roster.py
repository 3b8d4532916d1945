"""A course's learners, as its LMS lists them (LTI Names and Role Provisioning Services).

At an instructor's launch, :func:`refresh` asks the platform's context membership service for
the course's members (pylti1p3's service, with an access token as for grades) and keeps them
in django-lti's memberships: each page read within bounds (lockviz.lms.bounded), at most
:data:`MAX_PAGES` pages and :data:`MAX_MEMBERS` members, and of each member only what it says
as the service defines it (a ``user_id``, its roles, its names as text); :func:`of` gives a
room's class view its course's learners, each with the owner name their launches gave them
here, or None for one who never launched.
"""

from __future__ import annotations

import logging

from lti_tool.models import LtiContext, LtiMembership
from pylti1p3.exception import LtiException
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException

from lockviz.lms import bounded
from lockviz.models import CourseRoom, LmsLearner, Room

log = logging.getLogger(__name__)
MAX_MEMBERS = 500
MAX_PAGES = 20  # of the class list: a platform that names page after page is not followed


def refresh(context: LtiContext) -> bool:
    """Keep the course's members as its platform lists them now; False if it could not."""
    if not context.memberships_url:
        return False
    registration = context.deployment.registration.to_registration()
    service = NamesRolesProvisioningService(
        ServiceConnector(registration, bounded.session()),
        {"context_memberships_url": context.memberships_url},
    )
    members: list[dict[str, object]] = []
    url: str | None = context.memberships_url
    try:  # page by page, within bounds (lockviz.lms.bounded reads each page)
        for _ in range(MAX_PAGES):
            page, url = service.get_members_page(url)
            members += [m for m in map(_member, page if isinstance(page, list) else []) if m]
            if not url or len(members) >= MAX_MEMBERS:
                break
    except (LtiException, RequestException, ValueError) as exc:
        log.warning("the class list of %s was not read: %s", context, exc)
        return False
    context.update_memberships(members[:MAX_MEMBERS])
    return True


def _member(found: object) -> dict[str, object] | None:
    """A class list's member as NRPS defines it, or None for one that is not (no ``user_id``):
    its id, roles and status, and its names as text (a member without a status is active)."""
    if not isinstance(found, dict) or not isinstance(found.get("user_id"), str):
        return None
    roles = found.get("roles")
    member: dict[str, object] = {
        "user_id": found["user_id"][:255],
        "roles": [r[:200] for r in roles if isinstance(r, str)] if isinstance(roles, list) else [],
        "status": found.get("status") if isinstance(found.get("status"), str) else "Active",
    }
    for name in ("given_name", "family_name", "name", "email", "picture"):
        if isinstance(found.get(name), str):
            member[name] = found[name][:255]
    return member


def of(room: Room) -> list[tuple[str, str | None]]:
    """(name, owner or None) of each learner of the course ``room`` was made for."""
    link = CourseRoom.objects.filter(room=room).select_related("context").first()
    if link is None:
        return []
    found = LtiMembership.objects.filter(
        context=link.context, is_learner=True, is_active=True
    ).select_related("user")
    owners = dict(
        LmsLearner.objects.filter(lti_user__in=[m.user for m in found]).values_list(
            "lti_user_id", "owner"
        )
    )
    return [
        (m.user.name or m.user.given_name or m.user.sub[:12], owners.get(m.user_id))
        for m in found[:MAX_MEMBERS]
    ]

"""A course's learners, as its LMS lists them (LTI Names and Role Provisioning Services).

At an instructor's launch, :func:`refresh` asks the platform's context membership service for
the course's members (pylti1p3's service, with an access token as for grades) and keeps them
in django-lti's memberships; :func:`of` gives a room's class view its course's learners, each
with the owner name their launches gave them here, or None for one who never launched.
"""

from __future__ import annotations

import logging

from lti_tool.models import LtiContext, LtiMembership
from pylti1p3.exception import LtiException
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException

from lockviz.models import CourseRoom, LmsLearner, Room

log = logging.getLogger(__name__)
MAX_MEMBERS = 500


def refresh(context: LtiContext) -> bool:
    """Keep the course's members as its platform lists them now; False if it could not."""
    if not context.memberships_url:
        return False
    registration = context.deployment.registration.to_registration()
    service = NamesRolesProvisioningService(
        ServiceConnector(registration),
        {"context_memberships_url": context.memberships_url},
    )
    try:
        members = service.get_members()[:MAX_MEMBERS]
    except (LtiException, RequestException, ValueError) as exc:
        log.warning("the class list of %s was not read: %s", context, exc)
        return False
    for member in members:  # NRPS: a member without a status is active
        member.setdefault("status", "Active")
        member.setdefault("roles", [])
    context.update_memberships(members)
    return True


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

"""LTI 1.3: the OIDC login, the launch, deep linking's picker, and the tool's keys.

``/lti/login/`` starts the OIDC flow a platform begins (django-lti's view: pylti1p3 keeps the
state in a cookie and the nonce for the launch); ``POST /lti/launch/`` is the launch: validated
by pylti1p3 (state, nonce, issuer, audience, deployment, the id token's signature through the
platform's JWKS), then made lockviz's (lockviz.lms.launch) and sent on where it leads; a deep
linking launch shows an instructor the picker (``lms_pick.html``), whose ``POST
/lti/deep-link/`` answers the platform with the signed content item. ``/lti/jwks/`` is the
tool's public keys. A launch that does not validate is refused (403) with pylti1p3's reason,
never a traceback.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from lti_tool.constants import SESSION_KEY
from lti_tool.models import LtiLaunch
from lti_tool.utils import get_launch_from_request
from lti_tool.views import LtiLaunchBaseView, OIDCLoginInitView, jwks
from pylti1p3.exception import LtiException

from lockviz import accounts
from lockviz.edge import csp
from lockviz.errors import Invalid, LaunchRefused
from lockviz.lms import bounded, deeplink, roster
from lockviz.lms import launch as launches
from lockviz.views import HtmxHttpRequest, absolute
from lockviz.views.refusals import respond

__all__ = ["Launch", "Login", "choose", "jwks"]


class Launch(LtiLaunchBaseView):  # type: ignore[misc]  # django-lti ships no types
    """``POST /lti/launch/``: a resource link or a deep linking request."""

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        try:
            bounded.check_token(request)  # its JSON within bounds, before pylti1p3 reads it
            return super().post(request, *args, **kwargs)  # type: ignore[no-any-return]
        except LtiException as exc:
            return respond(request, LaunchRefused(f"This launch cannot be trusted: {exc}."))  # type: ignore[arg-type]
        except LaunchRefused as refused:
            return respond(request, refused)  # type: ignore[arg-type]

    def handle_resource_launch(self, request: HttpRequest, lti_launch: LtiLaunch) -> HttpResponse:
        arrival = launches.arrive(request, lti_launch)
        if arrival.teaches:
            roster.refresh(lti_launch.context)
        return redirect(arrival.url)

    def handle_deep_linking_launch(
        self, request: HttpRequest, lti_launch: LtiLaunch
    ) -> HttpResponse:
        if not launches.roles(lti_launch) & launches.INSTRUCTOR:
            raise LaunchRefused("Only an instructor of the course places lockviz in it.")
        arrival = launches.arrive(request, lti_launch)
        owner = accounts.owner(request)
        context = {"choices": deeplink.choices(owner), "room": arrival.room}
        return render(request, "lockviz/lms_pick.html", context)


@require_POST
def choose(request: HtmxHttpRequest) -> HttpResponse:
    """The instructor's pick, answered to the platform as a signed deep linking response."""
    launch_id = request.session.get(SESSION_KEY)
    try:
        lti_launch = get_launch_from_request(request, str(launch_id or ""))
        if not lti_launch.is_deep_link_launch:
            raise LtiException("this session holds no deep linking request")
    except LtiException as exc:
        return respond(request, LaunchRefused(f"Open lockviz from the LMS again: {exc}."))
    if not launches.roles(lti_launch) & launches.INSTRUCTOR:
        return respond(request, LaunchRefused("Only an instructor of the course places lockviz."))
    found = deeplink.find(accounts.owner(request), str(request.POST.get("item") or "")[:60])
    if found is None:
        return respond(request, Invalid("item: choose a lesson, an exercise or a plan to place"))
    link = deeplink.resource(found, absolute(request, reverse("lti_launch")))
    answer: HttpResponse = lti_launch.deep_link_response([link])  # pylti1p3's signed form
    return csp.allow_inline(answer)  # its script submits it to the LMS (lockviz.edge.csp)


class Login(OIDCLoginInitView):  # type: ignore[misc]  # django-lti ships no types
    """``/lti/login/``: django-lti's, with the page it writes (a cookie check that goes on to
    the platform) allowed its own inline script (lockviz.edge.csp)."""

    def get_oidc_response(self, *args: object) -> HttpResponse:
        return csp.allow_inline(super().get_oidc_response(*args))

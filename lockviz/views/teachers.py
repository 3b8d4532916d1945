"""Teacher accounts: log in, log out, sign up (where the deployment allows it).

Learners never need an account: nothing else in the app asks for one, except keeping things in
a library (lockviz.views.library). Failed logins are counted so that guessing gets nowhere and
nobody can lock a teacher out (lockviz.accounts.logins: per address and name, per known device,
slowed per name). The admin site's login is this page too (lockviz.urls), under the same count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.forms import AuthenticationForm, BaseUserCreationForm, UsernameField
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from lockviz.accounts import logins
from lockviz.errors import TooMany
from lockviz.shares import address_of, rates
from lockviz.views import HtmxHttpRequest

if TYPE_CHECKING:  # generic in django-stubs only
    UserFormBase = BaseUserCreationForm[User]
else:
    UserFormBase = BaseUserCreationForm


class SignUpForm(UserFormBase):
    """A new teacher account: a name and a password twice (Django's checks of both)."""

    class Meta:
        model = User
        fields = ("username",)
        field_classes = {"username": UsernameField}


def _next(request: HtmxHttpRequest) -> str:
    """Where to go after logging in: ``next`` if it is on this site, else the library."""
    wanted = str(request.POST.get("next") or request.GET.get("next") or "")[:2000]
    safe = url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return wanted if wanted and safe else reverse(settings.LOGIN_REDIRECT_URL)


def _too_many(request: HtmxHttpRequest, form: AuthenticationForm, refused: TooMany) -> HttpResponse:
    problem = f"Too many failed logins. {refused.message}"
    context = {"form": form, "next": _next(request), "problem": problem}
    context["signup_open"] = settings.LOCKVIZ_SIGNUP
    response = render(request, "lockviz/login.html", context, status=429)
    response["Retry-After"] = str(refused.retry_after_s)
    return response


@require_http_methods(["GET", "POST"])
def login_page(request: HtmxHttpRequest) -> HttpResponse:
    form = AuthenticationForm(request, data=request.POST if request.method == "POST" else None)
    context: dict[str, object] = {
        "form": form,
        "next": _next(request),
        "signup_open": settings.LOCKVIZ_SIGNUP,
    }
    if request.method == "GET":
        return render(request, "lockviz/login.html", context)
    name = str(request.POST.get("username", ""))[: 4 * logins.MAX_NAME]
    found = User.objects.filter(username=User.normalize_username(name)).only("pk").first()
    user_id = found.pk if found is not None else None
    try:
        logins.check(request, name, user_id)
    except TooMany as refused:
        return _too_many(request, form, refused)
    if form.is_valid():
        user = form.get_user()
        login(request, user)  # what this browser owned becomes the account's
        response = redirect(_next(request))
        logins.remember(request, response, user)
        return response
    try:
        logins.failed(request, name, user_id)
    except TooMany as refused:
        return _too_many(request, form, refused)
    return render(request, "lockviz/login.html", context, status=400)


@require_http_methods(["GET", "POST"])
def signup(request: HtmxHttpRequest) -> HttpResponse:
    if not settings.LOCKVIZ_SIGNUP:
        return render(request, "lockviz/signup.html", {"closed": True}, status=403)
    form = SignUpForm(request.POST if request.method == "POST" else None)
    if request.method == "GET":
        return render(request, "lockviz/signup.html", {"form": form})
    if not form.is_valid():
        return render(request, "lockviz/signup.html", {"form": form}, status=400)
    try:
        rates.take(rates.SIGNUPS, address_of(request))
    except TooMany as refused:
        context = {"form": form, "problem": refused.message}
        response = render(request, "lockviz/signup.html", context, status=429)
        response["Retry-After"] = str(refused.retry_after_s)
        return response
    user = form.save()
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return redirect("library")

"""Thin views, one module per area of the app: runs (start, watch, verdict, export), replays
and exports, imports, lessons, free play, comparisons. Each translates HTTP to calls on the lab
and the models, and back; an htmx request gets the partial it swaps in (django-htmx sets
``request.htmx``)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from lockviz import accounts
from lockviz.models import Run
from lockviz.teaching import reveals


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware hands it to the views."""

    htmx: HtmxDetails


def browser(request: HttpRequest) -> str:
    """This browser, as the runs and rooms it starts remember it: an id kept in its session, or
    the teacher logged in on it, the same on every device (lockviz.accounts).

    The session cookie is signed with the installation's secret key (lockviz.conf.secret) and names
    a row in the database: a browser cannot claim another's runs by editing it.
    """
    return accounts.owner(request)


def absolute(request: HttpRequest, path: str) -> str:
    """``path`` as a full address a class can type or scan: on ``LOCKVIZ_PUBLIC_URL`` when it is
    set, else on the address this request came to (port and scheme included, as the trusted
    proxy said them: lockviz.edge.proxies)."""
    if settings.PUBLIC_URL:
        return settings.PUBLIC_URL + path
    return request.build_absolute_uri(path)


def owns(request: HttpRequest, run: Run) -> bool:
    """Whether this browser may change ``run``: it (or the teacher logged in on it) started it."""
    return bool(run.owner) and run.owner == accounts.viewer(request)


def withheld(request: HttpRequest, run: Run) -> frozenset[int]:
    """The checkpoints of ``run`` whose answers this browser may not read yet (see
    lockviz.teaching.reveals); never makes a session."""
    return reveals.hidden(run, accounts.viewer(request))


def ask_first(request: HttpRequest, run: Run, hidden: frozenset[int]) -> bool:
    """Whether a page showing how ``run`` ends asks first: to a student of the class its presenter
    teaches with it, before the reveal, unless they said they want the outcome."""
    if not hidden or request.GET.get(reveals.OUTCOME) == "shown":
        return False
    return reveals.in_class(run, accounts.viewer(request))

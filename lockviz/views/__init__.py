"""Thin views, one module per area of the app: runs (start, watch, verdict, export), replays
and exports, imports, lessons, free play, comparisons. Each translates HTTP to calls on the lab
and the models, and back; an htmx request gets the partial it swaps in (django-htmx sets
``request.htmx``)."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware hands it to the views."""

    htmx: HtmxDetails

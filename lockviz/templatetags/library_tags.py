"""``{% load library_tags %}``: ``{% save_box run %}``, the Save box of a run's pages.

Anonymous: a link to log in (learners need no account; saving is a teacher's). A teacher: Save
with a visibility, or, once saved, the visibility to change and the permalink. Every page that
shows a run (the run page, its replay, an embed's host page) includes it the same way.
"""

from __future__ import annotations

from django import template
from django.template import Context

from lockviz.models import Run
from lockviz.views import library

register = template.Library()


@register.inclusion_tag("lockviz/_save.html", takes_context=True)
def save_box(context: Context, run: Run) -> dict[str, object]:
    request = context["request"]
    return {**library.save_box(request, run), "csrf_token": context.get("csrf_token")}

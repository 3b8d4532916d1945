"""docs/events.md, written from :mod:`lockviz.lab.events` (``manage.py events --markdown``)."""

from __future__ import annotations


def markdown() -> str:
    return ""

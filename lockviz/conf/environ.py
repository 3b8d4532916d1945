"""Numbers the settings read from the environment, each by its variable's name once."""

from __future__ import annotations

import os
from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured

N = TypeVar("N", int, float)


def number(name: str, default: N) -> N:
    """``$name`` as a number of ``default``'s type (``default`` when unset or empty);
    ImproperlyConfigured names the variable and its value when it is not one."""
    given = os.environ.get(name, "").strip()
    if not given:
        return default
    try:
        return type(default)(given)
    except ValueError:
        kind = "a whole number" if isinstance(default, int) else "a number"
        raise ImproperlyConfigured(f"{name}={given!r} is not {kind}") from None

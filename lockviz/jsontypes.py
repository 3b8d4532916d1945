"""JSON as Python holds it once decoded: what crosses a boundary as JSON text (an event, a
scenario, a channel message, a relayed click) is typed as this until it is parsed into a model.

:data:`JsonValue` is pydantic's (a recursive union of ``str``, ``int``, ``float``, ``bool``,
``None``, lists and string-keyed dicts of them), so a value typed so can be validated into a
model as it is; mypy makes a reader narrow it before use, as it should for data from outside.
"""

from __future__ import annotations

from pydantic import JsonValue

JsonObject = dict[str, JsonValue]

__all__ = ["JsonObject", "JsonValue"]

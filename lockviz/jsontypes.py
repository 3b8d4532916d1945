"""JSON as Python holds it once decoded: what crosses a boundary as JSON text (an event, a
scenario, a channel message, a relayed click) is typed as this until it is parsed into a model.

:data:`JsonValue` is pydantic's (a recursive union of ``str``, ``int``, ``float``, ``bool``,
``None``, lists and string-keyed dicts of them), so a value typed so can be validated into a
model as it is; mypy makes a reader narrow it before use, as it should for data from outside.
:data:`Number` is a JSON number that keeps its type (an int stays an int); :class:`StrictDict`
the base of a JSON object with named keys, checked as strictly as the events (the verdict's
parts in :mod:`lockviz.lab.verdicts`, a stamped write in :mod:`lockviz.lab.events`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, JsonValue, WithJsonSchema
from typing_extensions import TypedDict  # pydantic takes typing's only from Python 3.12

JsonObject = dict[str, JsonValue]

# A number as JSON has it: an int stays an int, a float a float (the words print them as sent).
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]


class StrictDict(TypedDict):
    """A TypedDict pydantic checks as strictly as the events themselves."""

    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[misc]


__all__ = ["JsonObject", "JsonValue", "Number", "StrictDict"]

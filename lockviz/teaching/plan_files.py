"""A lecture plan as a file: ``export.json`` (:func:`export`) and the import that reads it
back (:func:`imported`), bounded and checked item by item as the editor is
(lockviz.teaching.plans.read): a refusal names its size, its JSON, its format or each item."""

from __future__ import annotations

from lockviz import jsontext
from lockviz.errors import JsonRefused, PlanRefused
from lockviz.jsontypes import JsonObject
from lockviz.models import Plan
from lockviz.teaching.plans import notes_readable, read, save

FORMAT = 1  # an exported plan's "lockviz_plan"
MAX_FILE_BYTES = 512 * 1024  # an imported plan: 30 items of the largest kind, and room to spare


def export(plan: Plan, browser: str | None = None) -> JsonObject:
    """The plan as ``export.json`` has it, and as :func:`imported` reads it back; for
    ``browser``, without the notes it may not read (None: its owner's, all of it)."""
    if browser is None or notes_readable(plan, browser):
        return {"lockviz_plan": FORMAT, "title": plan.title, "items": plan.items}
    items = [{**i, "note": ""} if isinstance(i, dict) else i for i in plan.items]
    return {"lockviz_plan": FORMAT, "title": plan.title, "items": items}


def imported(data: bytes, browser: str) -> Plan:
    """A plan made from an exported file, owned by ``browser``; :class:`PlanRefused` naming
    what is wrong with it (its size, its JSON, its format, each item)."""
    if len(data) > MAX_FILE_BYTES:
        raise PlanRefused(f"file: {len(data) // 1024} KB; a plan's file is at most 512 KB")
    try:
        decoded = jsontext.loads(data, max_bytes=MAX_FILE_BYTES, where="file")
    except JsonRefused as exc:
        raise PlanRefused(f"{exc.message} (a plan's file is its export.json)") from None
    return load(decoded, browser)


def load(decoded: object, browser: str) -> Plan:
    """A plan made from an export already read as JSON (a file's, or one in a library archive:
    lockviz.library.archive), owned by ``browser``; :class:`PlanRefused` naming what is wrong."""
    if not isinstance(decoded, dict) or decoded.get("lockviz_plan") != FORMAT:
        raise PlanRefused(
            f'lockviz_plan: not a lecture plan\'s export (it says "lockviz_plan": {FORMAT})'
        )
    unknown = sorted(set(decoded) - {"lockviz_plan", "title", "items"})
    if unknown:
        raise PlanRefused(f"{str(unknown[0])[:40]}: unknown field")
    title, items = read(decoded, browser)
    return save(Plan(owner=browser), title, items)

"""``{% fault_controls run scenario layout %}``: the buttons that do things to a live run.

The same controls serve the run page, as menus that open from the diagram's lifeline headers
(``layout="menus"``), and the free-play page, as panels always on show (``layout="panels"``).
"""

from __future__ import annotations

from django import template

from lockviz.catalogue import server_kind
from lockviz.models import Run
from lockviz.scenarios.schema import Scenario

register = template.Library()


@register.inclusion_tag("lockviz/_play_controls.html", takes_context=True)
def fault_controls(
    context: template.Context, run: Run, scenario: Scenario | None, layout: str = "panels"
) -> dict[str, object]:
    names = scenario.servers if scenario else []
    storages = scenario.storages if scenario else []
    chosen = scenario.lock_service.variant(scenario.variant) if scenario else None
    return {
        "csrf_token": context.get("csrf_token"),
        "run": run,
        "layout": layout,
        "clients": list(scenario.clients) if scenario else [],
        "lock": scenario is None or scenario.lock_service.lock,  # "backend": "none" has no lock
        "election": chosen is not None and chosen.election,  # its clients may ask who leads
        "nodes": [
            {
                "name": name,
                "role": "storage" if name in storages else "lock node",
                "clock": kind.clock_jumps,
            }
            for name in names
            if (kind := server_kind(name)) is not None
        ],
    }

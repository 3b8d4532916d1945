"""Side by side: variants of one built-in scenario, run live at once and shown in parallel.

A variant is the same script with another kind of storage (plain, fenced, sequencer,
compare-and-set) and/or another backend. Each is validated by the scenario schema on its own, so
a variant the lab cannot run (Redlock with fencing, a node step naming a node the other backend
does not have) is refused with the schema's own message, next to that variant. A variant that is
exactly another built-in scenario (the storage module's four kinds of one story) runs as that
scenario, with its own prediction and words. ``?runs=id1,id2`` names the runs of a comparison.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms

from lockviz.catalogue import BACKENDS, STORAGE_KINDS
from lockviz.errors import ScenarioError
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, parse

MAX_LANES = 4
ROWS = range(1, MAX_LANES + 1)
SKIP, SAME = "skip", "same"
RUN_ID = re.compile(r"^[A-Za-z0-9_-]{1,16}$")


def variant(base: Scenario, backend: str, storage: str) -> Scenario:
    """``base`` on ``backend`` with ``storage``; :class:`ScenarioError` if that cannot run."""
    return variant_slug(base, backend, storage)[1]


def variant_slug(base: Scenario, backend: str, storage: str) -> tuple[str, Scenario]:
    """The variant, and the slug of the built-in scenario it is ("" when it is none)."""
    data = base.to_json()
    if backend != base.backend:
        data["backend"] = backend
        for option in ("variant", *BACKENDS[base.backend].options):
            data.pop(option, None)
    data.pop("fencing", None)
    data["storage"] = storage
    if (backend, storage) != (base.backend, base.storage_kind):
        data.pop("expect", None)  # the author's prediction was for the scenario as written
    built = parse(data)
    for slug, scenario in builtin().items():
        if scenario.script() == built.script():
            return slug, scenario
    return "", built


def describe(scenario: Scenario) -> str:
    """A lane's label: "Redis · fenced (tokens)", "Redlock (5 nodes) · plain"."""
    name = scenario.lock_service.describe(scenario.variant, scenario.node_count)
    return f"{name} · {STORAGE_KINDS[scenario.storage_kind].label}"


def read_run_ids(text: str) -> tuple[list[str], list[str]]:
    """The run ids of ``?runs=`` (at most 4, each once) and what was wrong with the rest."""
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        return [], ["No runs given: ?runs= takes 2 to 4 run ids separated by commas."]
    ids: list[str] = []
    problems: list[str] = []
    for value in values:
        if not RUN_ID.match(value):
            shown = value if len(value) <= 40 else value[:40] + "…"
            problems.append(f"{shown!r} is not a run id (run ids are letters and digits).")
        elif value not in ids:
            ids.append(value)
    if len(ids) > MAX_LANES:
        problems.append(
            f"At most {MAX_LANES} runs fit side by side; you gave {len(ids)}, "
            f"so only the first {MAX_LANES} are shown."
        )
        ids = ids[:MAX_LANES]
    return ids, problems


class CompareForm(forms.Form):
    """A built-in scenario and up to four variants of it; rows set to "not used" are skipped.

    ``variants`` are the scenarios to run and ``slugs`` the built-in each one is ("" if none).
    """

    scenario = forms.ChoiceField(label="Scenario")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        scenario = self.fields["scenario"]
        assert isinstance(scenario, forms.ChoiceField)
        scenario.choices = [(slug, s.title) for slug, s in builtin().items()]
        backends = [
            (SKIP, "— not used —"),
            (SAME, "as written"),
            *((b.name, b.label) for b in BACKENDS.values()),
        ]
        for n in ROWS:
            self.fields[f"backend_{n}"] = forms.ChoiceField(
                label=f"Variant {n}: lock service", choices=backends, initial=SKIP
            )
            self.fields[f"storage_{n}"] = forms.ChoiceField(
                label=f"Variant {n}: storage",
                choices=[(k.name, k.label) for k in STORAGE_KINDS.values()],
                initial="fenced",
            )
        self.row_errors: dict[int, list[str]] = {}
        self.variants: list[Scenario] = []
        self.slugs: list[str] = []

    def rows(self) -> list[dict[str, object]]:
        """The variant rows for the template: number, bound fields, errors."""
        return [
            {
                "n": n,
                "backend": self[f"backend_{n}"],
                "storage": self[f"storage_{n}"],
                "errors": self.row_errors.get(n, []),
            }
            for n in ROWS
        ]

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        slug = data.get("scenario")
        if not slug:
            return data
        base = builtin()[slug]
        chosen: list[tuple[int, str, str]] = []
        for n in ROWS:
            backend = data.get(f"backend_{n}") or SKIP
            if backend == SKIP:
                continue
            backend = base.backend if backend == SAME else backend
            storage = data.get(f"storage_{n}") or "fenced"
            same = next((m for m, b, k in chosen if (b, k) == (backend, storage)), None)
            if same is not None:
                self.row_errors[n] = [f"the same as variant {same}: pick something else"]
                continue
            chosen.append((n, backend, storage))
            try:
                twin, built = variant_slug(base, backend, storage)
            except ScenarioError as exc:
                self.row_errors[n] = exc.problems
                continue
            self.variants.append(built)
            self.slugs.append(twin or slug)
        if len(chosen) < 2:
            raise forms.ValidationError("Pick at least two variants to compare.")
        if self.row_errors:
            raise forms.ValidationError("Some variants cannot run; each says why below.")
        data["slug"] = slug
        return data

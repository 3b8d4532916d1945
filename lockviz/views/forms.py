"""The run form: which scenario, and the knobs a learner may turn before running it."""

from __future__ import annotations

from django import forms

from lockviz.catalogue import STORAGE_KINDS
from lockviz.errors import ScenarioError
from lockviz.models import Run
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, parse


class RunForm(forms.Form):
    scenario = forms.CharField(required=False)
    from_run = forms.CharField(required=False)
    storage = forms.ChoiceField(
        required=False, choices=[(k.name, k.label) for k in STORAGE_KINDS.values()]
    )
    fencing = forms.BooleanField(required=False)  # the older form: a checkbox for fenced/plain
    ttl_ms = forms.IntegerField(
        required=False, min_value=100, max_value=60_000, label="Lease (TTL, ms)"
    )

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        slug, source = data.get("scenario") or "", data.get("from_run") or ""
        if source:
            run = Run.objects.filter(pk=source).first()
            if run is None:
                raise forms.ValidationError(f"There is no run {source!r} to run again.")
            base, slug = dict(run.scenario), run.slug
            data["source"] = run
        elif slug in builtin():
            base = builtin()[slug].to_json()
        else:
            raise forms.ValidationError(f"Unknown scenario {slug!r}: pick one from the list.")
        data["slug"] = slug
        data["built"] = self._apply(base, data)
        return data

    def _apply(self, base: dict[str, object], data: dict[str, object]) -> Scenario:
        changed = dict(base)
        changed.pop("fencing", None)  # the storage says it all; fencing follows from it
        changed["storage"] = data.get("storage") or ("fenced" if data.get("fencing") else "plain")
        if data.get("ttl_ms"):
            changed["ttl_ms"] = data["ttl_ms"]
        was = base.get("storage") or ("fenced" if base.get("fencing", True) else "plain")
        if (changed["storage"], changed["ttl_ms"]) != (was, base["ttl_ms"]):
            # The prediction was made for the scenario as written, not for this variation.
            changed.pop("expect", None)
        try:
            return parse(changed)
        except ScenarioError as exc:
            raise forms.ValidationError(exc.problems) from None

"""The web side of a run: admit it, create it, launch it, and carry a click or a Finish to it.

:func:`launch_many` admits and creates under admission's one lock (:mod:`lockviz.runs.admission`)
and then either starts the runs in this process's lab (:func:`lockviz.runs.recorder.start`) or,
with lab hosts (``LOCKVIZ_LAB_HOSTS=remote``), publishes them for a host to take
(:mod:`lockviz.runs.labhosts`). A click (:func:`inject`) or a Finish (:func:`finish`) is done
here when this process plays the run, and relayed to the process that does otherwise
(:mod:`lockviz.runs.relay`); a run nobody plays any more is settled, never waited for.

What plays and records a run (the lab side: start, execute, record) is
:mod:`lockviz.runs.recorder`; this module calls it and it never calls back.
"""

from __future__ import annotations

from typing import Literal, TypedDict, Unpack

from django.utils import timezone

from lockviz import accounts
from lockviz.errors import NotLive, Refusal, ScenarioError
from lockviz.jsontypes import JsonObject
from lockviz.models import Run
from lockviz.runs import admission, labhosts, priority, recorder, recovery, relay
from lockviz.scenarios.schema import Scenario, Step
from lockviz.shares.runs import Charge


class Fork(TypedDict, total=False):
    """Where a What if…? run parts from its original (:mod:`lockviz.teaching.forks`)."""

    parent: Run
    diverged_seq: int
    diverged_ms: float


def create_run(
    scenario: Scenario,
    slug: str = "",
    owner: str = "",
    charge: Charge | None = None,
    open_ended: bool = False,
    **fork: Unpack[Fork],
) -> Run:
    """A queued run, taking ``charge``'s share; ``fork`` (``parent``, ``diverged_seq``,
    ``diverged_ms``) for a What if…?"""
    return Run.objects.create(
        slug=slug,
        title=scenario.title,
        scenario=scenario.to_json(),
        owner=owner,
        user_id=accounts.account_id(owner),  # a teacher's run: theirs on every device
        address=charge.address if charge else "",
        allowance=charge.allowance if charge else "",
        open_ended=open_ended,
        host="" if labhosts.remote() else recovery.process_id(),  # a lab host's, once taken
        alive_at=timezone.now(),
        parent=fork.get("parent"),
        diverged_seq=fork.get("diverged_seq"),
        diverged_ms=fork.get("diverged_ms"),
    )


def launch(
    scenario: Scenario,
    slug: str = "",
    owner: str = "",
    open_ended: bool = False,
    address: str = "",
    **fork: Unpack[Fork],
) -> Run:
    """Admit, create and start one run of ``owner`` at ``address`` (:class:`Busy` or
    :class:`TooMany` when it may not start now)."""
    return launch_many([scenario], slug, owner, open_ended, address, **fork)[0]


def launch_many(
    scenarios: list[Scenario],
    slug: str | list[str] = "",
    owner: str = "",
    open_ended: bool = False,
    address: str = "",
    **fork: Unpack[Fork],
) -> list[Run]:
    """Admit, create and start runs as one step (:class:`Busy` or :class:`TooMany` when they may not
    start now);
    ``slug`` is theirs, or one per scenario.

    Requests run in threads of their own, so two clicks at once would both pass a count taken
    before either had created its run: admission and creation hold one lock. With lab hosts
    (``LOCKVIZ_LAB_HOSTS=remote``) the runs are recorded queued and published for them.
    """
    slugs = slug if isinstance(slug, list) else [slug] * len(scenarios)
    first = priority.presents(owner)
    with admission.lock:
        charge = admission.admit(owner, len(scenarios), address, open_ended, first)
        runs = [
            create_run(scenario, each, owner, charge, open_ended, **fork)
            for scenario, each in zip(scenarios, slugs, strict=True)
        ]
        if labhosts.remote():
            labhosts.publish([run.pk for run in runs], first)
            return runs
        for run, scenario in zip(runs, scenarios, strict=True):
            recorder.start(run, scenario, open_ended, first=first)
    return runs


def inject(run_id: str, data: JsonObject) -> Step:
    """Do one step now in a live run (a click), whichever app process runs it (lockviz.runs.
    relay). Raises ScenarioError naming a bad field, or NotLive."""
    if not recorder.is_live(run_id):
        answer = _relayed("inject", run_id, data)
        problems = answer.get("problems")
        if isinstance(problems, list):
            refusal: type[Refusal] = NotLive if answer.get("live") is False else ScenarioError
            raise refusal([str(p) for p in problems])
        return Step.model_validate(answer["step"])
    return recorder.inject_here(run_id, data)


def finish(
    run_id: str, why: str = "Finish was pressed"
) -> Literal["finishing", "cancelled"] | None:
    """End a live run now and judge it (within about a second), whichever app process runs it:
    ``"finishing"``; a run that has not started yet is cancelled instead (``"cancelled"``);
    None when it is not live."""
    if recorder.is_live(run_id):
        return "finishing" if recorder.finish_here(run_id, why) else None
    if recovery.cancel_queued(run_id, f"cancelled before it started ({why})"):
        return "cancelled"
    return "finishing" if "done" in _relayed("finish", run_id, {"why": why}) else None


def _relayed(op: str, run_id: str, data: JsonObject) -> JsonObject:
    """``op`` done by the app process that runs ``run_id``: its answer, or ``{"problems":
    [NOT_LIVE]}`` when no live process runs it (a dead one's run is marked interrupted)."""
    run = Run.objects.filter(pk=run_id, status__in=Run.LIVE).first()
    if run is None or run.host in ("", recovery.process_id()) or not relay.enabled():
        return recorder.NOT_LIVE_ANSWER
    if not recovery.running(run):
        recovery.settle(run)
        return recorder.NOT_LIVE_ANSWER
    answer = relay.ask(run.host, op, run_id, run.owner, data)  # its owner's, checked by the view
    return answer if answer is not None else recorder.NOT_LIVE_ANSWER

"""A click's form fields become a step; the free-play scenario; messages in the learner's terms."""

from __future__ import annotations

import pytest
from django.http import QueryDict

from lockviz.errors import ScenarioError
from lockviz.lab import spares
from lockviz.teaching.play import (
    available_backends,
    replay_problems,
    session_scenario,
    step_from_form,
)


def form(text: str) -> QueryDict:
    return QueryDict(text)


def test_seconds_become_milliseconds_and_nodes_a_list() -> None:
    assert step_from_form(form("do=pause&client=alice&s=2.5")) == {
        "do": "pause",
        "client": "alice",
        "ms": 2500,
    }
    step = step_from_form(form("do=partition&client=bob&nodes=redis-1&nodes=redis-2&mode=reset"))
    assert step == {
        "do": "partition",
        "client": "bob",
        "nodes": ["redis-1", "redis-2"],
        "mode": "reset",
    }
    assert step_from_form({"do": "heal", "client": "bob", "nodes": "redis-1, storage"})[
        "nodes"
    ] == [
        "redis-1",
        "storage",
    ]


def test_a_negative_clock_jump_may_use_a_typographic_minus() -> None:
    assert step_from_form(form("do=clock_jump&node=redis-1&s=%E2%88%925"))["ms"] == -5000


def test_fields_the_verb_does_not_use_are_dropped() -> None:
    # One links form holds the inputs of cut, heal and delay: heal must not receive ms or mode.
    step = step_from_form(form("do=heal&client=alice&nodes=redis-1&mode=blackhole&ms=300"))
    assert step == {"do": "heal", "client": "alice", "nodes": ["redis-1"]}
    assert step_from_form(form("do=delay&client=alice&nodes=storage&mode=reset&ms=300")) == {
        "do": "delay",
        "client": "alice",
        "nodes": ["storage"],
        "ms": 300,
    }


def test_every_field_that_is_not_a_number_is_named() -> None:
    with pytest.raises(ScenarioError) as bad:
        step_from_form(form("do=pause&client=alice&ms=soon&rate=fast&s=1e9"))
    assert bad.value.problems == [
        "ms: 'soon' is not a whole number of milliseconds",
        "s: '1e9' is not a number of seconds (at most 3600)",
        "rate: 'fast' is not a number (0.25 runs at a quarter speed)",
    ]
    with pytest.raises(ScenarioError) as missing:
        step_from_form(form("client=alice"))
    assert missing.value.problems[0].startswith("do: ")


def test_an_unknown_verb_keeps_its_fields_for_the_schema_to_name() -> None:
    assert step_from_form(form("do=explode&client=alice&ms=5")) == {
        "do": "explode",
        "client": "alice",
        "ms": 5,
    }


def test_redlock_sessions_cannot_fence_and_take_the_first_names() -> None:
    s = session_scenario("redlock", 3, fencing=True, ttl_ms=2000)
    assert s.fencing is False and s.clients == ["alice", "bob", "carol"] and s.steps == []
    assert session_scenario("redis", 2, fencing=True, ttl_ms=800, fsync=True).persistence == "fsync"


def test_a_session_takes_any_variant_and_storage_the_catalogue_has() -> None:
    """Free play offers what the editor offers: an election, the pooling fix, every storage."""
    etcd = session_scenario("etcd", 2, fencing=True, ttl_ms=2000, variant="election")
    assert etcd.variant == "election" and etcd.storage == "fenced"
    pg = session_scenario("postgres", 2, fencing=False, ttl_ms=2000, variant="pooled_xact")
    assert pg.variant == "pooled_xact" and pg.storage == "plain"
    lww = session_scenario("none", 2, fencing=True, ttl_ms=1000, storage="lww")
    assert lww.servers == ["storage", "storage-2"]
    reads = session_scenario("redis", 2, fencing=False, ttl_ms=1000, storage="fenced_reads")
    assert reads.storage == "fenced_reads"
    with pytest.raises(ScenarioError) as wrong:
        session_scenario("redis", 2, fencing=True, ttl_ms=1000, storage="crdt")
    assert wrong.value.problems[0].startswith("storage: 'crdt' takes no lock service")


def test_the_form_reads_the_chosen_backend_s_variant_only() -> None:
    from lockviz.teaching.play import PlayForm

    posted = QueryDict(
        "backend=zookeeper&clients=2&fencing=on&ttl_ms=1500&variant_zookeeper=election"
        "&variant_etcd=election&storage=fenced_reads"
    )
    form = PlayForm(posted)
    assert form.is_valid(), form.errors
    built = form.cleaned_data["built"]
    assert (built.backend, built.variant, built.storage) == (
        "zookeeper",
        "election",
        "fenced_reads",
    )
    assert [name for name, _ in form.variants()] == [
        "redis", "redis-sentinel", "zookeeper", "postgres", "etcd"
    ]  # fmt: skip


def test_a_session_too_long_to_replay_says_so_and_names_the_step() -> None:
    problems = ["steps[7].at_ms: Input should be less than or equal to 120000"]
    said = replay_problems(problems)
    assert said[0].startswith("A scenario may last at most 120 s") and said[1] == problems[0]
    assert replay_problems(["steps: a scenario needs at least one step"]) == [
        "Nothing to run again: this session has no clicks yet."
    ]


def test_asking_what_free_play_can_run_starts_no_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    """A web process drawing the free-play form started the process's pool of warm spares
    (its lab) to ask, and kept servers it never used: a lab host runs the sessions."""
    monkeypatch.setenv("LOCKVIZ_SPARES", "1")
    monkeypatch.setattr(spares, "_pool", None)
    assert all(b["available"] for b in available_backends() if b["name"] == "redis")
    assert spares._pool is None

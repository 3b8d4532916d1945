"""The narrator: one wording of events, clicks and verdicts for every page, export and terminal.

Past ~300 lines for now: the sayers' cases share one recorded-run fixture; issue 33 splits the
narrator's tests as it splits the typed sayers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lockviz.narrator import (
    Narrator,
    checkpoint,
    click,
    damage,
    expectation,
    facts,
    headline,
    narrate,
    plain_error,
    render,
    setup,
    story,
)

RUNS = Path(__file__).parents[2] / "browser" / "data" / "runs"


def told(slug: str) -> list[dict[str, Any]]:
    """A run recorded on the live lab (tests/browser/data/runs), with the narrator's words."""
    run = json.loads((RUNS / f"{slug}.json").read_text())
    return narrate(run["events"], run["scenario"]["backend"])


def labels(events: list[dict[str, Any]], kind: str) -> list[str]:
    return [e["said"]["label"] for e in events if e["kind"] == kind]


def test_headlines_say_held_saved_or_corrupted() -> None:
    assert headline({"mutual_exclusion": "held", "liveness": "ok"}) == (
        "✔ Mutual exclusion held",
        "good",
    )
    saved = {"mutual_exclusion": "violated", "stale_writes_rejected": 1, "data_corrupted": False}
    assert headline(saved) == ("⚠ Mutual exclusion violated — fencing saved the data", "warn")
    # Issue 32: a held run whose old holder still wrote says what stopped it.
    stopped = {"mutual_exclusion": "held", "stale_writes_rejected": 1, "liveness": "ok"}
    assert headline(stopped) == ("✔ Mutual exclusion held — fencing stopped 1 late write", "good")
    assert headline({**stopped, "stale_writes_rejected": 2}, storage="sequencer")[0].endswith(
        "the sequencer check stopped 2 late writes"
    )
    # A compare-and-set run in which a stale write landed but no update was lost.
    cas = {"mutual_exclusion": "violated", "stale_writes_accepted": 1, "stale_writes_rejected": 1}
    assert headline({**cas, "data_corrupted": False}, storage="cas") == (
        "⚠ Mutual exclusion violated — compare-and-set saved the data",
        "warn",
    )
    corrupted = {"mutual_exclusion": "violated", "data_corrupted": True}
    assert headline(corrupted) == ("✖ Mutual exclusion violated, data corrupted", "bad")
    assert headline({"mutual_exclusion": "held", "liveness": "stuck"})[1] == "warn"
    assert headline(None, status="running") == ("… running live", "pending")
    assert headline(None, error="boom", status="failed") == ("✖ The run failed", "bad")


def test_clicks_in_words() -> None:
    assert click({"do": "pause", "client": "alice", "ms": 2000}) == (
        "alice paused for 2000 ms (SIGSTOP)"
    )
    assert click({"do": "partition", "client": "alice", "nodes": ["redis-1"]}) == (
        "alice \u21f9 redis-1 cut (blackhole)"
    )
    assert click({"do": "clock_jump", "node": "redis-1", "ms": -5000}) == (
        "redis-1's clock jumped \u22125 s"
    )
    assert click({"do": "crash", "node": "redis-2"}) == "redis-2 killed (kill -9)"
    assert click({"do": "heal", "node": "zk-3"}) == "zk-3 \u21f9 its peers healed"


def test_a_writes_reply_names_what_its_request_carried() -> None:
    narrator = Narrator("redis")
    request = {"seq": 1, "actor": "alice", "kind": "request", "to": "storage", "call": 7,
               "op": "write", "value": "A", "token": 1}  # fmt: skip
    said = narrator.said(request)
    assert said.label == "write A (token 1)" and said.text == (
        "alice → storage: write (value 'A' with token 1)"
    )
    reply = {"seq": 2, "actor": "alice", "kind": "reply", "from": "storage", "call": 7,
             "op": "write", "ok": True, "accepted": False, "token": 1,
             "reason": "1 < 2"}  # fmt: skip
    said = narrator.said(reply)
    assert said.label == "REJECTED 1 < 2" and said.mark == "REJECTED 1 < 2"
    assert said.text == "alice ← storage: write REJECTED (1 < 2)"
    accepted = {**reply, "seq": 4, "call": 8, "accepted": True}
    narrator.said({**request, "seq": 3, "call": 8})
    assert narrator.said(accepted).mark == "stored A (token 1)"


def test_the_request_says_the_backends_own_command() -> None:
    acquire = {"seq": 1, "actor": "bob", "kind": "request", "to": "redis-1", "call": 1,
               "op": "acquire", "ttl_ms": 2000}  # fmt: skip
    assert Narrator("redis").said(acquire).label == "SET NX PX 2000"
    assert Narrator("etcd").said(acquire).label == "acquire ttl 2000 ms"


def test_servers_and_clients_crash_in_their_own_words() -> None:
    assert Narrator().said({"kind": "crashed", "actor": "redis-2"}).label == "kill -9"
    assert Narrator().said({"kind": "crashed", "actor": "alice"}).label == "crashed (SIGKILL)"


def test_nothing_in_an_imported_event_can_make_it_fail() -> None:
    odd = [{"kind": "granted", "actor": "x", "token": {"a": 1}}, {"kind": "?", "seq": "x"}, {}]
    told = narrate([*odd, {"kind": "reply", "actor": None}])
    assert len(told) == 4 and all("text" in e["said"] for e in told)


def test_the_terminal_timeline_and_the_facts() -> None:
    events = [
        {"seq": 1, "t_ms": 0.0, "actor": "alice", "kind": "paused", "ms": 3500},
        {"seq": 2, "t_ms": 2010.5, "actor": "redis-1", "kind": "expired", "holder": "alice"},
    ]
    out = render(events)
    assert "FROZEN (SIGSTOP) for 3500 ms" in out and "lease of alice EXPIRED on the server" in out
    verdict = {"overlaps": [{"clients": ["alice", "bob"], "start_ms": 10.2, "end_ms": 99.9}],
               "stale_writes_accepted": 1, "stale_writes_rejected": 0, "wakeups": 3}  # fmt: skip
    assert facts(verdict)[0] == ("Two holders at once", "alice & bob from 10 to 100 ms")
    assert ("Wake-ups of waiting clients", "3") in facts(verdict)


def test_an_inconclusive_run_says_so_and_its_prediction_is_not_judged() -> None:
    verdict = {"mutual_exclusion": "violated", "stale_writes_rejected": 1,
               "inconclusive": "the machine fell behind by 2209 ms at step 2"}  # fmt: skip
    assert headline(verdict) == (
        "⚠ Inconclusive: the machine fell behind by 2209 ms at step 2",
        "warn",
    )
    said, tone = expectation(verdict, None, [])  # type: ignore[misc]
    assert tone == "unjudged" and said.startswith("⚠ Not judged")
    assert expectation({"mutual_exclusion": "held"}, False, ["a; b"]) == (
        "✖ Not what the scenario predicted: a; b",
        "missed",
    )
    assert expectation({"mutual_exclusion": "held"}, None, []) is None


def test_a_shift_in_words_kept_or_not() -> None:
    kept = {"seq": 6, "t_ms": 2500, "actor": "lab", "kind": "schedule_shifted",
            "what": "step 1 (acquire)", "late_ms": 900.2, "kept": True}  # fmt: skip
    assert Narrator().said(kept).text == (
        "the machine fell behind by 900 ms at step 1 (acquire): the rest of the schedule moves "
        "900 ms later, keeping its intervals"
    )
    lost = {**kept, "what": "step 2 (pause)", "late_ms": 2209.4, "kept": False, "fixed": "lease",
            "fixed_by": "alice", "fixed_ms": 2005.1, "moved": "step 2 (pause)",
            "moved_from_ms": 300, "moved_to_ms": 2509.4}  # fmt: skip
    said = Narrator().said(lost)
    assert said.text == (
        "the machine fell behind by 2209 ms at step 2 (pause): the schedule moves 2209 ms later, "
        "but alice's lease ends at 2005 ms, and step 2 (pause) now comes after it (2509 ms): "
        "this run cannot keep its story"
    )
    assert said.label == "story lost"
    # A restart's boot is the step's own time, not the machine falling behind (issue 34).
    booted = {**kept, "what": "step 3 (restart), as the lab did it", "late_ms": 1371.2,
              "own_ms": 1300.0}  # fmt: skip
    assert Narrator().said(booted).text == (
        "step 3 (restart), as the lab did it, took 1371 ms (1300 ms of it its server booting): "
        "the rest of the schedule moves 1371 ms later, keeping its intervals"
    )


def test_reads_checks_and_duplicates_in_words() -> None:
    events = [
        {"seq": 1, "t_ms": 0, "actor": "alice", "kind": "request", "to": "storage", "call": 1,
         "op": "write", "value": "A", "token": 7, "read": 0, "key": "k1"},
        {"seq": 2, "t_ms": 1, "actor": "storage", "kind": "request", "to": "zk-1", "call": 1,
         "op": "check", "holder": "alice", "path": "/lockviz/lock/alice.x.lock-1", "token": 7},
        {"seq": 3, "t_ms": 2, "actor": "storage", "kind": "reply", "from": "zk-1", "call": 1,
         "op": "check", "ok": True, "current": False, "why": "alice's lock node is gone"},
        {"seq": 4, "t_ms": 3, "actor": "alice", "kind": "reply", "from": "storage", "call": 1,
         "op": "write", "ok": True, "accepted": False, "token": 7,
         "reason": "alice's lock node is gone"},
        {"seq": 5, "t_ms": 4, "actor": "bob", "kind": "reply", "from": "storage", "call": 9,
         "op": "read", "ok": True, "value": "B", "version": 3},
        {"seq": 6, "t_ms": 5, "actor": "bob", "kind": "reply", "from": "storage", "call": 8,
         "op": "write", "ok": True, "accepted": True, "duplicate": True, "found": 0,
         "version": 1},
    ]  # fmt: skip
    said = [e["said"] for e in narrate(events)]
    assert said[0]["label"] == "write A (token 7) · read v0 · key k1"
    assert (
        "is alice's lock node /lockviz/lock/alice.x.lock-1 still there (czxid 7)?"
        in said[1]["text"]
    )
    assert said[2]["label"] == "✖ alice's lock node is gone"
    assert said[3]["mark"] == "REJECTED alice's lock node is gone"
    assert said[4]["label"] == "v3: 'B'"
    assert said[5]["label"] == "duplicate: the first result (accepted), not applied again"
    assert said[5]["mark"].endswith("not applied again")
    assert click({"do": "read", "client": "bob"}) == "bob reads the storage"
    assert click({"do": "write", "client": "a", "value": "A", "key": "k"}).endswith("key 'k')")


def test_headlines_and_facts_say_what_saved_the_data_and_when_no_lock_was_in_play() -> None:
    saved = {"mutual_exclusion": "violated", "stale_writes_rejected": 1, "data_corrupted": False}
    assert headline(saved, storage="sequencer")[0].endswith("the sequencer check saved the data")
    assert headline(saved, storage="cas")[0].endswith("compare-and-set saved the data")
    lost = {"mutual_exclusion": "none", "stale_writes_accepted": 1, "data_corrupted": True}
    assert headline(lost) == ("✖ No lock, and an update was lost", "bad")
    kept = {"mutual_exclusion": "none", "stale_writes_rejected": 1}
    assert headline(kept, storage="cas") == (
        "✔ No lock, but compare-and-set kept every update",
        "good",
    )
    assert facts(kept, "cas")[0] == ("Two holders at once", "no lock in play")
    assert facts(kept, "cas")[2][0] == "Stale writes rejected by compare-and-set"


def test_every_step_is_numbered_once_narrated_or_not() -> None:
    events = told("gc-pause-fenced")
    steps = [e for e in events if e["kind"] == "step"]
    assert [e["said"]["text"].split(":")[0] for e in steps] == [
        f"step {n}" for n in range(1, len(steps) + 1)
    ]
    unnarrated = next(e for e in steps if not e.get("say"))
    assert unnarrated["said"]["label"] == click(unnarrated)  # its click, never a gap
    script = json.loads((RUNS / "gc-pause-fenced.json").read_text())["scenario"]["steps"]
    assert [item["number"] for item in story(script)] == [str(n) for n in range(1, len(script) + 1)]


def test_redlock_replies_name_their_node_with_a_tick_or_a_cross() -> None:
    events = told("redlock-clock-jump")
    replies = [e for e in events if e["kind"] == "reply" and e["said"]["label"]]
    for e in replies:
        if e["op"] != "write":
            assert e["said"]["label"].startswith(("✔ " + e["from"], "✖ " + e["from"]))
    said = [e["said"]["label"] for e in replies]
    assert "✖ redis-4 unreachable: connection reset" in said  # errno 104, in plain words
    assert "✖ redis-3 said no: key held by bob" in said  # the clock jump handed it to bob
    assert not any("Error 104" in label or "127.0.0.1" in label for label in said)
    assert all("?" not in e["said"]["label"] for e in events)  # never "token ?"
    assert labels(events, "granted") == ["lease 8 s on 3 of 5\nno fencing token"] * 2
    fan_out = [
        e["said"]["label"] for e in events if e["kind"] == "request" and e["op"] == "acquire"
    ]
    assert fan_out[0] == "SET NX PX 8000 → all 5" and set(fan_out[1:5]) == {""}


def test_refused_rounds_are_numbered_and_folded_from_the_second() -> None:
    events = told("redlock-three-down")
    rounds = [e["said"].get("round", 0) for e in events if e["kind"] == "request"]
    assert rounds == sorted(rounds) and max(rounds) >= 3
    folds = [e["said"]["fold"] for e in events if e["said"].get("fold")]
    last = max(rounds)
    assert folds[0] == "round 2 refused" and folds[-1] == f"rounds 2–{last} refused"
    notes = labels(events, "note")
    assert notes[0] == "2 of 5 said yes, 3 needed: undo everywhere"
    single = told("contention")
    assert [e["said"]["label"] for e in single if e["kind"] == "reply"][
        1
    ] == "nil: key held by alice"


def test_zookeeper_says_czxid_and_tells_an_expired_session_from_a_suspended_one() -> None:
    events = told("zk-gc-pause-fenced")
    assert labels(events, "granted") == [
        "session timeout 1.5 s · czxid 6",
        "session timeout 1.5 s · czxid 8",
    ]
    assert labels(events, "lost") == ["lost: session expired"]  # ZooKeeper had expired it
    lost = next(e for e in events if e["kind"] == "lost")
    assert "expired its session at 1.85 s" in lost["said"]["text"]
    assert labels(events, "session") == ["SUSPENDED", "LOST", "new session"]
    rejected = next(e for e in events if e["kind"] == "reply" and e.get("accepted") is False)
    assert rejected["said"]["mark"] == "REJECTED czxid 6 < 8"
    woken = labels(told("zk-no-herd"), "woken")
    assert woken and set(woken) == {"watch fired: predecessor deleted"}
    suspended = Narrator("zookeeper")
    said = suspended.said({"kind": "lost", "actor": "bob", "reason": "connection suspended: x"})
    assert said.label == "lost: connection suspended"  # nobody expired it (yet)


def test_an_accepted_stale_write_says_what_it_destroyed() -> None:
    events = told("gc-pause-unfenced")
    marks = {e["said"]["mark"]: e["said"].get("tone") for e in events if e["said"]["mark"]}
    assert marks["stored B (token 2)"] is None
    assert marks["A (token 1) overwrote B (token 2)"] == "damage"
    redlock = {e["said"]["mark"] for e in told("redlock-clock-jump") if e["said"].get("tone")}
    assert redlock == {"A overwrote B"}  # Redlock has no token to name
    for slug in ("gc-pause-fenced", "zk-gc-pause-fenced", "contention"):
        assert not any(e["said"].get("tone") for e in told(slug))


@pytest.mark.parametrize("slug", sorted(p.stem for p in RUNS.glob("*.json")))
def test_the_narrator_judges_writes_as_the_checker_does(slug: str) -> None:
    run = json.loads((RUNS / f"{slug}.json").read_text())
    damaged = {e["seq"] for e in told(slug) if e["said"].get("tone") == "damage"}
    stale = {w["seq"] for w in run["verdict"]["writes"] if w["stale"] and w["accepted"]}
    assert damaged == stale


def test_library_errors_in_plain_words() -> None:
    raw = (
        "connection failed (Error 104 while talking to 127.0.0.1:46661. Connection reset by peer.)"
    )
    assert plain_error(raw) == "connection reset"
    assert plain_error("no reply within 50 ms") == "no reply within 50 ms"
    assert plain_error("Error 111 connecting to 127.0.0.1:9. Connection refused.") == (
        "connection refused"
    )
    assert "127.0.0.1" not in plain_error("weird failure at 127.0.0.1:4242")


def test_the_setup_and_a_checkpoint_never_tell_the_outcome() -> None:
    scenario = json.loads((RUNS / "gc-pause-fenced.json").read_text())["scenario"]
    said = setup(scenario)
    assert said.startswith("alice and bob share one lock on Redis") and "2 s" in said
    assert "reject" not in said.lower() and scenario["description"] not in said
    step = next(s for s in scenario["steps"] if s.get("ask"))
    words = checkpoint(step, scenario["steps"].index(step))
    assert step["say"] not in words["text"] and step["ask"]["question"] in words["text"]


def test_the_setup_of_one_client_says_it_takes_the_lock_not_that_it_shares_it() -> None:
    alone = json.loads((RUNS / "redlock-happy.json").read_text())["scenario"]
    assert alone["clients"] == ["alice"]
    assert setup(alone).startswith("alice takes a lock on Redlock (5 nodes), with a lease of 3 s")
    assert setup({**alone, "backend": "none"}).startswith("alice writes to one storage")
    assert setup({**alone, "backend": "none", "clients": ["a", "b"]}).startswith("a and b write")


def test_each_damaging_write_links_to_its_moment() -> None:
    run = json.loads((RUNS / "gc-pause-unfenced.json").read_text())
    [found] = damage(run["verdict"])
    write = next(w for w in run["verdict"]["writes"] if w["stale"])
    assert found["seq"] == write["seq"] and "alice's stale write A" in found["text"]


def test_a_failover_is_told_with_its_votes_its_promotion_and_the_repeated_token() -> None:
    events = told("redis-failover-wait-loses")
    assert labels(events, "request")[0] == "which node is primary?"
    assert "primary: redis-1" in labels(events, "reply")
    assert any(label.startswith("WAIT: 1 acknowledged") for label in labels(events, "reply"))
    assert labels(events, "replicated") == ["has alice's key", "has bob's key"]
    downs = labels(events, "suspected")
    assert "SDOWN redis-1" in downs and any(d.startswith("ODOWN redis-1 (") for d in downs)
    votes = labels(events, "voted")
    assert len(votes) >= 3 and any(v.startswith("votes for itself") for v in votes)
    (promoted,) = [e for e in events if e["kind"] == "role"]
    assert promoted["said"]["label"].startswith("PRIMARY (epoch")
    assert "in place of redis-1, promoted by sentinel-" in promoted["said"]["text"]
    tokens = [e["said"]["label"] for e in events if e["kind"] == "granted"]
    assert tokens[0].endswith("token 1") and tokens[1].endswith("token 1")


def test_sessions_are_told_as_their_client_sees_them_and_leaders_as_they_change() -> None:
    survives = told("zk-session-survives")
    states = labels(survives, "session")
    assert states[0] == "SUSPENDED · keeps the lock" and states[1].startswith("RECONNECTED to zk-")
    crash = told("zk-leader-crash")
    states = labels(crash, "session")  # both clients, suspended while the ensemble elects
    assert states.count("SUSPENDED") == 2
    assert sum(state.startswith("RECONNECTED to zk-") for state in states) == 2
    (leader,) = [e for e in crash if e["kind"] == "role"]
    assert leader["said"]["text"].endswith("LEADS the ensemble now after zk-3 (epoch 2)")
    etcd = [e for e in told("etcd-leader-crash") if e["kind"] == "role"]
    assert etcd and "LEADS the cluster now after etcd-3" in etcd[0]["said"]["text"]
    assert "alice 3 s" in etcd[0]["said"]["text"]  # her lease, as the new leader has it
    old = Narrator("zookeeper")  # a run recorded before RECONNECTED: CONNECTED after SUSPENDED
    old.said({"kind": "session", "actor": "bob", "state": "SUSPENDED"})
    assert (
        old.said({"kind": "session", "actor": "bob", "state": "CONNECTED"}).label == "RECONNECTED"
    )


def test_the_words_for_a_lease_fit_each_lock_from_the_catalogue() -> None:
    """Issue 32: "lease" only where there is one; a session's end is "(session gone)"."""
    from lockviz.narrator import hold, setup

    def scenario(**fields: object) -> dict[str, object]:
        return {"backend": "redis", "ttl_ms": 1500, "clients": ["alice", "bob"], **fields}

    assert hold(scenario()) == "lease 1.5 s"
    assert hold(scenario(variant="no_ttl")) == "no lease"
    assert hold(scenario(backend="zookeeper")) == "session timeout 1.5 s"
    assert hold(scenario(backend="postgres")) == "no lease"
    assert hold(scenario(backend="postgres", variant="xact")) == "idle-in-transaction timeout 1.5 s"
    assert hold(scenario(backend="postgres", idle_session_timeout_ms=2000)) == (
        "no lease · idle session timeout 2 s"
    )
    assert hold(scenario(backend="none")) == "no lock"
    assert "with a session timeout of 1.5 s" in setup(scenario(backend="zookeeper"))
    assert "lease" not in setup(scenario(backend="postgres"))
    zk = told("zk-gc-pause-fenced")
    granted = next(e for e in zk if e["kind"] == "granted")
    assert "lease" not in granted["said"]["text"]
    assert "session timeout 1500 ms" in granted["said"]["text"]
    expired = next(e for e in zk if e["kind"] == "expired")
    assert expired["said"]["mark"] == "believes it holds\n(session gone)"
    lost = next(e for e in zk if e["kind"] == "lost")
    assert "its connection was connection" not in lost["said"]["text"]
    pg = told("pg-ghost-holder-timeout")
    assert next(e for e in pg if e["kind"] == "granted")["said"]["label"].startswith("no lease")
    ended = next(e for e in pg if e["kind"] == "deleted")
    assert ended["said"]["mark"] == "believes it holds\n(session gone)"
    restarted = next(e for e in told("redis-restart") if e["kind"] == "restarted")
    assert restarted["said"]["label"] == "restarted (no persistence)"
    assert "fsync" not in restarted["said"]["text"]


def test_a_write_refused_by_compare_and_set_says_why_not_a_token_comparison() -> None:
    """storage-hole-cas: bob's token (8) is higher than the highest seen (6): his write was
    refused for its read, and the mark says so ("8 < 6" would be false)."""
    refused = [
        e for e in told("storage-hole-cas") if e["kind"] == "reply" and e.get("accepted") is False
    ]
    assert [e["said"]["mark"] for e in refused] == ["REJECTED read v0, now v1"]
    fenced = [e for e in told("gc-pause-fenced") if e.get("accepted") is False]
    assert [e["said"]["mark"] for e in fenced] == ["REJECTED 1 < 2"]

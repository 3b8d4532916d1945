"""The narrator: one wording of events, clicks and verdicts for every page, export and terminal."""

from __future__ import annotations

from lockviz.runs.narrator import (
    Narrator,
    click,
    expectation,
    facts,
    headline,
    narrate,
    render,
)


def test_headlines_say_held_saved_or_corrupted() -> None:
    assert headline({"mutual_exclusion": "held", "liveness": "ok"}) == (
        "✔ Mutual exclusion held",
        "good",
    )
    saved = {"mutual_exclusion": "violated", "stale_writes_rejected": 1, "data_corrupted": False}
    assert headline(saved) == ("⚠ Mutual exclusion violated — fencing saved the data", "warn")
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
    assert narrator.said(accepted).mark == "stored A (1)"


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

"""The narrator: one wording of events, clicks and verdicts for every page, export and terminal."""

from __future__ import annotations

from lockviz.runs.narrator import Narrator, click, facts, headline, narrate, render


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

"""The Mermaid export: lifelines in order, arrows, notes, the rejected write in a break block,
and user text that cannot break Mermaid's grammar. (Mermaid's own parser checks real runs in
tests/browser/test_replay.py.)"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from lockviz.runs.exports import mermaid, text

DATA = Path(__file__).parent.parent / "data"


def recorded(name: str) -> dict:
    """A run recorded by ``manage.py run_scenario <slug> --json`` on the live lab."""
    return json.loads((DATA / f"{name}-run.json").read_text())


def lines(run: dict) -> list[str]:
    return [line.strip() for line in mermaid(run).splitlines()]


def test_participants_come_in_lifeline_order() -> None:
    out = lines(recorded("gc-pause-fenced"))
    assert out[0] == "sequenceDiagram"
    assert out[1].startswith("title GC pause outlives the lease")
    declared = [line for line in out if line.startswith("participant ")]
    assert declared == [
        "participant alice",
        "participant bob",
        "participant redis_1 as redis-1",
        "participant storage",
    ]


def test_requests_and_replies_are_arrows_with_times_and_leases_in_notes() -> None:
    out = lines(recorded("gc-pause-fenced"))
    assert "alice->>redis_1: SET NX PX 2000" in out
    assert "redis_1-->>alice: OK · token 1" in out
    grant = next(line for line in out if line.startswith("Note over bob:") and "holds" in line)
    assert re.match(
        r"Note over bob: t=2\.8\d s · believes it holds the lock \(token 2, lease 2000 ms\)$",
        grant,
    )
    assert any(re.match(r"Note over redis_1: t=2\.\d\d s · lease of alice EXPIRED", x) for x in out)


def test_the_rejected_write_sits_in_a_break_block_and_the_verdict_ends_it() -> None:
    out = lines(recorded("gc-pause-fenced"))
    start = next(i for i, line in enumerate(out) if line.startswith("break "))
    assert "write REJECTED by fencing (1 #lt; 2)" in out[start]
    assert out[start + 1 : start + 4] == [
        "alice->>storage: write A (token 1)",
        "storage-->>alice: REJECTED 1 #lt; 2",
        "end",
    ]
    assert out.count("alice->>storage: write A (token 1)") == 1  # drawn once, inside the block
    assert out[-1].startswith("Note over alice,storage: Verdict · Mutual exclusion violated")


def test_blocks_open_and_close_in_pairs() -> None:
    for name in ("gc-pause-fenced", "gc-pause-unfenced"):
        out = lines(recorded(name))
        opened = [x for x in out if x.startswith(("rect ", "break ", "alt ", "loop "))]
        assert len(opened) == out.count("end")


def test_the_pause_is_a_shaded_block_on_the_frozen_client() -> None:
    out = lines(recorded("gc-pause-fenced"))
    at = out.index("rect rgb(232, 232, 232)")
    assert out[at + 1].startswith("Note over alice: t=0.30 s · FROZEN (SIGSTOP) for 3500 ms")
    thawed = next(i for i, x in enumerate(out) if "thawed (SIGCONT)" in x)
    assert out[thawed + 1] == "end"


def test_an_accepted_stale_write_is_shaded_red_and_named() -> None:
    out = lines(recorded("gc-pause-unfenced"))
    at = out.index("rect rgb(255, 220, 220)")
    assert out[at + 1] == "alice->>storage: write A (token 1)"
    assert "STALE WRITE ACCEPTED: A (token 1) overwrote B (token 2)" in out[at + 3]
    assert not any(x.startswith("break ") for x in out)


def test_hostile_text_cannot_break_the_grammar() -> None:
    run = copy.deepcopy(recorded("gc-pause-fenced"))
    run["scenario"]["title"] = "<script>x</script>; # %%{init: {}}%%\nNote over bob: hi"
    for e in run["events"]:
        if e.get("say"):
            e["say"] = "line one;\nend\n<b>bold</b> #35; %%{init}%%"
    run["events"][0]["clients"] = ["end", "bob"]
    for e in run["events"]:
        if e["actor"] == "alice":
            e["actor"] = "end"
    out = mermaid(run)
    unescaped = re.sub(r"#(lt|gt|35|37|59);", "", out)
    assert ";" not in unescaped and "%" not in unescaped
    assert "<script" not in out and "<b>" not in out and "#35;35#59;" in out  # "#35;" typed
    title = out.splitlines()[1]
    assert title.startswith("    title #lt;script#gt;x#lt;/script#gt;#59; #35; #37;#37;{init")
    assert "\nend\n" not in out.replace("    end\n", "")  # no stray "end" line from the text
    assert "participant p1 as end" in out  # a keyword is never an id
    assert "p1->>redis_1: SET NX PX 2000" in out


def test_text_escapes_once_and_keeps_it_on_one_line() -> None:
    assert text("a;b") == "a#59;b"
    assert text("#lt;") == "#35;lt#59;"  # shown literally, not decoded to "<"
    assert text("1 < 2 > 0") == "1 #lt; 2 #gt; 0"
    assert text("two\nlines\r\x00") == "two lines"
    assert text("") == "-"
    assert len(text("x" * 500, limit=50)) == 50


def test_an_inconclusive_run_says_so_in_its_verdict_note() -> None:
    # Recorded on the live lab: run_scenario's process was stopped (SIGSTOP) for 2.5 s after
    # alice's grant, so her pause came after her lease had ended.
    out = lines(recorded("gc-pause-fenced-inconclusive"))
    [note] = [line for line in out if "Verdict ·" in line]
    assert "Verdict · Inconclusive: the machine fell behind by" in note
    assert "prediction was not judged" in note.replace("<br/>", " ")
    assert "this run cannot keep its story" in " ".join(out).replace("<br/>", " ")


def test_the_storage_asking_a_lock_node_stays_the_storage_lifeline() -> None:
    run = recorded("gc-pause-fenced")
    events = list(run["events"])
    check = {"to": "redis-1", "call": 1, "op": "check", "holder": "alice"}
    events[10:10] = [
        {"seq": 900, "t_ms": 3000.0, "actor": "storage", "kind": "request", **check},
        {"seq": 901, "t_ms": 3001.0, "actor": "storage", "kind": "reply", "from": "redis-1",
         "call": 1, "op": "check", "ok": True, "current": False, "why": "gone"},
    ]  # fmt: skip
    out = lines({**run, "events": events})
    declared = [line for line in out if line.startswith("participant ")]
    assert declared[-1] == "participant storage"  # last, not among the clients
    assert any(line.startswith("storage->>redis_1:") for line in out)

"""How the ZooKeeper watcher tells a release from an expiry when the server's session list
misses a live session (lockviz.lab.watchers.zookeeper.alive): ZooKeeper's ``dump`` lists its
expiry buckets from a snapshot of their keys, and a session its owner's own ``delete`` moves to
a new bucket meanwhile is in neither (org.apache.zookeeper.server.ExpiryQueue: update adds to
the new bucket, then removes from the old). The live test of both endings is
tests/lockviz/lab/servers/test_zookeeper.py."""

from __future__ import annotations

from collections.abc import Callable

from lockviz.lab.watchers.zookeeper import alive

ALICE, BOB = 0x1001, 0x1002


def reads(*found: set[int] | None) -> tuple[Callable[[], tuple[str, set[int] | None]], list[int]]:
    """A session list that answers ``found`` in turn (then the last again), and how often it
    was read."""
    asked: list[int] = []

    def sessions() -> tuple[str, set[int] | None]:
        asked.append(1)
        answer = found[min(len(asked), len(found)) - 1]
        return "zk-1", None if answer is None else set(answer)

    return sessions, asked


def test_a_session_one_dump_missed_is_alive_if_the_next_lists_it() -> None:
    sessions, asked = reads({BOB}, {ALICE, BOB})
    actor, live = alive(sessions, {ALICE}, pause_s=0)
    assert actor == "zk-1" and live is not None and ALICE in live  # her own delete: ``deleted``
    assert len(asked) == 2


def test_a_session_every_dump_misses_is_gone() -> None:
    sessions, asked = reads({BOB})
    _, live = alive(sessions, {ALICE}, pause_s=0)
    assert live == {BOB}  # ALICE's node went with her session: ``expired``
    assert len(asked) == 3


def test_one_dump_is_enough_when_every_owner_is_in_it() -> None:
    sessions, asked = reads({ALICE, BOB})
    assert alive(sessions, {ALICE, BOB}, pause_s=0)[1] == {ALICE, BOB}
    assert len(asked) == 1


def test_a_server_that_cannot_tell_is_not_asked_again() -> None:
    sessions, asked = reads(None)
    assert alive(sessions, {ALICE}, pause_s=0)[1] is None  # ``deleted``: it cannot tell
    assert len(asked) == 1

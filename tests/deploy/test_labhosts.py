"""Labs on lab hosts, web processes that only serve (issue 21's "Done when", live).

Two web processes (``serve`` with ``LOCKVIZ_LAB_HOSTS=remote``: no lab of their own) and two
``manage.py labhost`` processes share a PostgreSQL and a Redis (tests/deploy/conftest.py's
``backing``); each process has a host name of its own (as root), so a dead host is found by its
heartbeat, as across machines. The test reads PostgreSQL to know what is true, and Redis to play
a host that died holding a request. The tests run in file order on one tier: the kill -9 and the
drain each leave one host gone, and start another; the last two each start hosts of their own.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from bench.labhost import LabHost, turns
from lockviz.labhost import stream
from tests.deploy.clients import Viewer, Visitor
from tests.deploy.conftest import Database, Layer, Replica, replica_env, start_replicas, stop_all

pytestmark = pytest.mark.live

GONE = "the lab host stopped answering"
TOLD_WITHIN_S = 10.0  # issue 21: a dead host's runs read interrupted within 10 s
START_PATIENCE_S = 90.0  # a busy 2-core machine may take this long to start a run


@dataclass
class Tier:
    db: Database
    layer: Layer
    webs: dict[str, Replica]
    hosts: dict[str, LabHost]
    workdir: Path
    env: dict[str, str]
    viewers: list[Viewer] = field(default_factory=list)

    def watched(self, run_id: str) -> str:
        """``run_id``, its page open (a run nobody watches while it waits is cancelled)."""
        viewer = Viewer(f"page of {run_id}", self.webs["web-2"].url, run_id).start(300)
        self.viewers.append(viewer)
        return run_id

    def add_host(self, name: str, ceiling: int | None = None) -> LabHost:
        """A lab host, sized by its own ``LOCKVIZ_MAX_RUNS`` when ``ceiling`` is given."""
        sized = {"LOCKVIZ_MAX_RUNS": str(ceiling)} if ceiling else {}
        self.hosts[name] = LabHost(name, self.workdir, {**self.env, **sized})
        return self.hosts[name]

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.layer.url, socket_timeout=5)

    def run(self, run_id: str) -> dict[str, Any]:
        rows = self.db.query(
            "SELECT status, host, error, verdict FROM lockviz_run WHERE id = %s", run_id
        )
        assert rows, f"run {run_id} is not in the database"
        return dict(zip(("status", "host", "error", "verdict"), rows[0], strict=True))

    def kinds(self, run_id: str) -> list[str]:
        rows = self.db.query(
            "SELECT kind FROM lockviz_runevent WHERE run_id = %s ORDER BY seq", run_id
        )
        return [str(kind) for (kind,) in rows]

    def host_of(self, run_id: str) -> LabHost:
        """The lab host running ``run_id``, once one has taken it."""
        wait_for(f"run {run_id} taken by a lab host", lambda: self.run(run_id)["host"] != "",
                 START_PATIENCE_S)  # fmt: skip
        host = self.run(run_id)["host"]
        for lab in self.hosts.values():
            if lab.identity == host:
                return lab
        raise AssertionError(f"run {run_id} is run by {host!r}, no lab host of {list(self.hosts)}")

    def playing(self, run_id: str) -> LabHost:
        """The host of ``run_id`` once the run has started playing."""
        lab = self.host_of(run_id)
        wait_for(f"run {run_id} playing", lambda: "run_started" in self.kinds(run_id),
                 START_PATIENCE_S)  # fmt: skip
        return lab


def wait_for(what: str, ready: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s:g} s"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def tier(
    backing: tuple[Database, Layer, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Tier]:
    db, layer, key = backing
    workdir = tmp_path_factory.mktemp("lab-hosts")
    env = {
        **replica_env(db, layer, "http://127.0.0.1", key),
        "LOCKVIZ_LAB_HOSTS": "remote",
        "LOCKVIZ_STATE_DIR": str(workdir),
    }
    webs = start_replicas(["web-1", "web-2"], workdir, env)
    found = Tier(db, layer, webs, {}, workdir, env)
    try:
        found.add_host("lab-1")
        found.add_host("lab-2")
        yield found
    finally:
        for viewer in found.viewers:
            viewer.ended = True
        for lab in found.hosts.values():
            lab.stop()
        stop_all(webs.values())


def test_web_processes_run_no_lab_and_a_run_started_through_one_is_clicked_through_the_other(
    tier: Tier,
) -> None:
    learner = Visitor(tier.webs["web-1"].url)
    run = tier.watched(learner.start_session())  # through web process A
    lab = tier.playing(run)  # ...on lab host X
    for web in tier.webs.values():  # no lab, no fork server, no redis-server of its own
        assert web.descendants() == {}, f"{web.name} (remote) started processes"
    other = learner.via(tier.webs["web-2"].url)  # ...clicked through web process B
    assert other.click(run, do="acquire", client="alice") == "done"
    refused = other.click(run, do="acquire", client="carol")
    assert "carol" in refused and "not one of the scenario" in refused, refused
    assert other.finish(run) == "done"
    wait_for(f"run {run} finished", lambda: tier.run(run)["status"] == "finished", 30)
    assert lab.started(run) == 1


def test_kill_9_of_a_host_interrupts_its_runs_within_10_s_and_new_runs_go_to_the_other(
    tier: Tier,
) -> None:
    learner = Visitor(tier.webs["web-1"].url)
    runs = [tier.watched(learner.start_scenario(turns(60, f"long run {n}"))) for n in range(2)]
    for run in runs:
        tier.playing(run)
    victim = tier.host_of(runs[0])
    theirs = [run for run in runs if tier.host_of(run) is victim]
    viewer = Viewer("viewer", tier.webs["web-2"].url, theirs[0]).start(timeout_s=60)
    wait_for("the viewer has the run's first events", lambda: viewer.last > 0, 20)
    victim.kill()
    killed = time.monotonic()
    for run in theirs:
        wait_for(f"run {run} interrupted after kill -9 of its lab host",
                 lambda run=run: tier.run(run)["status"] == "interrupted",  # type: ignore[misc]
                 TOLD_WITHIN_S - (time.monotonic() - killed))  # fmt: skip
        assert tier.run(run)["error"] == GONE
        assert tier.kinds(run)[-1] == "run_interrupted"
    told = tier.db.query(
        "SELECT seq FROM lockviz_runevent WHERE run_id = %s AND kind = 'run_interrupted'",
        theirs[0],
    )
    wait_for("the open page told of the interruption",
             lambda: viewer.last >= int(told[0][0]), 5)  # fmt: skip
    viewer.ended = True
    survivor = next(lab for lab in tier.hosts.values() if lab.alive)
    for run in runs:
        if run not in theirs:  # the other host's run plays on (Finish: the next test drains)
            assert tier.run(run)["status"] == "running", tier.run(run)
            assert learner.finish(run) == "done"
    newcomer = Visitor(tier.webs["web-2"].url)
    fresh = tier.watched(newcomer.start_session())
    assert tier.playing(fresh) is survivor
    assert newcomer.finish(fresh) == "done"
    del tier.hosts[victim.name]
    tier.add_host("lab-3")  # two hosts again for the tests that follow


def test_sigterm_drains_a_host_it_takes_no_new_run_and_loses_none(tier: Tier) -> None:
    learner = Visitor(tier.webs["web-2"].url)
    run = tier.watched(learner.start_scenario(turns(12, "a run that must end with its verdict")))
    draining = tier.playing(run)
    draining.term()
    termed = time.monotonic()
    newcomer = Visitor(tier.webs["web-1"].url)
    later = tier.watched(newcomer.start_session())  # taken by the other host only
    assert tier.host_of(later) is not draining
    assert tier.run(later)["status"] == "running"
    time.sleep(2)
    assert draining.alive, "a host told SIGTERM ended before its run did"
    wait_for(f"run {run} judged", lambda: tier.run(run)["status"] != "running", 60)
    assert tier.run(run)["status"] == "finished", tier.run(run)
    assert tier.run(run)["verdict"], tier.run(run)
    assert tier.kinds(run)[-1] in ("run_finished", "run_failed")
    draining.proc.wait(30)
    assert draining.proc.returncode == 0, draining.output()[-2000:]
    assert time.monotonic() - termed > 5  # it waited for the run (12 s of steps)
    assert newcomer.finish(later) == "done"
    del tier.hosts[draining.name]
    tier.add_host("lab-4")


def test_a_request_taken_by_a_host_that_died_before_starting_it_is_run_by_another_once(
    tier: Tier,
) -> None:
    for lab in list(tier.hosts.values()):  # no host reads the stream while the dead one takes
        lab.stop()
        del tier.hosts[lab.name]
    learner = Visitor(tier.webs["web-1"].url)
    # Nobody watches this one: while it waits for a lab host it is cancelled, as a run waiting
    # in one process's queue is, and no host runs it afterwards.
    lonely = learner.start_scenario(turns(3, "nobody watches this one"))
    wait_for(f"unwatched run {lonely} cancelled",
             lambda: tier.run(lonely)["status"] == "cancelled", 40)  # fmt: skip
    assert "nobody watched it" in tier.run(lonely)["error"]
    run = tier.watched(learner.start_scenario(turns(3, "a request whose first host died")))
    client = tier.redis()
    dead = "lab-dead:1:1"  # a host that read the request, and died before it started the run
    taken = stream.take(client, dead, block_ms=2000)
    while taken is not None and taken.run_id == lonely:  # the cancelled one's request: ack it
        stream.ack(client, taken)
        taken = stream.take(client, dead, block_ms=2000)
    assert taken is not None and taken.run_id == run, taken
    assert tier.run(run)["status"] == "queued"
    assert stream.pending(client) == 1
    first, second = tier.add_host("lab-5"), tier.add_host("lab-6")
    wait_for(f"run {run} judged", lambda: tier.run(run)["status"] == "finished", 120)
    assert first.started(run) + second.started(run) == 1, "run more than once, or never"
    assert stream.pending(client) == 0
    kinds = tier.kinds(run)
    assert kinds.count("run_started") == 1 and kinds.count("run_finished") == 1, kinds
    # The same request delivered again (a host that acknowledged nothing before it died after
    # starting the run would leave it so): the run is not run again.
    stream.publish(client, run)
    wait_for("the request again acknowledged", lambda: stream.pending(client) == 0 and any(
        f"run {run}: started, ended or gone already" in lab.output() for lab in (first, second)
    ), 20)  # fmt: skip
    assert first.started(run) + second.started(run) == 1
    assert tier.kinds(run) == kinds
    assert first.started(lonely) + second.started(lonely) == 0
    assert tier.run(lonely)["status"] == "cancelled"


def test_a_burst_is_shared_by_free_slots_a_bigger_host_takes_more_and_none_passes_its_ceiling(
    tier: Tier,
) -> None:
    for lab in list(tier.hosts.values()):
        lab.stop()
        del tier.hosts[lab.name]
    # Ceilings 1 and 3: on a loaded 2-core machine the bigger host's adaptive limit may stay at
    # its floor (2) and never reach 3, but it is always twice the smaller one's.
    small, big = tier.add_host("lab-small", ceiling=1), tier.add_host("lab-big", ceiling=3)
    count = 8
    with concurrent.futures.ThreadPoolExecutor(count) as pool:  # pressed at once, each its own
        runs = list(pool.map(  # browser (a browser's runs are capped), through both webs
            lambda n: tier.watched(Visitor(tier.webs[f"web-{n % 2 + 1}"].url).start_scenario(
                turns(5, f"burst {n}"))), range(count)))  # fmt: skip
    most = {small.identity: 0, big.identity: 0}  # runs each host had taken and not ended
    ended = threading.Event()

    def count_at_once() -> None:
        while not ended.is_set():
            for host, at_once in tier.db.query(
                "SELECT host, count(*) FROM lockviz_run WHERE id = ANY(%s) AND status = 'running'"
                " AND host <> '' GROUP BY host", runs,
            ):  # fmt: skip
                most[host] = max(most.get(host, 0), int(at_once))
            time.sleep(0.05)

    counter = threading.Thread(target=count_at_once, daemon=True)
    counter.start()
    try:
        wait_for("every run of the burst ended", lambda: all(
            tier.run(run)["status"] not in ("queued", "running") for run in runs), 240)  # fmt: skip
    finally:
        ended.set()
        counter.join(5)
    found = [tier.run(run) for run in runs]
    assert [r["status"] for r in found] == ["finished"] * count, found
    took = {lab.name: sum(1 for r in found if r["host"] == lab.identity) for lab in (small, big)}
    assert sum(took.values()) == count, (took, found)  # every run on one of the two hosts
    assert most[small.identity] <= 1, f"the host of ceiling 1 held {most} at once"
    assert most[big.identity] >= 2, f"the bigger host never used a second slot: {most}"
    assert took["lab-big"] > took["lab-small"], f"the bigger host took no more: {took}"

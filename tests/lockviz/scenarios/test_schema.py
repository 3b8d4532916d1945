"""Scenario validation: every refusal names the offending field; nothing raises a traceback."""

from __future__ import annotations

import copy

import pytest

from lockviz.errors import ScenarioError
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import loads, parse
from tests.conftest import builtin_json


def problems(data: object) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse(data)
    return info.value.problems


def gc() -> dict:
    return copy.deepcopy(builtin_json("gc-pause-fenced"))


def test_every_builtin_scenario_is_valid_and_has_an_expectation() -> None:
    scenarios = builtin()
    assert {"gc-pause-fenced", "gc-pause-unfenced", "contention", "unsafe-release"} <= set(
        scenarios
    )
    assert all(s.expect is not None for s in scenarios.values())


def test_the_issue_example_parses() -> None:
    s = parse(gc())
    assert s.clients == ["alice", "bob"] and s.steps[1].ms == 3500


def test_unknown_key_is_named() -> None:
    data = gc()
    data["steps"][2]["colour"] = "red"
    assert problems(data) == ["steps[2].colour: unknown field"]


def test_unknown_top_level_key_is_named() -> None:
    data = gc()
    data["ttl"] = 5
    assert problems(data) == ["ttl: unknown field"]


def test_unknown_verb_lists_the_known_ones() -> None:
    data = gc()
    data["steps"][0]["do"] = "grab"
    [problem] = problems(data)
    assert problem.startswith("steps[0].do: unknown verb 'grab'") and "acquire" in problem


def test_unknown_client_is_named() -> None:
    data = gc()
    data["steps"][3]["client"] = "eve"
    assert problems(data) == [
        "steps[3].client: 'eve' is not one of the scenario's clients ['alice', 'bob']"
    ]


def test_negative_time_is_refused() -> None:
    data = gc()
    data["steps"][1]["at_ms"] = -5
    assert problems(data) == ["steps[1].at_ms: Input should be greater than or equal to 0"]


def test_absurd_run_length_is_refused() -> None:
    data = gc()
    data["steps"][1]["ms"] = 500_000
    assert problems(data) == ["steps: the run would last 500300 ms; the most is 120000"]


def test_too_many_clients_and_steps() -> None:
    data = gc()
    data["clients"] = [f"c{i}" for i in range(9)]
    assert any(p.startswith("clients: List should have at most 8 items") for p in problems(data))
    data = gc()
    data["steps"] = data["steps"] * 80
    assert any(p.startswith("steps: List should have at most 500 items") for p in problems(data))


def test_pause_needs_ms_and_write_needs_value() -> None:
    data = gc()
    del data["steps"][1]["ms"]
    del data["steps"][3]["value"]
    assert problems(data) == [
        "steps[1].ms: required for 'pause'",
        "steps[3].value: required for 'write'",
    ]


def test_wrong_types_are_named() -> None:
    data = gc()
    data["ttl_ms"] = "2000"
    data["fencing"] = "yes"
    assert problems(data) == [
        "fencing: Input should be a valid boolean",
        "ttl_ms: Input should be a valid integer",
    ]


def test_link_verbs_name_their_missing_and_unknown_parts() -> None:
    data = gc()
    data["steps"][0] = {"at_ms": 0, "do": "partition", "client": "alice"}
    data["steps"][1] = {"at_ms": 5, "do": "delay", "client": "alice", "nodes": ["redis-7"]}
    data["steps"][2] = {"at_ms": 9, "do": "heal", "mode": "reset"}
    assert problems(data) == [
        "steps[0].nodes: required for 'partition' (which servers, e.g. [\"redis-1\"])",
        "steps[1].nodes[0]: unknown node 'redis-7'; this backend has ['redis-1', 'storage']",
        "steps[1].ms: required for 'delay'",
        "steps[2].mode: not used by 'heal'",
    ]


def test_valid_fault_steps_parse() -> None:
    data = gc()
    data["steps"] += [
        {"at_ms": 10, "do": "partition", "client": "bob", "nodes": ["redis-1", "storage"]},
        {
            "at_ms": 20,
            "do": "delay",
            "client": "bob",
            "nodes": ["storage"],
            "ms": 300,
            "jitter_ms": 20,
        },
        {"at_ms": 30, "do": "heal"},
        {"at_ms": 40, "do": "clock_rate", "client": "bob", "rate": 0.5},
        {"at_ms": 50, "do": "clock_jump", "client": "bob", "ms": -2000},
        {"at_ms": 60, "do": "restart", "node": "redis-1"},
    ]
    assert parse(data).steps[-1].do == "restart"


def test_clock_rate_is_bounded() -> None:
    data = gc()
    data["steps"].append({"at_ms": 40, "do": "clock_rate", "client": "bob", "rate": 50})
    assert problems(data) == ["steps[7].rate: Input should be less than or equal to 10"]


def test_node_verbs_need_a_known_node() -> None:
    data = gc()
    data["steps"].append({"at_ms": 100, "node": "redis-9", "do": "clock_jump", "ms": 1000})
    assert problems(data) == [
        "steps[7].node: unknown node 'redis-9'; this backend has ['redis-1', 'storage']"
    ]


def test_unknown_backend_and_format() -> None:
    data = gc()
    data["backend"], data["format"] = "memcached", 2
    found = problems(data)
    assert 'format: only format 1 exists; set "format": 1' in found
    assert any(p.startswith("backend: unknown backend 'memcached'") for p in found)


def test_not_json_and_not_an_object() -> None:
    with pytest.raises(ScenarioError) as info:
        loads('{"format": 1,')
    assert info.value.problems[0].startswith("not valid JSON:")
    assert problems([1, 2]) == ["scenario: must be a JSON object"]


def test_hostile_text_is_kept_verbatim_as_data() -> None:
    data = gc()
    data["title"] = "<script>alert(1)</script>"
    assert parse(data).title == "<script>alert(1)</script>"


def test_a_client_cannot_take_a_servers_name() -> None:
    data = gc()
    data["clients"] = ["alice", "bob", "storage", "redis-2"]
    assert problems(data) == [
        "clients[2]: 'storage' is a server's or the lab's name; pick another",
        "clients[3]: 'redis-2' is a server's or the lab's name; pick another",
    ]


def test_only_pauses_count_towards_the_run_length() -> None:
    data = gc()
    data["steps"].append({"at_ms": 1000, "node": "redis-1", "do": "clock_jump", "ms": 119_500})
    assert parse(data).duration_ms == 4600


def test_a_checkpoint_answer_must_be_a_choice_on_any_step() -> None:
    data = gc()
    data["steps"].append(
        {"at_ms": 10, "do": "heal", "ask": {"question": "?", "choices": ["a", "b"], "answer": "c"}}
    )
    assert problems(data) == ["steps[7].ask.answer: 'c' is not one of the choices"]


# ---- storage kinds and the backend without a lock -------------------------------------------


def test_fencing_alone_means_fenced_or_plain_and_both_are_always_filled_in() -> None:
    data = gc()
    assert (parse(data).storage, parse(data).fencing) == ("fenced", True)
    data["fencing"] = False
    assert (parse(data).storage, parse(data).fencing) == ("plain", False)
    del data["fencing"]
    data["storage"] = "cas"
    scenario = parse(data)
    assert (scenario.storage, scenario.fencing) == ("cas", False)
    assert parse(scenario.to_json()) == scenario  # what is stored parses back the same


def test_storage_contradicting_fencing_is_refused_naming_both() -> None:
    data = gc()
    data["storage"] = "plain"  # fencing: true is written in the file
    [problem] = problems(data)
    assert problem.startswith("storage: 'plain' contradicts \"fencing\": true")
    data["storage"], data["fencing"] = "cas", False  # cas does not check tokens: no conflict
    assert parse(data).storage == "cas"
    data["storage"] = "nope"
    assert problems(data) == [
        "storage: unknown storage 'nope'; choose from ['plain', 'fenced', 'fenced_reads', "
        "'sequencer', 'cas', 'lww', 'crdt']"
    ]


def test_a_sequencer_needs_a_lock_service_that_can_answer_for_the_writer() -> None:
    data = gc()
    data.pop("fencing")
    data["storage"] = "sequencer"
    for backend in ("redis", "zookeeper", "etcd"):
        assert parse({**data, "backend": backend}).storage == "sequencer"
    redlock = {**data, "backend": "redlock"}
    assert parse(redlock).storage == "sequencer"  # a majority read is an honest check
    pooled = {**data, "backend": "postgres", "variant": "pooled"}
    [problem] = problems(pooled)
    assert problem.startswith("storage: Through PgBouncer") and "pg_locks" in problem
    assert parse({**data, "backend": "postgres", "variant": "session"}).storage == "sequencer"


def test_only_an_election_answers_who_leads() -> None:
    steps = [{"at_ms": 0, "client": "alice", "do": "leader"}]
    base = {"format": 1, "title": "t", "backend": "etcd", "ttl_ms": 2000,
            "clients": ["alice"], "steps": steps}  # fmt: skip
    assert problems(base) == [
        "steps[0].do: 'leader' asks who leads an election, and this scenario's lock is not one; "
        "an election is the variant zookeeper election or etcd election"
    ]
    assert parse({**base, "variant": "election"}).steps[0].do == "leader"
    assert parse({**base, "backend": "zookeeper", "variant": "election"}).variant == "election"


def test_without_a_lock_service_only_reads_and_writes_and_no_tokens_to_check() -> None:
    steps = [
        {"at_ms": 0, "client": "alice", "do": "read"},
        {"at_ms": 10, "client": "alice", "do": "write", "value": "A", "key": "k1"},
    ]
    base = {"format": 1, "title": "t", "backend": "none", "ttl_ms": 1000,
            "clients": ["alice"], "steps": steps}  # fmt: skip
    assert problems(base) == [
        'storage: There is no lock service, so there are no fencing tokens to check. Use "plain", '
        '"cas", "lww" or "crdt".'
    ]
    assert parse({**base, "storage": "lww"}).servers == ["storage", "storage-2"]
    assert problems({**base, "backend": "redis", "storage": "crdt"}) == [
        "storage: 'crdt' takes no lock service: It is storage without a lock: every replica "
        "accepts every write and the replicas settle their differences themselves. Use "
        '"backend": "none", or another storage.'
    ]
    assert parse({**base, "storage": "cas"}).nodes == []
    assert problems({**base, "storage": "sequencer"})[0].startswith(
        "storage: There is no lock service for the storage to ask."
    )
    acquire = [{"at_ms": 0, "client": "alice", "do": "acquire"}]
    assert problems({**base, "storage": "plain", "steps": acquire}) == [
        "steps[0].do: 'acquire' needs a lock service, and this scenario has \"backend\": "
        '"none"; its clients can only read and write the storage'
    ]


def test_a_key_is_a_writes_field_only() -> None:
    data = gc()
    data["steps"][0]["key"] = "k"
    assert "steps[0].key: not used by 'acquire'" in problems(data)
    data = gc()
    data["steps"][3]["key"] = ""
    assert problems(data) == ["steps[3].key: String should have at least 1 character"]


def test_a_group_server_is_cut_from_all_its_peers_or_from_those_named() -> None:
    data = copy.deepcopy(builtin_json("redis-failover"))
    data["steps"] += [
        {"at_ms": 10, "do": "partition", "node": "redis-1", "nodes": ["sentinel-1", "sentinel-2"]},
        {"at_ms": 20, "do": "heal", "node": "redis-1", "nodes": ["sentinel-1"]},
        {"at_ms": 30, "do": "partition", "node": "sentinel-3", "mode": "reset"},
        {"at_ms": 40, "do": "pause", "node": "redis-2", "ms": 1500},
    ]
    assert parse(data).steps[-1].target.value == "node"
    data["steps"] += [
        {"at_ms": 50, "do": "partition", "node": "redis-1", "nodes": ["storage", "redis-1"]},
        {"at_ms": 60, "do": "delay", "node": "redis-1", "nodes": ["redis-2"], "ms": 5},
    ]
    n = len(data["steps"])
    assert problems(data) == [
        f"steps[{n - 2}].nodes[0]: 'storage' is not one of redis-1's peers "
        "['redis-2', 'redis-3', 'sentinel-1', 'sentinel-2', 'sentinel-3']",
        f"steps[{n - 2}].nodes[1]: 'redis-1' is not one of redis-1's peers "
        "['redis-2', 'redis-3', 'sentinel-1', 'sentinel-2', 'sentinel-3']",
        f"steps[{n - 1}].node: only partition and heal can act on a server's links to its peers",
    ]


def test_only_a_group_of_servers_has_peers_to_cut() -> None:
    data = gc()  # single Redis: redis-1 talks to nobody
    data["steps"].append({"at_ms": 10, "do": "partition", "node": "redis-1"})
    (problem,) = problems(data)
    assert problem.startswith("steps[7].node: only a server whose servers talk to each other")
    assert "Redis + Sentinel" in problem and "etcd (etcd_nodes: 3)" in problem
    etcd = copy.deepcopy(builtin_json("etcd-leader-crash"))
    etcd["steps"].append({"at_ms": 10, "do": "partition", "node": "etcd-3"})
    assert parse(etcd).steps[-1].node == "etcd-3"
    etcd["etcd_nodes"] = 1
    assert "etcd_nodes" in " ".join(problems(etcd))

"""Side by side: building variants, the comparison form, ``?runs=`` and the lanes' headlines."""

from __future__ import annotations

import pytest
from django.test import Client

from lockviz.errors import ScenarioError
from lockviz.models import Run
from lockviz.scenarios.library import builtin
from lockviz.teaching.compare import CompareForm, read_run_ids, variant
from tests.conftest import wait_for_run


def form(**rows: str) -> CompareForm:
    data = {"scenario": "gc-pause-fenced"}
    for n in range(1, 5):
        data.setdefault(f"backend_{n}", "skip")
        data.setdefault(f"storage_{n}", "fenced")
    data.update(rows)
    return CompareForm(data)


def test_a_variant_keeps_the_script_and_drops_a_prediction_it_no_longer_fits() -> None:
    base = builtin()["gc-pause-fenced"]
    same = variant(base, "redis", "fenced")
    assert same.expect == base.expect and same.steps == base.steps
    fenced = variant(builtin()["contention"], "redis", "fenced")
    assert fenced.fencing is True and fenced.storage == "fenced"
    assert fenced.expect is None and fenced.steps == builtin()["contention"].steps
    unfenced = variant(base, "redis", "plain")  # exactly another built-in: its own prediction
    assert unfenced is builtin()["gc-pause-unfenced"]
    redlock = variant(builtin()["unsafe-release"], "redlock", "plain")
    assert redlock.backend == "redlock" and redlock.variant is None  # no plain-DEL Redlock


def test_a_variant_that_is_another_built_in_runs_as_that_scenario() -> None:
    hole = builtin()["storage-hole-fenced"]
    for kind in ("plain", "sequencer", "cas", "fenced_reads"):
        twin = variant(hole, "zookeeper", kind)
        slug = f"storage-hole-{kind.replace('_', '-')}"
        assert twin is builtin()[slug]  # its own prediction and checkpoints
        assert twin.expect is not None and any(step.ask for step in twin.steps)
    lww = builtin()["lww-clock-behind"]  # the same schedule, the other way of needing no lock
    assert variant(lww, "none", "crdt") is builtin()["crdt-clock-behind"]
    etcd = builtin()["leader-etcd-pause-fenced"]
    assert variant(etcd, "etcd", "plain") is builtin()["leader-etcd-pause-plain"]
    f = form(scenario="storage-hole-fenced", backend_1="same", backend_2="same",
             storage_2="sequencer")  # fmt: skip
    assert f.is_valid(), f.errors
    assert f.slugs == ["storage-hole-fenced", "storage-hole-sequencer"]


def test_redlock_with_fencing_is_refused_with_the_schemas_reason() -> None:
    with pytest.raises(ScenarioError) as info:
        variant(builtin()["gc-pause-fenced"], "redlock", "fenced")
    assert info.value.problems[0].startswith("storage: Redlock cannot fence")


def test_the_form_builds_one_variant_per_used_row() -> None:
    f = form(backend_1="same", backend_2="same", storage_2="plain")
    assert f.is_valid(), f.errors
    assert [v.storage for v in f.variants] == ["fenced", "plain"]
    assert f.cleaned_data["slug"] == "gc-pause-fenced"


def test_the_form_names_each_bad_variant_next_to_it() -> None:
    f = form(backend_1="same", backend_2="same", backend_3="redlock")
    assert not f.is_valid()
    assert f.row_errors[2][0] == "the same as variant 1: pick something else"
    assert f.row_errors[3][0].startswith("storage: Redlock cannot fence")
    assert 1 not in f.row_errors
    assert f.non_field_errors() == ["Some variants cannot run; each says why below."]
    rows = {row["n"]: row for row in f.rows()}
    assert rows[3]["backend"].value() == "redlock"  # what the learner chose stays chosen


def test_the_form_needs_two_variants_and_a_known_scenario() -> None:
    f = form(backend_1="same")
    assert not f.is_valid()
    assert f.non_field_errors() == ["Pick at least two variants to compare."]
    f = form(scenario="nope", backend_1="same", backend_2="redis")
    assert not f.is_valid() and "scenario" in f.errors
    f = form(backend_1="mongo", backend_2="same")
    assert not f.is_valid() and "backend_1" in f.errors


def test_read_run_ids_names_what_is_wrong() -> None:
    assert read_run_ids("a1, b2,a1") == (["a1", "b2"], [])
    assert read_run_ids(" , ")[1] == [
        "No runs given: ?runs= takes 2 to 4 run ids separated by commas."
    ]
    ids, problems = read_run_ids("a1,<script>,b2")
    assert ids == ["a1", "b2"] and problems == [
        "'<script>' is not a run id (run ids are letters and digits)."
    ]
    ids, problems = read_run_ids("a,b,c,d,e,f")
    assert ids == ["a", "b", "c", "d"]
    assert problems == [
        "At most 4 runs fit side by side; you gave 6, so only the first 4 are shown."
    ]
    ids, problems = read_run_ids("x" * 500)
    assert ids == [] and len(problems[0]) < 120


# ---- pages -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_empty_comparison_page_offers_fenced_against_plain(client: Client) -> None:
    page = client.get("/compare/?scenario=contention").content.decode()
    assert '<option value="contention" selected>' in page
    assert page.count('<option value="same" selected>') == 2
    assert '<option value="plain" selected>' in page


@pytest.mark.django_db
def test_lanes_names_the_storage_kinds_of_the_rows(client: Client) -> None:
    url = "/compare/?scenario=storage-hole-fenced&lanes=fenced,plain,sequencer,cas,nope"
    page = client.get(url).content.decode()
    assert page.count('<option value="same" selected>') == 4
    for kind in ("plain", "sequencer", "cas"):
        assert f'<option value="{kind}" selected>' in page


@pytest.mark.django_db
def test_a_bad_comparison_is_named_inline_and_nothing_runs(client: Client) -> None:
    data = {"scenario": "gc-pause-fenced", "backend_1": "same", "storage_1": "fenced"}
    data.update({"backend_2": "redlock", "storage_2": "fenced", "backend_3": "skip"})
    data.update({"storage_3": "fenced", "backend_4": "skip", "storage_4": "fenced"})
    response = client.post("/compare/", data, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and 'id="compare-form"' in body
    assert "Redlock cannot fence" in body and '<option value="redlock" selected>' in body
    response = client.post("/compare/", data)  # without htmx: the whole page, status 400
    assert response.status_code == 400 and "<h1>Side by side</h1>" in response.content.decode()
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_bad_runs_values_get_a_clear_message(client: Client) -> None:
    response = client.get("/compare/?runs=garbage!!,nope")
    body = response.content.decode()
    assert response.status_code == 404
    assert "&#x27;garbage!!&#x27; is not a run id" in body
    assert "There is no run &#x27;nope&#x27;." in body
    body = client.get("/compare/?runs=a,b,c,d,e").content.decode()
    assert "At most 4 runs fit side by side; you gave 5" in body


@pytest.mark.django_db
def test_finished_runs_are_shown_in_lanes_with_their_headlines(client: Client) -> None:
    base = builtin()["gc-pause-fenced"]
    runs = []
    for kind, verdict in [
        ("fenced", {"mutual_exclusion": "violated", "stale_writes_rejected": 1, "summary": "S1"}),
        ("plain", {"mutual_exclusion": "violated", "data_corrupted": True, "summary": "S2"}),
    ]:
        data = variant(base, "redis", kind).to_json()
        runs.append(
            Run.objects.create(
                slug="gc-pause-fenced",
                title="<i>t</i>",
                scenario=data,
                status=Run.Status.FINISHED,
                verdict=verdict,
            )
        )
    body = client.get(f"/compare/?runs={runs[0].pk},{runs[1].pk}").content.decode()
    assert body.index("fencing saved the data") < body.index("data corrupted")
    assert "What this storage costs" not in body  # fenced and plain say no cost beside them
    assert "Redis · fenced (tokens)" in body and "Redis · plain" in body
    assert "&lt;i&gt;t&lt;/i&gt;" in body and "<i>t</i>" not in body
    lane = client.get(f"/compare/lanes/{runs[1].pk}/").content.decode()
    assert "✖ Mutual exclusion violated, data corrupted" in lane and "S2" in lane


@pytest.mark.django_db
def test_a_lane_says_what_its_kind_of_storage_costs(client: Client) -> None:
    runs = [
        Run.objects.create(slug=slug, title=slug, scenario=builtin()[slug].to_json(),
                           status=Run.Status.FINISHED, verdict={"mutual_exclusion": "none"})
        for slug in ("lww-clock-behind", "crdt-clock-behind")
    ]  # fmt: skip
    body = client.get(f"/compare/?runs={runs[0].pk},{runs[1].pk}").content.decode()
    assert "no lock · last-write-wins (2 replicas)" in body
    assert "What this storage costs: A concurrent write, or a newer one" in body
    assert "must decide what several values mean" in body


@pytest.mark.django_db
def test_compare_again_offers_the_lanes_as_they_were_asked_for(client: Client) -> None:
    base = builtin()["zk-gc-pause-fenced"]
    made = [("zookeeper", "fenced"), ("etcd", "plain"), ("zookeeper", "sequencer")]
    runs = [
        Run.objects.create(
            slug="zk-gc-pause-fenced",
            scenario=variant(base, backend, kind).to_json(),
            status=Run.Status.FINISHED,
        )
        for backend, kind in made
    ]
    page = client.get(f"/compare/?runs={','.join(r.pk for r in runs)}")
    form = page.context["form"]
    assert form.initial["scenario"] == "zk-gc-pause-fenced"  # not the default scenario
    rows = [(form.initial[f"backend_{n}"], form.initial[f"storage_{n}"]) for n in (1, 2, 3)]
    assert rows == [("same", "fenced"), ("etcd", "plain"), ("same", "sequencer")]
    assert "backend_4" not in form.initial  # the fourth row stays unused


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_posting_a_comparison_runs_every_variant_live(client: Client) -> None:
    data = {"scenario": "gc-pause-fenced", "backend_1": "same", "storage_1": "fenced"}
    data.update({"backend_2": "same", "storage_2": "plain", "backend_3": "skip"})
    data.update({"storage_3": "fenced", "backend_4": "skip", "storage_4": "fenced"})
    response = client.post("/compare/", data, HTTP_HX_REQUEST="true")
    url = response["HX-Redirect"]
    assert url.startswith("/compare/?runs=")
    on, off = (wait_for_run(run_id) for run_id in url.split("=")[1].split(","))
    assert on.verdict["stale_writes_rejected"] == 1 and not on.verdict["data_corrupted"]
    assert off.verdict["data_corrupted"] is True
    # "Plain" is exactly the built-in gc-pause-unfenced: it runs as that one, with its prediction.
    assert on.expect_met is True and off.expect_met is True
    assert (on.slug, off.slug) == ("gc-pause-fenced", "gc-pause-unfenced")

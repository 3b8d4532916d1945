"""The exercise pages without servers: what they show, what they refuse and to whom; an
attempt judged from its stored run, never from the client. The live runs:
tests/lockviz/exercises/test_builtins.py and tests/browser/test_exercises.py."""

from __future__ import annotations

import html
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lockviz.exercises import answers, attempts
from lockviz.exercises.builtin import builtin
from lockviz.models import Attempt, Run, SavedExercise
from tests.conftest import browser_of

pytestmark = pytest.mark.django_db


def text(client: Client, url: str) -> str:
    return html.unescape(client.get(url).content.decode())


def test_the_index_lists_every_builtin_by_kind(client: Client) -> None:
    page = client.get("/exercises/").content.decode()
    for slug, ex in builtin().items():
        assert f'href="/exercises/{slug}/"' in page and ex.title.replace("'", "&#x27;") in page
    assert page.index("Break it") < page.index("Fix it") < page.index("Predict it")


def test_a_break_page_offers_faults_only_and_no_solution(client: Client) -> None:
    ex = builtin()["break-redis-pause"]
    page = text(client, "/exercises/break-redis-pause/")
    assert ex.brief in page and "at most 1 fault" in page
    assert '<option value="pause">' in page and '<option value="acquire">' not in page
    assert ex.solution.text not in page  # earned by solving, or by attempts that counted
    assert ex.hints[0] in page  # a hint is there, folded


def test_a_fix_refuses_a_change_it_does_not_allow_by_name(client: Client) -> None:
    form = {"storage": "fenced", "variant": "safe", "ttl_ms": "9000"}
    response = client.post("/exercises/fix-redis-fencing/try", form)
    page = response.content.decode()
    assert response.status_code == 400
    refused = "ttl_ms: this exercise fixes the lease (ttl_ms) at 2000; you may change only"
    assert f"{refused} the storage kind" in page
    assert 'value="9000"' in page  # the form comes back as it was left
    assert not Run.objects.exists() and not Attempt.objects.exists()


def test_an_attempt_is_read_only_by_its_learner_and_judged_from_its_run(client: Client) -> None:
    ex = builtin()["fix-redis-fencing"]
    client.get("/exercises/")
    me = browser_of(client)
    scenario, goal = answers.scenario_for(ex, answers.solution(ex))
    run = Run.objects.create(title="t", scenario=scenario.to_json(), owner=me, status="running")
    attempt = Attempt.objects.create(exercise="fix-redis-fencing", title=ex.title, learner=me,
                                     run=run, answer={}, goal=goal)  # fmt: skip
    assert "Running" in client.get(f"/exercises/attempts/{attempt.pk}/").content.decode()
    assert Client().get(f"/exercises/attempts/{attempt.pk}/").status_code == 404  # not theirs
    # The verdict the lab stored decides it: an inconclusive one counts neither way.
    verdict = {"mutual_exclusion": "violated", "stale_writes_accepted": 0,
               "stale_writes_rejected": 1, "acquire_failures": 0, "liveness": "ok",
               "inconclusive": "the machine fell behind by 300 ms at step 4"}  # fmt: skip
    Run.objects.filter(pk=run.pk).update(status="finished", verdict=verdict)
    page = text(client, f"/exercises/attempts/{attempt.pk}/")
    assert "Inconclusive: does not count" in page and "Not started" in page
    attempt.refresh_from_db()
    assert attempt.outcome == "inconclusive"
    # A second attempt whose run was judged: solved, in one attempt that counted.
    run2 = Run.objects.create(title="t", scenario=scenario.to_json(), owner=me, status="running")
    second = Attempt.objects.create(exercise="fix-redis-fencing", title=ex.title, learner=me,
                                    run=run2, answer={}, goal=goal)  # fmt: skip
    run2.status, run2.verdict = "finished", {**verdict, "inconclusive": ""}
    run2.save()  # the run's end saved: judged at once (post_save), as on a lab host
    second.refresh_from_db()
    assert second.outcome == "solved"
    page = text(client, f"/exercises/attempts/{second.pk}/")
    assert "Solved" in page and "Solved in 1 attempt" in page and ex.solution.text in page


def test_a_client_cannot_say_it_solved_anything(client: Client) -> None:
    """Nothing posted is read as an outcome: an attempt is what its run's verdict says."""
    client.get("/exercises/")
    me = browser_of(client)
    held = {"mutual_exclusion": "held", "stale_writes_accepted": 0}
    run = Run.objects.create(title="t", scenario={}, owner=me, status="finished", verdict=held)
    attempt = Attempt.objects.create(exercise="break-redis-pause", title="t", learner=me,
                                     run=run, answer={}, goal="lost_update")  # fmt: skip
    client.post(f"/exercises/attempts/{attempt.pk}/", {"outcome": "solved"})
    assert attempts.judge(Attempt.objects.get(pk=attempt.pk)).outcome == "unsolved"


def test_a_teacher_keeps_an_exercise_and_shares_and_exports_it(client: Client) -> None:
    teacher = User.objects.create_user("ada", password="a long password 1")
    client.force_login(teacher)
    data = builtin()["fix-redis-fencing"].to_json()
    form = {"exercise": json.dumps({**data, "title": "My fencing"}), "visibility": "unlisted"}
    response = client.post("/exercises/new/", form)
    saved = SavedExercise.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/exercises/saved/{saved.pk}/"
    assert saved.kind == "fix" and saved.backend == "redis"
    other = Client()
    assert "My fencing" in other.get(f"/exercises/saved/{saved.pk}/").content.decode()
    refused = other.post(f"/exercises/saved/{saved.pk}/try", {"storage": "fenced", "renew": "on"})
    assert refused.status_code == 400 and "renew: this exercise fixes" in refused.content.decode()
    exported = other.get(f"/exercises/saved/{saved.pk}/exercise.json").json()
    assert exported["title"] == "My fencing" and exported["may_change"] == ["storage"]
    SavedExercise.objects.filter(pk=saved.pk).update(visibility="private")
    assert other.get(f"/exercises/saved/{saved.pk}/").status_code == 404
    broken = {**data, "kind": "break"}
    page = client.post("/exercises/new/", {"exercise": json.dumps(broken)})
    assert page.status_code == 400 and "budget: a break exercise needs one" in page.content.decode()

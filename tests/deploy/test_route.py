"""docs/deploy.md's route without Docker, run as the page writes it, on a fresh Debian machine
(tests/deploy/machine.py), then a class of three students through a lesson on what it built.

The route is read from the page: every ``sh`` block of its section "Without Docker", in order,
in one root shell that stops at the first command that fails, but the one its comment says the
test does not run (git and the clone: the machine has the checkout at /srv/lockviz) and the
names, which the test sets for its machine (its own address, over plain HTTP). So the page's
commands are what runs: PostgreSQL's role and database, Redis with its password file, the lab
host mode, two replicas and a lab host under (a stand-in for) systemd, Debian's nginx without
its default site, ``createteacher`` through ``lockviz-manage``. Then a teacher logs in with the
account the route made and presents a lesson through nginx on port 80 to three students, each in
a browser of their own on the machine's network; the lesson's run plays on the lab host.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import FLAGS, entry
from tests.browser.test_rooms import join, presenter_at, settled_at
from tests.browser.test_walkthrough import jump_to_question, told_answer
from tests.conftest import ROOT
from tests.deploy.machine import HOST_NAME, Machine, can_make_one

pytestmark = [pytest.mark.live, pytest.mark.browser]

DOC = ROOT / "docs" / "deploy.md"
SITE = "http://127.0.0.1"  # the machine's own address, on its own network
NAMES = f"SITE=127.0.0.1\nPUBLIC_URL={SITE}\n"
PASSWORD = "pauses-outlive-leases"
STUDENTS = {"laptop": (1366, 768), "phone": (390, 844), "screen": (1024, 768)}


def route() -> tuple[str, list[str]]:
    """The section's blocks as one script, and what each block was (run, skipped, set)."""
    text = DOC.read_text()
    section = text.split("\n## Without Docker\n", 1)[1].split("\n## ", 1)[0]
    found = re.finditer(
        r"(?:<!-- route: (?P<note>[^>]*?) -->\n)?```sh\n(?P<code>.*?)```", section, re.DOTALL
    )
    script, kinds = ["set -euo pipefail"], []
    for block in found:
        note, code = block["note"] or "", block["code"]
        if note.startswith("not run by the test"):
            kinds.append("skipped")
        elif note.startswith("the test sets these"):
            assert set(re.findall(r"^(\w+)=", code, re.M)) == {"SITE", "PUBLIC_URL"}, code
            script.append(NAMES)
            kinds.append("set")
        else:
            script.append(code)
            kinds.append("run")
    return "\n".join(script), kinds


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    why = can_make_one()
    if why:
        pytest.skip(f"no machine of the test's own here: {why}")
    made = Machine(tmp_path_factory.mktemp("school"))
    try:
        yield made
    finally:
        made.stop()


def test_the_documented_route_serves_a_class_of_three_through_a_lesson(
    machine: Machine, browser: Any, tmp_path: Path
) -> None:
    script, kinds = route()
    assert kinds == ["skipped", "run", "set", *["run"] * 6], kinds  # steps 1 to 8
    # A fresh machine: Debian's default site answers port 80, nothing of lockviz is there.
    before = machine.run("curl -s http://127.0.0.1/ || true; id lockviz || true")
    assert "Welcome to nginx" not in before.stdout  # not started yet: nothing answers
    assert "no such user" in before.stdout

    done = machine.run(script, stdin=PASSWORD + "\n", timeout_s=900)
    log = done.stdout
    assert done.returncode == 0, log[-6000:]
    assert "lockviz answers on port 80" in log, log[-3000:]
    assert "Made the teacher account 'ada'" in log, log[-3000:]
    assert "lab host(s) here" in log, log[-3000:]
    assert not machine.changed("lockviz.sqlite3").exists()  # every process found PostgreSQL

    # What it built: the services as the units run them, the settings' files to their group.
    state = machine.run(
        "systemctl is-active lockviz-web@1 lockviz-web@2 lockviz-labhost; "
        "stat -c '%U %G %a %n' /etc/lockviz/*; "
        "ps -eo user:20,args | grep '[m]anage.py' | sort"
    )
    assert state.stdout.startswith("active"), state.stdout
    for name in ("lockviz.env", "db_password", "live_password"):
        assert f"root lockviz 640 /etc/lockviz/{name}" in state.stdout, state.stdout
    serving = [line for line in state.stdout.splitlines() if "manage.py" in line]
    assert len([s for s in serving if "serve" in s]) == 2 and any("labhost" in s for s in serving)
    assert all(s.split()[0] == "lockviz" for s in serving), serving

    # Without the replicas' environment createteacher names the database it was given and
    # makes none (the SQLite file beside manage.py).
    bare = machine.run(
        f"cd /srv/lockviz && printf '%s\\n' {PASSWORD} | runuser -u lockviz -- "
        ".venv/bin/python manage.py createteacher bob --password-stdin"
    )
    assert bare.returncode == 1 and "There is no database at the SQLite file" in bare.stdout
    assert "Traceback" not in bare.stdout and not machine.changed("lockviz.sqlite3").exists()

    teach(machine, browser, tmp_path)

    # The lesson's run played on the lab host (the replicas run no lab: LOCKVIZ_LAB_HOSTS).
    runs = machine.run(
        "cd / && runuser -u postgres -- psql -d lockviz -Atc "
        "'SELECT slug, status, host FROM lockviz_run'"
    )
    rows = [line.split("|") for line in runs.stdout.splitlines()]
    assert rows and all(r[1] == "finished" for r in rows), runs.stdout
    labhost = machine.run("cat /run/sandbox-systemd/lockviz-labhost.service.pid").stdout.strip()
    assert all(r[2].startswith(f"{HOST_NAME}:{labhost}:") for r in rows), (labhost, runs.stdout)


def teach(machine: Machine, browser: Any, folder: Path) -> None:
    """ada logs in, opens a room and walks a lesson to its first checkpoint and on to its end;
    three students join by the code, answer, and follow every step."""
    school = browser.browser_type.launch(executable_path=machine.browser_binary(folder), args=FLAGS)
    try:
        teacher = page_of(school, (1280, 720))
        teacher.goto(SITE + "/accounts/login/")
        teacher.get_by_label("Name").fill("ada")
        teacher.get_by_label("Password").fill(PASSWORD)
        teacher.get_by_label("Password").press("Enter")
        teacher.wait_for_url("**/library/")
        teacher.goto(SITE + "/")
        teacher.get_by_role("button", name="Teach a class").click()
        teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
        code = teacher.url.rstrip("/").rsplit("/", 1)[1]
        server = type("Site", (), {"url": SITE})()  # what join() reads of a server
        students = {name: page_of(school, size) for name, size in STUDENTS.items()}
        for name, student in students.items():
            join(student, server, code, name.title())
        teacher.locator("#present", has_text="3").wait_for()

        teacher.goto(SITE + "/lessons/gc-pause-fenced/")
        teacher.get_by_role("button", name="Start the lesson on live servers").click()
        teacher.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
        teacher.locator("#live[data-status=finished]").wait_for(timeout=60_000)
        jump_to_question(teacher, "Alice is frozen", key="ArrowRight")
        at = presenter_at(teacher)
        teacher.get_by_role("button", name="Ask the class this checkpoint").click()
        for student in students.values():
            settled_at(student, at)
            student.get_by_role("button", name=re.compile("Bob gets the lock")).click()
        teacher.locator(".room-tally", has_text="3 of 3 answered").wait_for()
        teacher.locator("#room-reveal").click()
        told_answer(teacher)
        for student in students.values():
            student.locator(".poll-answer", has_text="Bob gets the lock").wait_for()
        for _ in range(200):
            if teacher.locator("#end").is_visible():
                break
            if teacher.locator("#next-say[aria-disabled=true]").count():  # a question waits
                teacher.get_by_role("button", name="Ask the class this checkpoint").click()
                teacher.locator("#room-reveal").click()
                teacher.locator("#next-say[aria-disabled=false]").wait_for()
            teacher.keyboard.press("n")
        end = presenter_at(teacher)
        for student in students.values():
            settled_at(student, end)
            entry(student)
            bars = student.evaluate(
                "[...document.querySelectorAll('#diagram g.lease rect')]"
                ".filter(r => +r.getAttribute('height') > 0).length"
            )
            assert bars >= 2  # alice's lease and bob's, drawn for every student
        for name, page in {"teacher": teacher, **students}.items():
            assert page.errors == [], name
    finally:
        school.close()


def page_of(browser: Any, size: tuple[int, int]) -> Any:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return page

"""The class sees what the teacher sees: at several moments of a lesson's live run, a replay, a
free-play session and a What if…? fork beside its original, every student's diagram draws the
marks the projector draws — every bar, band, badge and label, over the same run time
(tests/browser/marks.js reads them). A teacher at 1280×720 in the presenter view, students on a
1366×768 laptop, a 390×844 phone and a 1024×768 screen, each in a browser of their own."""

from __future__ import annotations

import base64
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import entry, separate
from tests.browser.test_accessibility import violations
from tests.browser.test_forks import to_moment
from tests.browser.test_free_play import GRANTED_TO, alice_holds
from tests.browser.test_rooms import join, presenter_at, settled_at
from tests.browser.test_walkthrough import jump_to_question
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]

VISIBLE = (Path(__file__).parent / "visible.js").read_text()
MARKS = (Path(__file__).parent / "marks.js").read_text()
OVERLAPS = (Path(__file__).parent / "overlaps.js").read_text()
SIZES = {"teacher": (1280, 720), "laptop": (1366, 768), "phone": (390, 844), "screen": (1024, 768)}
STUDENTS = ("laptop", "phone", "screen")
FOLLOWER = "window.entry.follow.diagram"
BESIDE = "window.entry.follow.beside"  # a fork's original, beside the fork
# Which run each of a student's diagrams draws (pages/follow.js: a diagram is made for the run
# its state names, and a new state drops it at once).
FOLLOWS = {FOLLOWER: "window.entry.follow.state.run", BESIDE: "window.entry.follow.state.beside"}
LANE_KINDS = ("lease", "belief", "pause")  # what the issue saw missing on every student's screen


@pytest.fixture
def klass(browser: Any) -> Iterator[dict[str, Any]]:
    """The teacher (presenter view) and three students, each in a context of their own."""
    with separate(browser, SIZES) as pages:
        pages["teacher"].context.add_init_script("localStorage.setItem('lockviz-presenter', '1')")
        for page in pages.values():
            page.context.add_init_script(VISIBLE)
            page.context.add_init_script(MARKS)
            page.context.add_init_script(OVERLAPS)
        yield pages


def open_room(server: AppServer, people: dict[str, Any]) -> str:
    """The teacher opens a room; each student joins it. Its code."""
    teacher = people["teacher"]
    teacher.goto(server.url + "/")
    teacher.get_by_role("button", name="Teach a class").click()
    teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
    code = str(teacher.url.rstrip("/").rsplit("/", 1)[1])
    for name in STUDENTS:
        join(people[name], server, code, name.title())
    return code


def marks(page: Any, diagram: str, captions: bool = True) -> tuple[int, list[str], object]:
    """How many events the page's ``diagram`` (an expression on its entry module) holds, what
    it draws (``captions``: with the steps' captions) and, a student's, which run (:data:`FOLLOWS`),
    read in one go."""
    entry(page)
    run = FOLLOWS.get(diagram, "null")
    read = (
        f"const d = {diagram}; "
        f"return d ? [d.events.length, window.lockvizMarks(d, c), {run}] : [-1, [], null];"
    )
    found = page.evaluate(f"(c) => {{ {read} }}", captions)
    return int(found[0]), list(found[1]), found[2]


def in_lanes(page: Any, diagram: str) -> bool:
    """Whether the page draws ``diagram`` as a compare lane beside another, compact: its steps
    numbered in the margin, their captions in their tooltips."""
    return bool(page.evaluate(f"() => Boolean({diagram}.options.lane)"))


NUMBER = re.compile(r"-?\d+")
SLACK_MS = 3  # two screens' px read back as run time differ by rounding: a line 655→675 or 656→676


def alike(a: str, b: str) -> bool:
    """Two marks alike: the same words and kinds, each time within :data:`SLACK_MS`."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    pairs = zip(NUMBER.findall(a), NUMBER.findall(b), strict=True)
    return all(abs(int(x) - int(y)) <= SLACK_MS for x, y in pairs)


def same(presenter: list[str], student: list[str], where: str, roomier: bool = False) -> None:
    """Both draw the same marks (as many of each, at the same times give or take rounding); if
    not, say which each has more of. ``roomier``: the student's diagram has more room than the
    presenter's compact lane, which leaves out a word it has no free spot for: the student's may
    have words more, never fewer."""
    theirs, mine = Counter(presenter), Counter(student)
    missing, extra = sorted((theirs - mine).elements()), sorted((mine - theirs).elements())
    for line in list(missing):
        twin = next((other for other in extra if alike(line, other)), None)
        if twin is not None:
            missing.remove(line)
            extra.remove(twin)
    if roomier:
        extra = [line for line in extra if not line.startswith("“")]
    assert not missing and not extra, (
        f"{where}\nonly the presenter:\n  "
        + "\n  ".join(missing)
        + "\nonly the student:\n  "
        + "\n  ".join(extra)
    )


def held_bars(drawn: list[str]) -> int:
    """How many lease bars, belief bars and pause bands are drawn with a height."""
    classes = (line.split(" | ")[0].split(" ")[-1].split(".") for line in drawn if line[0] == "#")
    heights = ("(no height)" not in line for line in drawn if line[0] == "#")
    return sum(1 for c, h in zip(classes, heights, strict=True) if h and set(c) & set(LANE_KINDS))


def alike_at_a_moment(people: dict[str, Any], presenter: str, at: int, where: str) -> list[str]:
    """The teacher's page shows the run up to event ``at``: each student's, once there, draws
    the same marks. The presenter's marks."""
    _, theirs, _ = marks(people["teacher"], presenter)
    for name in STUDENTS:
        settled_at(people[name], at)
        people[name].wait_for_function(f"() => {FOLLOWER} && {FOLLOWER}.events.length > 0")
        _, mine, _ = marks(people[name], FOLLOWER)
        same(theirs, mine, f"{where}, at #{at}, {name}")
    return theirs


def alike_live(
    people: dict[str, Any], presenter: str, student: str, run: str, where: str, tries: int = 200
) -> list[str]:
    """A live run: once a student's diagram draws ``run``, as the teacher's does, and holds as
    many events (read before and after it, unchanged), both draw the same marks. The
    presenter's marks. The run first: the room's state comes after the teacher's page moved on
    (a student's replay of the original at #1 was compared with the fork's lane at #1)."""
    teacher = people["teacher"]
    entry(teacher)
    lanes = in_lanes(teacher, presenter)
    for name in STUDENTS:
        for _ in range(tries):
            n, theirs, _ = marks(teacher, presenter, captions=not lanes)
            k, mine, drawn = marks(people[name], student, captions=not lanes)
            if drawn == run and n > 0 and n == k and marks(teacher, presenter)[0] == n:
                same(theirs, mine, f"{where}, {n} events, {name}", roomier=lanes)
                break
            people[name].wait_for_timeout(100)
        else:
            raise AssertionError(f"{where}: {name} never held the presenter's events of {run}")
    return theirs


def test_a_lesson_run_live_in_the_room_and_its_replay_are_drawn_alike_for_every_student(
    app_server: AppServer, klass: dict[str, Any]
) -> None:
    teacher = klass["teacher"]
    open_room(app_server, klass)
    teacher.goto(app_server.url + "/lessons/gc-pause-fenced/")
    teacher.get_by_role("button", name="Start the lesson on live servers").click()
    teacher.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
    teacher.locator("#live[data-status=finished]").wait_for(timeout=40_000)
    run_id = teacher.url.split("run=")[1]
    walk = "window.entry.walkthrough.diagram"

    # The telling, at the first checkpoint, past its outcome, and at the end.
    jump_to_question(teacher, "Alice is frozen", key="ArrowRight")
    alike_at_a_moment(klass, walk, presenter_at(teacher), "the lesson at its first checkpoint")
    ask_and_reveal(teacher)
    for _ in range(4):
        teacher.keyboard.press("ArrowRight")
    drawn = alike_at_a_moment(klass, walk, presenter_at(teacher), "the lesson past its outcome")
    assert held_bars(drawn) >= 3, drawn  # alice's lease and belief, her pause: the marks
    for _ in range(200):
        if teacher.locator("#end").is_visible():
            break
        if teacher.locator("#next-say[aria-disabled=true]").count():  # a question waits
            ask_and_reveal(teacher)
        teacher.keyboard.press("n")
    drawn = alike_at_a_moment(klass, walk, presenter_at(teacher), "the lesson at its end")
    for name in STUDENTS:
        assert violations(klass[name]) == [], name
    assert held_bars(drawn) >= 5, drawn  # and bob's lease and belief
    side_by_side(klass, "i38-lesson")

    # The same run's replay, shown at three moments.
    teacher.goto(f"{app_server.url}/runs/{run_id}/replay/")
    teacher.locator("#rp-seq").wait_for()
    replay = "window.entry.replay.diagram"
    for kind, actor in (("granted", "alice"), ("paused", "alice"), ("granted", "bob")):
        at = to_moment(teacher, kind, actor)
        alike_at_a_moment(klass, replay, at, f"the replay at {actor}'s {kind}")
    teacher.keyboard.press("End")
    teacher.wait_for_function(
        "() => window.entry.replay.seq === window.entry.replay.diagram.events.at(-1).seq"
    )
    at = int(teacher.evaluate("window.entry.replay.seq"))
    alike_at_a_moment(klass, replay, at, "the replay at its end")
    for name, page in klass.items():
        assert page.errors == [], name


def test_free_play_and_a_fork_beside_its_original_are_drawn_alike_for_every_student(
    app_server: AppServer, klass: dict[str, Any]
) -> None:
    teacher = klass["teacher"]
    open_room(app_server, klass)
    session = "window.entry.session.diagram"

    # Free play, clicked by the teacher: the class follows each click live.
    original, alice, bob = alice_holds(teacher, app_server.url)
    alike_live(klass, session, FOLLOWER, original, "free play, alice holds the lock")
    alice.get_by_label("pause alice for how many seconds").fill("1.5")
    alice.get_by_role("button", name="pause").click()
    teacher.locator("svg#diagram .pause").wait_for(state="attached")
    bob.get_by_role("button", name="acquire", exact=True).click()
    teacher.wait_for_function(GRANTED_TO, arg="bob", timeout=20_000)
    drawn = alike_live(klass, session, FOLLOWER, original, "free play, bob holds the lock")
    assert held_bars(drawn) >= 3, drawn  # alice's lease and belief, her pause
    # Bob's lease runs out well before Finish (as a loaded CI run's late clicks had it): his
    # belief outlives it by more than his words may move down (3 × 120 px, ~2 s here), beside
    # alice's bars, where the projector's narrow columns leave them no room free of her bars
    # (obstacles once the run has ended). Both beliefs say so on every screen.
    teacher.wait_for_function(
        f"() => {session}.events.some((e) => e.kind === 'expired' && e.holder === 'bob')"
    )
    teacher.wait_for_timeout(2500)
    teacher.get_by_role("button", name="Finish").click()
    teacher.locator("#verdict .headline").wait_for(timeout=30_000)
    drawn = alike_live(klass, session, FOLLOWER, original, "free play, finished")
    assert drawn.count("“believes it holds (lease gone)”") == 2, drawn

    # What if…? from alice's grant: the fork live beside the original, on the projector and on
    # every student's screen, the moment they part marked on both.
    teacher.goto(f"{app_server.url}/runs/{original}/replay/")
    seq = to_moment(teacher, "granted", "alice")
    teacher.goto(f"{app_server.url}/runs/{original}/fork/?at={seq}")
    teacher.get_by_role("button", name="Run the fork live, beside the original").click()
    teacher.wait_for_url(re.compile(rf".*/compare/\?runs={original},\w+$"), timeout=15_000)
    forked = str(teacher.url.rsplit(",", 1)[1])
    fork = "window.entry.compare.views[1].diagram"
    alike_live(klass, fork, FOLLOWER, forked, "the fork, as it plays")
    teacher.locator(".lane[data-done]").nth(1).wait_for(timeout=40_000)
    drawn = alike_live(klass, fork, FOLLOWER, forked, "the fork, ended")
    assert any(line.startswith("time-mark | line") for line in drawn), drawn  # where they part
    assert any("parts from here" in line for line in drawn), drawn
    alike_live(klass, "window.entry.compare.views[0].diagram", BESIDE, original,
               "the original beside the fork")  # fmt: skip
    # On the projector the two lanes are narrow: no word over another or under an arrow, the
    # moment they part said over the bars, "resumed (SIGCONT)" where the pause ends.
    entry(teacher)
    for lane in range(2):
        found = teacher.evaluate(
            f"window.lockvizOverlaps({LANE}[{lane}].diagram.svg)",
        )
        assert found["found"] == [], (lane, found["found"])
        placed = teacher.evaluate(PLACED, lane)
        assert placed["markOnTop"], placed
        assert placed["resumedFromEnd"] <= 30 * placed["scale"], placed
    # Each student has both verdicts: the original's under it, the fork's under both.
    for name in STUDENTS:
        student = klass[name]
        student.locator("#beside-verdict .lane-headline").wait_for()
        student.locator("#follow-verdict .headline").wait_for()
        assert violations(student) == [], name
    for name, page in klass.items():
        assert page.errors == [], name


class Answers:
    """A page whose reads of a diagram (:func:`marks`) answer ``reads`` in turn, the last one
    from then on; a compare lane's page (:func:`in_lanes`)."""

    def __init__(self, *reads: tuple[int, list[str], str | None]) -> None:
        self.reads, self.read = reads, 0

    def evaluate(self, script: str, arg: object = None) -> object:
        if "lockvizMarks" not in script:
            return True  # entry()'s import, in_lanes
        self.read += 1
        return list(self.reads[min(self.read, len(self.reads)) - 1])

    def wait_for_timeout(self, ms: int) -> None:
        pass


def test_a_students_diagram_is_compared_once_it_draws_the_presenters_run() -> None:
    """The CI failure as the pages answered: the teacher's fork lane at its first event, a
    student still on the original's replay at #1, where the teacher had been (no parting's
    mark); then the student draws the fork too, and is compared."""
    parting = ["time-mark", "time-mark | line 412→412", "“what if…? parts from here (0.41 s)”"]
    teacher = Answers((1, parting, None))
    behind = (1, [], "original")
    students = {name: Answers(behind, behind, (1, parting, "fork")) for name in STUDENTS}
    drawn = alike_live({"teacher": teacher, **students}, "a lane", FOLLOWER, "fork", "the fork")
    assert drawn == parting
    assert [page.read for page in students.values()] == [3, 3, 3]


def ask_and_reveal(teacher: Any) -> None:
    """At a checkpoint: the teacher asks the class and reveals the answer; the lesson takes it
    as its own and goes on (the class may read the step's narration from then on)."""
    teacher.get_by_role("button", name="Ask the class this checkpoint").click()
    teacher.locator("#room-reveal").click()
    teacher.locator("#next-say[aria-disabled=false]").wait_for()  # the lesson took the answer
    teacher.locator("#room-revealed .fold").click()


def side_by_side(people: dict[str, Any], name: str) -> None:
    """Screenshots of each student's screen beside the projector's, at the same step
    (/work/reports/<name>-<student>.png: the projector left, the student right)."""
    shots = Path("/work/reports") if Path("/work/reports").is_dir() else ROOT / "screenshots"
    teacher = people["teacher"].screenshot()
    for student in STUDENTS:
        page = people[student]
        page.locator("svg#diagram").scroll_into_view_if_needed()
        joined = page.evaluate(
            """async ([a, b]) => {
                 const load = (b64) => new Promise((ok) => { const i = new Image();
                   i.onload = () => ok(i); i.src = 'data:image/png;base64,' + b64; });
                 const [x, y] = [await load(a), await load(b)];
                 const c = document.createElement('canvas');
                 c.width = x.width + y.width + 16; c.height = Math.max(x.height, y.height);
                 const g = c.getContext('2d');
                 g.fillStyle = '#777'; g.fillRect(0, 0, c.width, c.height);
                 g.drawImage(x, 0, 0); g.drawImage(y, x.width + 16, 0);
                 return c.toDataURL('image/png').split(',')[1];
               }""",
            [base64.b64encode(shot).decode() for shot in (teacher, page.screenshot())],
        )
        (shots / f"{name}-{student}.png").write_bytes(base64.b64decode(joined))


LANE = "window.entry.compare.views"
# Where a lane's words are: the parting's over the bars (in the labels' layer, drawn after them),
# and how far from the end of the pause its "resumed" label is, in px of the svg (in a narrow
# lane, where it finds no room at its moment it is left out, its words in its tooltip).
PLACED = """(lane) => {
  const d = window.entry.compare.views[lane].diagram, svg = d.svg;
  const mark = svg.querySelector('.time-mark-label');
  const bar = svg.querySelector('.layer-bars rect');
  const onTop = Boolean(mark && bar
    && (bar.compareDocumentPosition(mark) & Node.DOCUMENT_POSITION_FOLLOWING));
  const band = svg.querySelector('g.pause rect');
  const resumed = svg.querySelector('g.resume-label text');
  const at = resumed && resumed.getAttribute('display') !== 'none' ? resumed.label.at : null;
  const end = band ? +band.getAttribute('y') + +band.getAttribute('height') : 0;
  return {
    scale: d.layout.scale,
    markOnTop: onTop,
    resumed: at ? resumed.textContent : null,  // null: none, or no room at its moment
    resumedFromEnd: at ? Math.abs(at.spot.y + (at.dy || 0) - end) : 0,
  };
}"""
DIAGRAM_TOP = "() => document.getElementById('diagram').getBoundingClientRect().top + scrollY"


@pytest.mark.parametrize("presenter", [False, True], ids=["laptop", "projector"])
def test_nothing_above_the_diagram_moves_it_while_a_live_run_plays_and_ends(
    app_server: AppServer, browser: Any, presenter: bool
) -> None:
    """A live lesson's line ("Running live on …", "Ran live on …") and a live run's fault bar
    keep the room their words will need: the diagram under them stays where it was drawn
    (issue 38: it moved about 25 px as the line grew, 40 px as the fault bar folded)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    if presenter:
        context.add_init_script("localStorage.setItem('lockviz-presenter', '1')")
    page = context.new_page()
    try:
        for start, button, ended in (
            (
                "/lessons/gc-pause-fenced/",
                "Start the lesson on live servers",
                "#live[data-status=finished]",
            ),
            ("/", "Run on live servers", "#run-status[data-status=finished]"),
        ):
            page.goto(app_server.url + start)
            scope = page.locator("#scenario-gc-pause-fenced") if start == "/" else page
            scope.get_by_role("button", name=button).click()
            page.locator("svg#diagram .lifeline-header").first.wait_for()
            tops = {round(page.evaluate(DIAGRAM_TOP))}
            while not page.locator(ended).count():
                tops.add(round(page.evaluate(DIAGRAM_TOP)))
                page.wait_for_timeout(50)
            page.wait_for_timeout(1500)  # the verdict and the end's words are in
            tops.add(round(page.evaluate(DIAGRAM_TOP)))
            assert len(tops) == 1, (start, sorted(tops))
    finally:
        context.close()

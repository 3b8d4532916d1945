// A lesson's walkthrough: wait for the live run to end, then tell it event by event.
//
// The diagram shows the run up to the cursor (LockDiagram.showUpTo) and the story panel beside
// it says what the current step is about. A step with an `ask` is a checkpoint: the cursor stops
// ON that step's own `step` event, before anything it caused is drawn, and asks. Answering jumps
// to the end of the step's outcome (the last event before the next step), so the learner sees
// what the real servers did next to whether they predicted it. Answers are kept per run in
// sessionStorage: going back shows the checkpoint again with the answer given.
//
// Nothing tells the outcome before it has happened: a checkpoint's step is drawn and told by its
// click and its question (data.hidden, from the narrator), its answer, explanation and narration
// are not on the page until the learner answers (lesson/answers.js fetches them; so does a
// class's reveal, for a presenter), and the scenario's description and take-away appear only
// after the last checkpoint is answered (or at the end, without one).
// Progress is kept in this browser (lesson/progress.js): started when the telling begins, done at the end.
// lesson/telling.js knows where each move goes; this module shows it. Without a run (before the lesson
// starts, or a lesson that cannot run) the page has only what every page has.
//
// Exports `walkthrough` {diagram, pos, events} while a run is told (the browser tests read it).
//
// Over ~300 lines: the live run's line, the walkthrough's moves and what each move shows (the
// diagram, the story panel, the checkpoint, the room's view of it) share one cursor and one
// panel; the parts that stand alone are already beside it in lesson/ (answers, keys, the live
// line, the question, the telling).

import { LockDiagram } from "../diagram/diagram.js";
import { drawnEvent, drawingOf } from "../run/drawing.js";
import { allEvents } from "../replay/event-chunks.js";
import { endOf, isFinal } from "../run/extent.js";
import { Answers } from "../lesson/answers.js";
import { lessonKeys } from "../lesson/keys.js";
import { LiveLine } from "../lesson/live.js";
import { Question } from "../lesson/question.js";
import { pageData } from "../page-data.js";
import { mark } from "../lesson/progress.js";
import { presenter } from "../room/presenter.js";
import { ENDED, openStream, SETTLED } from "../run/runstream.js";
import { pageTitle, tell } from "../room/showing.js";
import { startSite } from "../site.js";
import { untilJudged } from "../run/verdict-fetch.js";
import { Telling } from "../lesson/telling.js";

startSite();
// A verdict fetched once the run has ended, asked for again while it still says it is going.
for (const slot of document.querySelectorAll('[hx-trigger="verdict-ready from:body"]')) {
  untilJudged(slot, () => document.body.dispatchEvent(new Event("verdict-ready")));
}
const data = pageData();
export const walkthrough = data.run ? startWalkthrough(data) : null;
// Before its run starts, a presenter's room sees which lesson is on screen (its title), and
// nothing of a run (a lecture plan's lesson item lands here).
if (!data.run) {
  const slug = location.pathname.split("/").filter(Boolean)[1];
  tell({ showing: () => ({ view: "lesson", run: null, lesson: slug, at: null, narration: "", title: pageTitle() }) });
}

function startWalkthrough(data) {
  const $ = (id) => document.getElementById(id);
  const scenario = data.scenario;
  const steps = scenario.steps;
  const ui = {
    live: $("live"),
    next: $("next"),
    back: $("back"),
    nextSay: $("next-say"),
    prevSay: $("prev-say"),
    position: $("position"),
    event: $("event"),
    stepNo: $("step-no"),
    say: $("say"),
    checkpoint: $("checkpoint"),
    question: $("question"),
    choices: $("choices"),
    actions: $("checkpoint-actions"),
    skip: $("skip"),
    pickFirst: $("pick-first"),
    result: $("result"),
    mark: $("mark"),
    explain: $("explain"),
    end: $("end"),
    after: $("after"),
  };
  const hidden = data.hidden || {};
  const svg = $("diagram");
  const diagram = new LockDiagram(svg, {
    ...drawingOf("lesson", { scenario, nodes: data.nodes }),
    fit: presenter.on ? svg.parentElement : null,
  });
  presenter.adopt(diagram, svg.parentElement);
  const hasEnd = () => events.some(isFinal);
  const store = new Answers(data.run, data.answer_url, steps);
  const answers = store.given;
  const events = (data.events || []).slice();
  const told = new Telling(steps, answers);
  told.events = events;
  let status = data.status;
  let telling = false;
  let over = false; // the run has ended (ended())
  let pos = 0;
  const live = new LiveLine(ui.live, data);
  const showLive = (position) => live.say(status, events, position);
  const question = new Question(ui);

  // ---- the live run ----------------------------------------------------------------------

  function waitForRun() {
    const last = events.length ? events[events.length - 1].seq : 0;
    openStream(data.ws, last, {
      onEvent(ev) {
        events.push(forDiagram(ev));
        showLive();
      },
      onStatus(s, position) {
        status = s;
        showLive(position);
        // The page came with the run's end already (its events were read just after it):
        // nothing is left to wait for.
        if (SETTLED.has(s) && hasEnd()) ended(s);
      },
      onDone: ended,
      onError(message) {
        ui.live.textContent = `The live run cannot be followed: ${message}.`;
      },
    });
  }

  // The run has ended: the stored verdict is complete now, and the telling begins once the page
  // has the run's end. The stream brings it (its resume, then a reconnect, repair a message lost
  // on a loaded machine); if it still has not, the stored events do. A run whose end was never
  // stored is told to its last event, and ends there.
  function ended(s) {
    if (over) return;
    over = true;
    status = s;
    showLive();
    document.body.dispatchEvent(new Event("verdict-ready"));
    withTheEnd().then(() => begin(true));
  }

  async function withTheEnd() {
    if (hasEnd() || !ENDED.has(status)) return;
    const after = events.reduce((most, e) => Math.max(most, e.seq), 0);
    try {
      for (const ev of await allEvents([], `${data.events_url}?after=${after}`)) {
        if (ev.seq > after) events.push(forDiagram(ev));
      }
    } catch (err) {
      console.warn("lockviz:", err.message);
    }
    showLive();
  }

  // ---- the telling ---------------------------------------------------------------------

  // `waited`: the learner watched the live run to its end on this page.
  function begin(waited = false) {
    if (telling || !events.length) return;
    telling = true;
    events.sort((a, b) => a.seq - b.seq);
    diagram.showUpTo(0);
    diagram.addAll(events.map(forDiagram));
    diagram.reachEnd(endOf(events)); // the axis a student following this lesson draws too
    pos = 0;
    mark(data.slug, "started", data.progress_url);
    render();
    // On a projector the telling starts with the diagram at the top of the screen (under the
    // room's bar), what is above it scrolled away: 60% of a 720p screen is the diagram's.
    if (presenter.on) requestAnimationFrame(() => svg.parentElement.scrollIntoView({ block: "start" }));
    // A learner who waited for the live run and has not scrolled meanwhile is taken to the
    // walkthrough as it begins: at 1280×720 the diagram starts some 560 px down, under the
    // lesson's header and the live line, so Next ▶ would draw where nobody looks.
    else if (waited && scrollY < 8) requestAnimationFrame(() => toTheWalkthrough(svg.parentElement));
    store.refetch().then(render); // answered before in this tab, in another session
  }

  // The description and the take-away tell the outcome: shown once it has happened.
  function showAfter(atEnd) {
    if (!ui.after.hidden) return;
    if (told.pastLastAsk(pos, atEnd)) ui.after.hidden = false;
  }

  // A checkpoint's step as the narrator tells it before it is answered (the page data's events
  // come that way; live ones are made so here).
  const forDiagram = (ev) => drawnEvent("lesson", ev, hidden);

  const askAt = (p) => told.askAt(p);
  const blocked = (p) => told.blocked(p);
  const last = () => told.last();

  function go(target) {
    if (!telling) return;
    pos = Math.max(0, Math.min(last(), target));
    render();
  }

  function next(byKey) {
    if (blocked(pos)) return prompt(byKey);
    if (pos < last()) go(pos + 1);
  }

  function back() {
    if (pos > 0) go(pos - 1);
  }

  function nextSay(byKey) {
    if (blocked(pos)) return prompt(byKey);
    go(told.nextSay(pos));
  }

  function prevSay() {
    go(told.prevSay(pos));
  }

  const prompt = (byKey) => question.prompt(byKey);

  // The answer, once the server has told it: then the telling goes on to the outcome.
  function answered(index, given, at) {
    return store
      .give(index, given)
      .then((done) => {
        if (!done) return false;
        if (telling && pos === at && askAt(pos)) go(told.outcomeEnd(pos));
        else if (telling) render();
        return true;
      })
      .catch((e) => {
        ui.live.textContent = e.message;
        return false;
      });
  }

  function answer(skipped) {
    const ask = askAt(pos);
    if (!ask || answers[events[pos].index]) return;
    const picked = question.picked();
    if (picked == null && !skipped) return prompt();
    answered(events[pos].index, skipped ? { skipped: true } : { choice: picked }, pos).then((done) => {
      if (!done) return;
      if (ui.next.disabled) ui.back.focus({ preventScroll: true });
      else ui.next.focus({ preventScroll: true });
      ui.result.scrollIntoView({ block: "nearest" });
    });
  }

  function render() {
    const ev = events[pos];
    diagram.showUpTo(ev.seq);
    const found = diagram.highlight(ev.seq);
    const stepP = told.stepBefore(pos);
    const stepCount = steps.length;
    ui.position.textContent =
      `Event ${pos + 1} of ${events.length}` +
      (stepP >= 0 ? ` · step ${events[stepP].index + 1} of ${stepCount}` : "") +
      ` · t = ${(ev.t_ms / 1000).toFixed(2)} s`;
    ui.event.textContent = describe(ev);
    renderNarration(stepP);
    const ask = stepP >= 0 ? askAt(stepP) : null;
    question.show(ask, ask ? events[stepP].index : null, ask ? answers[events[stepP].index] : null);
    // A finished run ends at its last event, whatever it is (a run stored before the end was
    // always its last event may have one after it).
    const atEnd = pos === last() && (isFinal(ev) || status === "finished");
    if (atEnd && ui.end.hidden) requestAnimationFrame(() => ui.end.scrollIntoView({ block: "nearest" }));
    ui.end.hidden = !atEnd;
    showAfter(atEnd);
    if (atEnd) mark(data.slug, "done", data.progress_url);
    ui.back.disabled = ui.prevSay.disabled = pos === 0;
    ui.next.disabled = ui.nextSay.disabled = pos === last();
    ui.next.setAttribute("aria-disabled", String(blocked(pos)));
    ui.nextSay.setAttribute("aria-disabled", String(blocked(pos)));
    // Once the telling shows what it says here: a checkpoint's question makes its band taller.
    if (found.length) keepInView(found[0]);
  }

  // The current event on screen: scrolled vertically only (never sideways, where the clients
  // are), clear of the telling's band at the bottom in the presenter view.
  function keepInView(node) {
    const box = node.getBoundingClientRect();
    const band = presenter.on ? $("telling").getBoundingClientRect().top : window.innerHeight;
    if (box.bottom > band - 20) window.scrollBy(0, box.bottom - band + 80);
    else if (box.top < 20) window.scrollBy(0, box.top - 80);
  }

  function renderNarration(stepP) {
    if (stepP < 0) {
      ui.stepNo.textContent = ui.stepNo.dataset.before;
      ui.say.textContent = ui.say.dataset.before;
      return;
    }
    const ev = events[stepP];
    const step = steps[ev.index] || {};
    ui.stepNo.textContent = `Step ${ev.index + 1} of ${steps.length} · ${(step.at_ms / 1000).toFixed(1)} s · ${ev.client || ev.node || ""} ${ev.do}`;
    if (step.ask && !answers[ev.index]) ui.say.textContent = ui.say.dataset.ask;
    else ui.say.textContent = step.say || ui.say.dataset.silent;
    ui.say.classList.toggle("quiet", !step.say || Boolean(step.ask && !answers[ev.index]));
  }

  // One line for the current event, in the narrator's words (the tooltip has every field).
  function describe(ev) {
    return `#${ev.seq} · ${(ev.said && ev.said.text) || `${ev.actor} ${ev.kind}`}`;
  }

  // ---- wiring ----------------------------------------------------------------------------

  ui.next.addEventListener("click", next);
  ui.back.addEventListener("click", back);
  ui.nextSay.addEventListener("click", nextSay);
  ui.prevSay.addEventListener("click", prevSay);
  ui.checkpoint.addEventListener("submit", (e) => {
    e.preventDefault();
    answer(false);
  });
  ui.skip.addEventListener("click", () => answer(true));
  // The verdict's link to a moment (a stale write landing) goes to that event of the telling.
  document.addEventListener("click", (e) => {
    const link = e.target.closest && e.target.closest("a.moment-link[data-seq]");
    if (!link || !telling) return;
    const at = events.findIndex((ev) => ev.seq === Number(link.dataset.seq));
    if (at < 0) return;
    e.preventDefault();
    go(at);
  });
  lessonKeys(
    {
      on: () => telling,
      waiting: () => blocked(pos),
      next,
      back,
      nextSay,
      prevSay,
      answer: () => answer(false),
      pick: (n) => question.pick(n),
    },
    ui.skip,
  );

  [ui.next, ui.back, ui.nextSay, ui.prevSay].forEach((b) => {
    b.disabled = true;
  });
  showLive();
  if (SETTLED.has(status)) begin();
  else waitForRun();
  // For a presenter's room (room/showing.js): the lesson at its current event.
  const slug = location.pathname.split("/").filter(Boolean)[1];
  tell({
    // Until the telling begins the class sees nothing of the run (at 0), as the projector.
    showing: () => {
      const at = telling && events[pos] ? events[pos].seq : 0;
      const narration = telling ? told.classSees(pos) : "";
      return { view: "lesson", run: data.run, lesson: slug, at, narration, title: pageTitle() };
    },
    checkpoint: () => (told.askAt(pos) ? { run: data.run, step: events[pos].index } : null),
    // The class's poll on a checkpoint was revealed: that is this page's answer too (the
    // presenter does not answer the prediction box), and at that checkpoint the telling goes on.
    revealed: (run, step) => {
      if (run !== data.run || answers[step]) return null;
      const here = telling && askAt(pos) && events[pos].index === step ? pos : -1;
      return answered(step, { skipped: true, byClass: true }, here);
    },
  });
  return {
    diagram,
    get pos() {
      return pos;
    },
    get events() {
      return events;
    },
  };
}

function toTheWalkthrough(box) {
  if (box.getBoundingClientRect().top < innerHeight * 0.4) return; // already in sight
  const still = matchMedia("(prefers-reduced-motion: reduce)").matches;
  box.scrollIntoView({ block: "start", behavior: still ? "auto" : "smooth" });
}

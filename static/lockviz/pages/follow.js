// A student's page in a room: it shows what the presenter shows, as they show it, never more.
//
// The room's stream (/ws/rooms/<code>/) says what is on screen — a run, a lesson at its current
// event, a replay at its position — and the current question. For a lesson or a replay it also
// brings the run's events, only up to the presenter's position ({type: "events", upto}: when
// the presenter steps back, the events past `upto` are dropped); while a lesson's run still
// plays live, nothing (the projector shows nothing of it either). A live run page is followed
// on the run's own stream (/ws/runs/<id>/, runstream.js), as the presenter sees it. A late
// joiner starts from the room's state at once. "Explore alone" opens a read-only replay of the
// same run (which asks first, before the reveal); the replay page links back ("Rejoin the
// class"). A revealed question folds away once the presenter moves on.
//
// Exports `follow` {state, poll, events, shown} (the browser tests read it).

import { showBeside } from "../beside.js";
import { followDiagram, followed } from "../follow-diagram.js";
import { ClassPoll } from "../follow-poll.js";
import { pageData } from "../page-data.js";
import { presenter } from "../presenter.js";
import { openStream } from "../runstream.js";
import { startSite } from "../site.js";
import { wireZoom } from "../zoom.js";
import { dataOf, socketUrl } from "../sockets.js";
import { elements } from "../dom.js";

startSite();
wireZoom();
const data = pageData();
const $ = (id) => document.getElementById(id);
const ui = elements({
  status: "follow-status",
  title: "follow-title",
  narration: "follow-narration",
  explore: "explore",
  whatIf: "what-if",
  verdict: "follow-verdict",
  waiting: "follow-waiting",
  svg: "diagram",
});
let state = data.state || {};
let run = null; // {id, meta, events, stream, diagram, held, ended}
const poll = new ClassPoll(data.room);

// ---- the run on screen ---------------------------------------------------------------

// Followed live on the run's own stream (a run page), or up to the presenter's position on
// the room's stream (a lesson, a replay).
const streamed = (s) => s.view === "run" && s.at == null;

function open(id) {
  const mode = streamed(state) ? "stream" : "room";
  if (run && run.id === id && run.mode === mode) return;
  if (run && run.stream) run.stream.close();
  ui.verdict.innerHTML = "";
  delete ui.verdict.dataset.run;
  const svg = ui.svg.cloneNode(false); // a fresh diagram for another run
  ui.svg.replaceWith(svg);
  ui.svg = svg;
  run = { id, mode, meta: null, events: [], stream: null, diagram: null, held: -1, ended: false };
  if (!id) return;
  const mine = run;
  followed(id).then((meta) => {
    if (run !== mine) return;
    mine.meta = meta;
    mine.diagram = followDiagram(svg, meta.scenario, { fit: presenter.on ? svg.parentElement : null });
    presenter.adopt(mine.diagram, svg.parentElement);
    if (mode === "stream") {
      mine.stream = openStream(meta.ws, 0, {
        onEvent(ev) {
          take(mine, [ev]);
        },
        onStatus(status) {
          ui.status.textContent = `following · the run is ${status}`;
        },
        onDone() {
          mine.ended = true;
          render();
        },
      });
    }
    render();
  });
}

// Events for the run on screen: appended in order, each once.
function take(r, evs) {
  const steps = ((r.meta || {}).scenario || {}).steps || [];
  for (const ev of evs) {
    const last = r.events.length ? r.events[r.events.length - 1].seq : 0;
    if (ev.seq <= last) continue;
    r.events.push(spoilerFree(ev, steps));
    if (ev.kind === "run_finished" || ev.kind === "run_failed") r.ended = true;
  }
  render();
}

// The room's stream: the events up to the presenter's position, and no further.
function heldUpTo(m) {
  if (!run || run.id !== m.run || run.mode !== "room") return;
  const last = run.events.length ? run.events[run.events.length - 1].seq : 0;
  if (m.upto < last) {
    run.events = run.events.filter((e) => e.seq <= m.upto);
    run.ended = run.events.some((e) => e.kind === "run_finished" || e.kind === "run_failed");
    if (run.diagram) run.diagram.reset();
    run.held = -1;
  }
  take(run, m.events || []);
}

// A checkpoint step's narration gives its answer away: its words are the question instead
// (the diagram's margin shows the step's click, from the narrator, which tells nothing).
function spoilerFree(ev, steps) {
  const step = ev.kind === "step" ? steps[ev.index] : null;
  if (!step || !step.ask) return ev;
  const said = Object.assign({}, ev.said || {}, { text: step.ask.question });
  return Object.assign({}, ev, { say: step.ask.question, said });
}

// The diagram draws every event once and shows the run up to the presenter's position
// (showUpTo: forward or back, it costs the same, as in the replay).
function render() {
  ui.waiting.hidden = !(state.view === "lesson" && !state.at);
  poll.follow(state, run ? run.events : []);
  if (!run || !run.diagram) return;
  const upTo = state.at == null ? Infinity : state.at;
  const shown = run.events.filter((e) => e.seq <= upTo);
  for (let i = run.held + 1; i < run.events.length; i++) run.diagram.add(run.events[i]);
  run.held = run.events.length - 1;
  run.shown = shown.length;
  run.diagram.showUpTo(state.at == null ? null : state.at);
  if (state.at != null) run.diagram.highlight(state.at);
  const last = shown[shown.length - 1];
  if (last && (last.kind === "run_finished" || last.kind === "run_failed") && !ui.verdict.dataset.run) {
    ui.verdict.dataset.run = run.id;
    fetch(run.meta.verdict)
      .then((r) => r.text())
      .then((html) => {
        ui.verdict.innerHTML = html;
      });
  } else if (!(last && (last.kind === "run_finished" || last.kind === "run_failed"))) {
    ui.verdict.innerHTML = "";
    delete ui.verdict.dataset.run;
  }
  const at = state.at == null ? (last ? last.seq : "") : state.at;
  ui.explore.hidden = false;
  ui.explore.href = `${run.meta.replay}?room=${data.room}#seq=${at}`;
  ui.whatIf.hidden = !run.ended; // a fork of one's own, from this moment, once the run has ended
  ui.whatIf.href = `/runs/${run.id}/fork/?at=${at}`;
}

function apply(next) {
  state = next || {};
  // Idle: nothing on screen, or a question the presenter put to the class (its title says so).
  const idle = state.view === "idle" || !state.view;
  ui.title.textContent = idle ? state.title || "Waiting for the presenter" : state.title || "";
  ui.narration.textContent = state.narration || "";
  showBeside(state.run ? state.beside : null); // a fork's original, beside it
  if (state.run) open(state.run);
  else {
    open(null);
    ui.explore.hidden = true;
    ui.whatIf.hidden = true;
  }
  render();
}

// ---- the room's stream ---------------------------------------------------------------

function connect() {
  const socket = new WebSocket(socketUrl(data.room_ws));
  let said = ""; // the server's sentence when it refuses the stream
  socket.onopen = () => {
    ui.status.textContent = "following";
  };
  socket.onmessage = (message) => {
    const m = dataOf(message);
    if (!m) return;
    if (m.type === "error") said = m.message;
    else if (m.type === "room") {
      apply(m.state);
      poll.show(m.poll, state);
    } else if (m.type === "state") apply(m.state);
    else if (m.type === "events") heldUpTo(m);
    else if (m.type === "closed" || m.type === "removed") end(m.type);
    else if (m.type === "poll") poll.show(m.poll, state);
  };
  socket.onclose = (event) => {
    if (ended) return;
    // 4404: no open room has this code now: reconnecting would only count as guessing codes.
    // 4429: this address has its share of streams open: try again later, not every second.
    if (event.code === 4404) {
      ui.status.textContent = said || "this class is not open any more";
      return;
    }
    ui.status.textContent = event.code === 4429 && said ? said : "reconnecting…";
    setTimeout(connect, event.code === 4429 ? 30_000 : 1000);
  };
}

// The presenter closed the room, or removed this student: said once, and no reconnecting.
let ended = null;
function end(why) {
  ended = why;
  const said = $(why === "closed" ? "follow-ended" : "follow-removed");
  said.hidden = false;
  ui.status.textContent = said.querySelector("strong").textContent;
  poll.end();
}

apply(state);
connect();

export const follow = {
  get state() {
    return state;
  },
  get poll() {
    return poll.poll;
  },
  get events() {
    return run ? run.events : [];
  },
  get shown() {
    return run ? run.shown || 0 : 0;
  },
};

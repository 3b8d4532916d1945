// A student's page in a room: it shows what the presenter shows, as they show it, never more.
//
// The room's stream (/ws/rooms/<code>/) says what is on screen — a run, a lesson at its current
// event, a replay at its position — and the current question. For a lesson or a replay it also
// brings the run's events, only up to the presenter's position ({type: "events", upto}: when
// the presenter steps back, the events past `upto` are dropped); while a lesson's run still
// plays live, nothing (the projector shows nothing of it either). A live run page is followed
// on the run's own stream (/ws/runs/<id>/, run/runstream.js), as the presenter sees it. A late
// joiner starts from the room's state at once. "Explore alone" opens a read-only replay of the
// same run (which asks first, before the reveal); the replay page links back ("Rejoin the
// class"). A revealed question folds away once the presenter moves on.
//
// Exports `follow` {state, poll, events, shown, diagram, beside} (the browser tests read it).

import { besideDiagram, showBeside } from "../room/beside.js";
import { drawnEvent } from "../run/drawing.js";
import { isFinal } from "../run/extent.js";
import { drawnOn, followDiagram, followed } from "../room/followed.js";
import { ClassPoll } from "../room/poll.js";
import { pageData } from "../page-data.js";
import { presenter } from "../room/presenter.js";
import { openStream } from "../run/runstream.js";
import { startSite } from "../site.js";
import { wireZoom } from "../room/zoom.js";
import { dataOf, socketUrl } from "../sockets.js";
import { elements } from "../dom.js";

startSite();
wireZoom();
const data = pageData();
const ui = elements({
  status: "follow-status",
  title: "follow-title",
  narration: "follow-narration",
  explore: "explore",
  whatIf: "what-if",
  verdict: "follow-verdict",
  waiting: "follow-waiting",
  lanes: "follow-lanes",
  zoom: "follow-zoom",
  svg: "diagram",
});
let state = data.state || {};
let run = null; // {id, mode, kind, meta, events, stream, diagram, held, ended, endMs}
const poll = new ClassPoll(data.room);

// ---- the run on screen ---------------------------------------------------------------

// Followed live on the run's own stream (a run page), or up to the presenter's position on
// the room's stream (a lesson, a replay).
const streamed = (s) => s.view === "run" && s.at == null;

// The page the presenter draws it on decides its sizes (run/drawing.js): a lesson, a replay, a fork
// beside its original, or a run page (free play or not: follow.json says).
const pageOf = (s) => (s.view === "run" && s.beside ? "lane" : s.view);

function open(id) {
  const mode = streamed(state) ? "stream" : "room";
  const page = pageOf(state);
  if (run && run.id === id && run.mode === mode && run.page === page) return;
  if (run && run.stream) run.stream.close();
  // The same run on another page (a lesson's run, then its replay): the events it holds stay
  // (the room's stream sends only what is past them, or says where to cut them).
  const kept = id && run && run.id === id ? run : null;
  ui.verdict.innerHTML = "";
  delete ui.verdict.dataset.run;
  const svg = ui.svg.cloneNode(false); // a fresh diagram, drawn for this run on this page
  ui.svg.replaceWith(svg);
  ui.svg = svg;
  const events = kept ? kept.events : [];
  run = {
    id,
    mode,
    page,
    meta: null,
    events,
    stream: null,
    diagram: null,
    held: -1,
    ended: Boolean(kept && kept.ended),
    endMs: kept ? kept.endMs : null, // where it ends, once over (the room's `end_ms`)
  };
  if (!id) return;
  const mine = run;
  followed(id).then((meta) => {
    if (run !== mine) return;
    mine.meta = meta;
    const fit = presenter.on ? svg.parentElement : null;
    mine.diagram = followDiagram(svg, meta, drawnOn(state, meta), { fit });
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
  for (const ev of evs) {
    const last = r.events.length ? r.events[r.events.length - 1].seq : 0;
    if (ev.seq <= last) continue;
    r.events.push(ev);
    if (isFinal(ev)) r.ended = true;
  }
  render();
}

// The room's stream: the events up to the presenter's position, and no further.
function heldUpTo(m) {
  if (!run || run.id !== m.run || run.mode !== "room") return;
  const last = run.events.length ? run.events[run.events.length - 1].seq : 0;
  if (m.upto < last) {
    run.events = run.events.filter((e) => e.seq <= m.upto);
    run.ended = run.events.some(isFinal);
    if (run.diagram) run.diagram.reset();
    run.held = -1;
  }
  if (Number.isFinite(m.end_ms)) run.endMs = m.end_ms; // the run is over: where it ends
  take(run, m.events || []);
}

// The diagram draws every event once and shows the run up to the presenter's position
// (showUpTo: forward or back, it costs the same, as in the replay).
function render() {
  poll.follow(state, run ? run.events : []);
  if (!run || !run.diagram) return;
  const upTo = state.at == null ? Infinity : state.at;
  const shown = run.events.filter((e) => e.seq <= upTo);
  // As the presenter's page: every event drawn once (a lesson's checkpoint by its click and its
  // question: the server sends no narration before the reveal), then the run shown up to the
  // presenter's position.
  const fresh = run.events.slice(run.held + 1).map((ev) => drawnEvent(run.page, ev, run.meta.drawn.hidden));
  if (fresh.length) run.diagram.addAll(fresh);
  // A lesson's axis reaches the run's end, as on the projector, which holds all its events
  // (this page only those up to the presenter's position). A replay's is its page's own length.
  if (run.page === "lesson" && run.endMs) run.diagram.reachEnd(run.endMs);
  run.held = run.events.length - 1;
  run.shown = shown.length;
  run.diagram.showUpTo(state.at == null ? null : state.at);
  if (state.at != null) toMoment(run.diagram.highlight(state.at));
  else if (arrived) toTop();
  const last = shown[shown.length - 1];
  if (isFinal(last) && !ui.verdict.dataset.run) {
    ui.verdict.dataset.run = run.id;
    fetch(run.meta.verdict)
      .then((r) => r.text())
      .then((html) => {
        ui.verdict.innerHTML = html;
      });
  } else if (!isFinal(last)) {
    ui.verdict.innerHTML = "";
    delete ui.verdict.dataset.run;
  }
  const at = state.at == null ? (last ? last.seq : "") : state.at;
  ui.explore.hidden = false;
  ui.explore.href = `${run.meta.replay}?room=${data.room}#seq=${at}`;
  ui.whatIf.hidden = !run.ended; // a fork of one's own, from this moment, once the run has ended
  ui.whatIf.href = `/runs/${run.id}/fork/?at=${at}`;
}

// ---- where the student is on the page -------------------------------------------------

// A new item (another run, lesson or replay, or a question): the student starts at its top, or
// at the presenter's moment once it is drawn; within one item the moment shown is kept in view.
let arrived = false;
const itemOf = (s) => JSON.stringify([s.view || "idle", s.run, s.lesson, s.beside, s.run ? "" : s.title]);

function toTop() {
  window.scrollTo({ top: 0 });
  arrived = false;
}

function toMoment(found) {
  const node = found[0];
  if (!node) {
    if (arrived) toTop();
    return;
  }
  const box = node.getBoundingClientRect();
  if (arrived || box.top < 0 || box.bottom > window.innerHeight)
    node.scrollIntoView({ block: "center", inline: "nearest" });
  arrived = false;
}

// What the page says while it shows no diagram of a run, or a lesson whose telling has not begun.
function waitingWords() {
  if (state.view !== "lesson" || state.at) return "";
  return state.run ? ui.waiting.dataset.playing : ui.waiting.dataset.opened;
}

function apply(next) {
  const before = itemOf(state);
  state = next || {};
  if (itemOf(state) !== before) arrived = true;
  // Idle: nothing on screen, or a question the presenter put to the class (its title says so).
  const idle = state.view === "idle" || !state.view;
  ui.title.textContent = idle ? state.title || "Waiting for the presenter" : state.title || "";
  ui.narration.textContent = state.narration || "";
  ui.waiting.textContent = waitingWords();
  ui.waiting.hidden = !ui.waiting.textContent;
  // No run on screen (a question, or nothing yet): no empty diagram, and no word of the last run.
  ui.lanes.hidden = ui.zoom.hidden = !state.run;
  if (!state.run && connected) ui.status.textContent = "following";
  showBeside(state.run ? state.beside : null, state.beside ? state.run : null); // a fork's original, beside it
  if (state.run) open(state.run);
  else {
    open(null);
    ui.explore.hidden = true;
    ui.whatIf.hidden = true;
  }
  render();
  if (arrived && !state.run) toTop();
}

// ---- the room's stream ---------------------------------------------------------------

let connected = false;

function connect() {
  const socket = new WebSocket(socketUrl(data.room_ws));
  let said = ""; // the server's sentence when it refuses the stream
  socket.onopen = () => {
    connected = true;
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
    connected = false;
    ui.status.textContent = event.code === 4429 && said ? said : "reconnecting…";
    setTimeout(connect, event.code === 4429 ? 30_000 : 1000);
  };
}

// The presenter closed the room, or removed this student: said once, and no reconnecting.
let ended = null;
function end(why) {
  ended = why;
  const said = document.getElementById(why === "closed" ? "follow-ended" : "follow-removed");
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
  get diagram() {
    return run ? run.diagram : null;
  },
  get beside() {
    return besideDiagram();
  },
};

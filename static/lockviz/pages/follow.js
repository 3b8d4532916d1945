// A student's page in a room: it shows what the presenter shows, as they show it.
//
// The room's stream (/ws/rooms/<code>/) says what is on screen — a run, a lesson at its current
// event, a replay at its position — and the current question. The run's own stream
// (/ws/runs/<id>/, runstream.js) brings its events; the diagram holds exactly those up to the
// presenter's position (all of them while a run streams live). A late joiner starts from the
// room's state at once. "Explore alone" opens a read-only replay of the same run; the replay
// page links back ("Rejoin the class").
//
// Exports `follow` {state, poll, events, shown} (the browser tests read it).

import { showBeside } from "../beside.js";
import { LockDiagram } from "../diagram/diagram.js";
import { pageData } from "../page-data.js";
import { presenter } from "../presenter.js";
import { openStream } from "../runstream.js";
import { startSite } from "../site.js";
import { wireZoom } from "../zoom.js";
import { dataOf, socketUrl } from "../sockets.js";

startSite();
wireZoom();
const data = pageData();
const $ = (id) => document.getElementById(id);
const csrf = document.querySelector("#vote-form input[name=csrfmiddlewaretoken]");
const ui = {
  status: $("follow-status"),
  title: $("follow-title"),
  narration: $("follow-narration"),
  explore: $("explore"),
  whatIf: $("what-if"),
  verdict: $("follow-verdict"),
  svg: $("diagram"),
  poll: $("follow-poll"),
  question: document.querySelector("#follow-poll .poll-question"),
  choices: document.querySelector("#follow-poll .choices"),
  note: document.querySelector("#follow-poll .poll-note"),
  reveal: document.querySelector("#follow-poll .poll-reveal"),
};
let state = data.state || {};
let run = null; // {id, meta, events, stream, diagram, held, ended}
let poll = null;

// ---- the run on screen ---------------------------------------------------------------

function durationOf(s) {
  const steps = Array.isArray(s.steps) ? s.steps : [];
  return Math.max(0, ...steps.map((st) => (st.at_ms || 0) + (st.do === "pause" ? st.ms || 0 : 0))) + 800;
}

function open(id) {
  if (run && run.id === id) return;
  if (run && run.stream) run.stream.close();
  ui.verdict.innerHTML = "";
  const svg = ui.svg.cloneNode(false); // a fresh diagram for another run
  ui.svg.replaceWith(svg);
  ui.svg = svg;
  run = { id, meta: null, events: [], stream: null, diagram: null, held: -1, ended: false };
  if (!id) return;
  const mine = run;
  fetch(`/runs/${id}/follow.json`)
    .then((r) => r.json())
    .then((meta) => {
      if (run !== mine) return;
      mine.meta = meta;
      const durationMs = durationOf(meta.scenario || {});
      mine.diagram = new LockDiagram(svg, {
        clients: (meta.scenario || {}).clients,
        durationMs,
        backend: (meta.scenario || {}).backend,
        pxPerMs: Math.min(0.4, Math.max(0.12, 820 / durationMs)),
        columnWidth: 160,
        narrationWidth: 205,
        fit: presenter.on ? svg.parentElement : null,
      });
      presenter.adopt(mine.diagram, svg.parentElement);
      const steps = (meta.scenario || {}).steps || [];
      mine.stream = openStream(meta.ws, 0, {
        onEvent(ev) {
          mine.events.push(spoilerFree(ev, steps));
          if (ev.kind === "run_finished" || ev.kind === "run_failed") mine.ended = true;
          render();
        },
        onStatus(status) {
          ui.status.textContent = `following · the run is ${status}`;
        },
        onDone() {
          mine.ended = true;
          render();
        },
      });
      render();
    });
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
  ui.title.textContent = state.view === "idle" || !state.view ? "Waiting for the presenter" : state.title || "";
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

// ---- the question --------------------------------------------------------------------

function showPoll(p) {
  poll = p;
  ui.poll.hidden = !p;
  if (!p) return;
  ui.question.textContent = p.question;
  ui.choices.innerHTML = "";
  const open = p.state === "open";
  for (const choice of p.choices) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "choice" + (p.mine === choice ? " mine" : "");
    button.textContent = choice;
    button.disabled = !open;
    button.setAttribute("aria-pressed", String(p.mine === choice));
    button.addEventListener("click", () => vote(choice));
    ui.choices.appendChild(button);
  }
  ui.note.textContent = open
    ? p.mine
      ? "Your answer is in; you can change it until the reveal."
      : "Pick one: the class's answers stay hidden until the reveal."
    : "";
  ui.reveal.hidden = open;
  if (!open) {
    ui.reveal.querySelector(".poll-answer").textContent = p.answer ? `The answer: ${p.answer}` : "The class answered:";
    ui.reveal.querySelector(".poll-explain").textContent = p.explain || "";
    const bars = ui.reveal.querySelector(".bars");
    bars.innerHTML = "";
    const total = Math.max(1, ...Object.values(p.counts || {}));
    for (const choice of p.choices) {
      const n = (p.counts || {})[choice] || 0;
      const li = document.createElement("li");
      li.className = choice === p.answer ? "right" : "";
      li.innerHTML =
        '<span class="bar-label"></span> <span class="bar"><span class="fill"></span></span> <span class="n"></span>';
      li.querySelector(".bar-label").textContent = choice;
      li.querySelector(".fill").style.width = `${(100 * n) / total}%`;
      li.querySelector(".n").textContent = String(n);
      bars.appendChild(li);
    }
  }
}

function vote(choice) {
  const form = new FormData();
  form.append("choice", choice);
  fetch(`/rooms/${data.room}/polls/${poll.id}/vote`, {
    method: "POST",
    body: form,
    headers: { "X-CSRFToken": csrf ? csrf.value : "" },
  }).then(async (r) => {
    if (!r.ok) {
      ui.note.textContent = await r.text();
      return;
    }
    showPoll((await r.json()).poll);
  });
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
      showPoll(m.poll);
    } else if (m.type === "state") apply(m.state);
    else if (m.type === "poll")
      showPoll(Object.assign({}, m.poll, { mine: poll && poll.id === m.poll.id ? poll.mine : null }));
  };
  socket.onclose = (event) => {
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

apply(state);
connect();

export const follow = {
  get state() {
    return state;
  },
  get poll() {
    return poll;
  },
  get events() {
    return run ? run.events : [];
  },
  get shown() {
    return run ? run.shown || 0 : 0;
  },
};

// The run page (templates/lockviz/run.html): stream the run's events over the WebSocket into the
// sequence diagram, through run/runstream.js (reconnects, gaps and resumes: nothing lost, nothing
// twice). In the presenter view the diagram takes the page's width at a size a room can read,
// and follows the latest moment while the run streams (room/presenter.js). The browser that started
// a live run gets the fault menus, opened from the lifeline headers while the run is running.
//
// Exports `run` {diagram, stream, lastSeq}: what this page built (the browser tests read it).

import { LockDiagram } from "../diagram/diagram.js";
import { drawingOf } from "../run/drawing.js";
import { startExports } from "../run/export.js";
import { isFinal } from "../run/extent.js";
import { faultControls } from "../run/fault-controls.js";
import { pageData } from "../page-data.js";
import { presenter } from "../room/presenter.js";
import { ENDED, openStream, SETTLED } from "../run/runstream.js";
import { pageTitle, tell } from "../room/showing.js";
import { startSite } from "../site.js";
import { untilJudged } from "../run/verdict-fetch.js";

const data = pageData();
// The stream first: its socket opens while the page builds its diagram and wires the site (its
// handlers run only once the rest of this module has, when the first message comes).
const stream = openStream(data.ws, 0, {
  onEvent,
  onStatus(status, position) {
    // The status comes after the verdict is stored: only then is it there to fetch.
    if (SETTLED.has(status)) {
      document.body.dispatchEvent(new Event("verdict-ready"));
    }
    if (!finished) setStatus(status, position);
  },
  onError(message) {
    console.warn("lockviz:", message);
  },
});

startSite();
// A verdict fetched once the run has ended, asked for again while it still says it is going.
for (const slot of document.querySelectorAll('[hx-trigger="verdict-ready from:body"]')) {
  untilJudged(slot, () => document.body.dispatchEvent(new Event("verdict-ready")));
}
const runId = data.run;
const scenario = data.scenario;
const nodes = data.nodes;
const statusEl = document.getElementById("run-status");
const serversEl = document.getElementById("servers");
const svg = document.getElementById("diagram");
// every lifeline from the start: nothing moves when the servers' first events arrive
const diagram = new LockDiagram(svg, {
  ...drawingOf("run", { scenario, nodes }),
  fit: presenter.on ? svg.parentElement : null,
});
const story = document.getElementById("story");
let lastSeq = 0;
let finished = false;

function setStatus(status, position) {
  statusEl.dataset.status = status;
  statusEl.textContent =
    status === "queued" && position
      ? `waiting for the lab (place ${position} in the queue)`
      : status === "reconnecting"
        ? "reconnecting…"
        : status;
}

function onEvent(event) {
  if (event.seq <= lastSeq) return;
  lastSeq = event.seq;
  if (event.kind === "run_started" && event.servers) {
    serversEl.textContent =
      "Servers for this run: " +
      Object.entries(event.servers)
        .map(([name, addr]) => `${name} ${addr}`)
        .join(" · ");
  }
  diagram.add(event);
  if (event.kind === "step" && story) {
    story.querySelectorAll("li.current").forEach((li) => li.classList.remove("current"));
    const li = story.querySelector(`li[data-step="${event.index}"]`);
    if (li) li.classList.add("reached", "current");
  }
  if (isFinal(event)) {
    finished = true;
    setStatus(event.kind === "run_finished" ? "finished" : "failed");
  }
  presenter.follow(diagram, finished);
}

// The verdict's links to a moment ("see it at the storage") show that moment in the diagram when
// it is drawn here, instead of opening the replay.
document.addEventListener("click", (e) => {
  const link = e.target.closest && e.target.closest("a.moment-link[data-seq]");
  if (!link) return;
  const found = diagram.highlight(Number(link.dataset.seq));
  if (!found.length) return; // not drawn here: the link opens the replay at that moment
  e.preventDefault();
  found[0].scrollIntoView({ block: "center", behavior: "smooth" });
});

// The fault menus (the browser that started a live run): live once the lab has started the run
// (its run_started event), until it ends; the lifeline headers open them meanwhile.
function faultMenus(controls) {
  const onHeader = (name, role, element) => controls.toggle(name, element);
  const started = () => diagram.events.some((e) => e.kind === "run_started");
  let was = null;
  const update = () => {
    const status = statusEl.dataset.status;
    const on = status === "running" && started();
    const state = on ? "live" : ENDED.has(status) ? "ended" : "waiting";
    if (state === was) return;
    const headersChange = on || was === "live";
    was = state;
    controls.setLive(on, state === "ended");
    if (headersChange) diagram.setHeaderAction(on ? onHeader : null);
  };
  new MutationObserver(update).observe(statusEl, { attributes: true, attributeFilter: ["data-status"] });
  // onEvent fills in the servers' line on run_started
  new MutationObserver(update).observe(serversEl, { childList: true, characterData: true, subtree: true });
  update();
}

const controlsRoot = document.getElementById("fault-controls");
if (controlsRoot) faultMenus(faultControls(controlsRoot));
presenter.adopt(diagram, svg.parentElement);
startExports({ diagram: () => diagram });
tell({ showing: () => ({ view: "run", run: runId, at: null, title: pageTitle() }) });

export const run = {
  diagram,
  stream,
  get lastSeq() {
    return lastSeq;
  },
};

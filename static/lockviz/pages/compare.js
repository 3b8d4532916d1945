// Side by side: one live diagram per run, each streaming over its own WebSocket (runstream.js).
// Every lane gets the SAME pxPerMs and duration, and every svg is shown at the SAME on-screen
// scale, so one moment of the runs sits at one height across the lanes.
//
// Exports `compare` {views} when lanes are shown (the browser tests read it).

import { LockDiagram } from "../diagram/diagram.js";
import { pageData } from "../page-data.js";
import { openStream } from "../runstream.js";
import { pageTitle, tell } from "../showing.js";
import { startSite } from "../site.js";

startSite();
const lanes = pageData().lanes || [];
const durationMs = Math.max(...lanes.map((lane) => lane.duration_ms || 4000)) + 800;
const pxPerMs = Math.min(0.2, Math.max(0.05, 700 / durationMs));
const container = document.getElementById("lanes");
const MIN_SCALE = 0.65; // below this the labels get too small to read: scroll instead
const hint = document.getElementById("lanes-hint");

const views = lanes.map((lane) => {
  const root = document.getElementById("lane-" + lane.run);
  const svg = document.getElementById("diagram-" + lane.run);
  const diagram = new LockDiagram(svg, {
    clients: lane.clients.length ? lane.clients : undefined,
    nodes: lane.nodes.length ? lane.nodes : undefined,
    storage: "storage",
    durationMs,
    pxPerMs,
    columnWidth: 120,
    narrationWidth: 140,
  });
  for (const mark of lane.marks || []) diagram.markTime(mark.t_ms, mark.label); // where a fork parts
  const statusEl = root.querySelector(".lane-status");
  const verdictEl = root.querySelector(".lane-verdict");
  const view = { lane, diagram, count: 0, status: lane.status };

  function showStatus(position) {
    const n = view.count;
    statusEl.dataset.status = view.status;
    statusEl.textContent =
      view.status === "queued" && position
        ? `waiting for the lab (place ${position})`
        : view.status === "running" || view.status === "reconnecting"
          ? `${view.status} live… (${n} events)`
          : view.status;
  }

  openStream(lane.ws, 0, {
    onEvent(ev) {
      view.count += 1;
      const width = diagram.width;
      diagram.add(ev);
      if (diagram.width !== width) fit();
      showStatus();
    },
    onStatus(status, position) {
      view.status = status;
      showStatus(position);
    },
    onDone(status) {
      view.status = status;
      showStatus();
      root.dataset.done = status;
      verdictEl.dispatchEvent(new Event("lane-done")); // htmx fetches the lane's verdict
    },
    onError(message) {
      statusEl.textContent = `cannot follow this run: ${message}`;
    },
  });
  return view;
});

// One scale for all lanes: as large as fits, never below MIN_SCALE (the row scrolls then).
function fit() {
  const gap = parseFloat(getComputedStyle(container).columnGap) || 0;
  const natural = views.reduce((sum, v) => sum + v.diagram.width, 0);
  const room = container.parentElement.clientWidth - gap * (views.length - 1) - 2 * views.length;
  const scale = Math.max(MIN_SCALE, Math.min(1, room / natural));
  for (const v of views) {
    const svg = v.diagram.svg;
    svg.style.width = `${Math.floor(v.diagram.width * scale)}px`;
    svg.style.minWidth = "0";
    svg.style.maxWidth = "none";
  }
  const scroller = container.parentElement;
  if (hint) hint.hidden = scroller.scrollWidth <= scroller.clientWidth + 1;
}

if (views.length) {
  fit();
  window.addEventListener("resize", fit);
  // side by side: the class follows the last lane (a fork shown)
  const last = lanes[lanes.length - 1];
  tell({ showing: () => ({ view: "run", run: last.run, at: null, title: pageTitle() }) });
}

export const compare = views.length ? { views } : null;

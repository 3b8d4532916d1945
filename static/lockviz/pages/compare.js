// Side by side: one live diagram per run, each streaming over its own WebSocket (run/runstream.js).
// Every lane gets the SAME pxPerMs and duration, and every svg is shown at the SAME on-screen
// scale, so one moment of the runs sits at one height across the lanes. Lanes side by side
// that would not fit in full are drawn compact (layout.js LANE: step numbers without
// captions, narrow margins), each in its share of the width at 1:1, while their text is at
// least 12 px on screen; otherwise they are stacked, each whole, never cut. A fork shown
// beside its original opens where the two part (the start one click away).
//
// Exports `compare` {views} when lanes are shown (the browser tests read it).

import { LockDiagram } from "../diagram/diagram.js";
import { drawingOf } from "../run/drawing.js";
import { lanesDurationMs } from "../run/extent.js";
import { Layout, MIN_TEXT_SCALE, columns, fitScale } from "../diagram/layout.js";
import { pageData } from "../page-data.js";
import { openStream } from "../run/runstream.js";
import { pageTitle, tell } from "../room/showing.js";
import { startSite } from "../site.js";
import { untilJudged } from "../run/verdict-fetch.js";

startSite();
const lanes = pageData().lanes || [];
const durationMs = lanesDurationMs(lanes);
const container = document.getElementById("lanes");
const hint = document.getElementById("lanes-hint");

const views = lanes.map((lane) => {
  const root = document.getElementById("lane-" + lane.run);
  const svg = document.getElementById("diagram-" + lane.run);
  const diagram = new LockDiagram(
    svg,
    drawingOf("lane", { scenario: { clients: lane.clients }, nodes: lane.nodes, durationMs }),
  );
  for (const mark of lane.marks || []) diagram.markTime(mark.t_ms, mark.label); // where a fork parts
  const statusEl = root.querySelector(".lane-status");
  const verdictEl = root.querySelector(".lane-verdict");
  const view = { lane, diagram, count: 0, status: lane.status };
  untilJudged(verdictEl, () => verdictEl.dispatchEvent(new Event("lane-done")));
  // A verdict, fetched once its run ended, may make the lanes' heads taller: the moment they
  // part stays where the page keeps it (it was seen 57 px lower once the fork's came).
  verdictEl.addEventListener("htmx:afterSwap", () => {
    if (keepParting) toParting();
  });

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
      if (keepParting) toParting();
      verdictEl.dispatchEvent(new Event("lane-done")); // htmx fetches the lane's verdict
    },
    onError(message) {
      statusEl.textContent = `cannot follow this run: ${message}`;
    },
  });
  return view;
});

// Side by side in full where their full layouts fit their shares of the width; else side by
// side, compact, at one scale for all lanes (the largest at which every lane fits its share),
// if that keeps their text at least 12 px; otherwise stacked, drawn in full and each shrunk
// to the page's width if need be.
function fit() {
  const gap = parseFloat(getComputedStyle(container).columnGap) || 0;
  const width = container.parentElement.clientWidth;
  const share = Math.floor((width - gap * (views.length - 1)) / views.length) - 2; // minus the lane's border
  const drawn = pageScale(views[0].diagram.svg); // 1.3 in the presenter view
  const scale = Math.min(
    ...views.map((v) => {
      const d = v.diagram;
      return fitScale(columns(d.options, d.run, d.found).length, drawn, share, 0, true);
    }),
  );
  // A screen wide enough for the full layouts side by side keeps them, captions and all.
  const whole = views.every((v) => {
    const d = v.diagram;
    return new Layout({ ...d.options, lane: null }, d.run, d.found, { scale: drawn }).width <= share;
  });
  const beside = views.length > 1 && (whole || scale >= MIN_TEXT_SCALE);
  const lane = beside && !whole ? { width: share, scale } : null;
  for (const v of views) {
    if (JSON.stringify(v.diagram.options.lane || null) === JSON.stringify(lane)) continue;
    v.diagram.options.lane = lane;
    v.diagram.relayout();
  }
  const stacked = views.length > 1 && !beside;
  container.classList.toggle("stacked", stacked);
  const widest = Math.max(...views.map((v) => v.diagram.width));
  const shrink = beside ? 1 : Math.min(1, (width - 2) / widest);
  for (const v of views) {
    const svg = v.diagram.svg;
    svg.style.width = `${Math.floor(v.diagram.width * shrink)}px`;
    svg.style.minWidth = "0";
    svg.style.maxWidth = "none";
  }
  if (hint) hint.hidden = !stacked;
  if (keepParting) toParting();
}

// The page's --diagram-scale for this svg, without the one its diagram set for itself.
function pageScale(svg) {
  const own = svg.style.getPropertyValue("--diagram-scale");
  svg.style.removeProperty("--diagram-scale");
  const scale = parseFloat(getComputedStyle(svg).getPropertyValue("--diagram-scale")) || 1;
  if (own) svg.style.setProperty("--diagram-scale", own);
  return scale;
}

// Where a fork parts from its original: kept on screen as the lanes grow, until the learner
// moves the page themselves.
let keepParting = Boolean(document.getElementById("lanes-tools"));

function toParting() {
  const line = container.querySelector(".time-mark-line");
  if (!line) return;
  const top = line.getBoundingClientRect().top;
  window.scrollTo({ top: window.scrollY + top - window.innerHeight * 0.4 });
}

function wireTools() {
  const stop = () => {
    keepParting = false;
  };
  for (const type of ["wheel", "touchstart", "keydown"]) window.addEventListener(type, stop, { passive: true });
  const parting = document.getElementById("lanes-parting");
  const start = document.getElementById("lanes-start");
  if (parting)
    parting.addEventListener("click", () => {
      keepParting = false;
      toParting();
    });
  if (start)
    start.addEventListener("click", () => {
      keepParting = false;
      const bar = document.getElementById("lanes-tools");
      const top = container.getBoundingClientRect().top + window.scrollY - bar.offsetHeight - 8;
      window.scrollTo({ top: Math.max(0, top) });
    });
}

if (views.length) {
  wireTools();
  fit();
  window.addEventListener("resize", fit);
  // side by side: the class follows the last lane (a fork shown), its original beside it
  const last = lanes[lanes.length - 1];
  const forked = lanes.length > 1 && (last.marks || []).length > 0; // a fork and its original
  const beside = forked ? lanes[0].run : null;
  tell({ showing: () => ({ view: "run", run: last.run, beside, at: null, title: pageTitle() }) });
}

export const compare = views.length ? { views } : null;

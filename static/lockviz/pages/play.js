// The free-play page (templates/lockviz/play.html): before a session, its setup form (Redlock
// cannot fence: the fencing box follows the backend chosen; only the chosen backend's variants
// are shown); during one, the session's live
// diagram beside its fault panels (run/fault-controls.js), each lifeline header taking you to its
// panel, and the page following the latest moment unless told not to.
//
// Exports `session` {diagram} while a session is shown (the browser tests read it).

import { LockDiagram } from "../diagram/diagram.js";
import { drawingOf } from "../run/drawing.js";
import { NO_CONTROLS, faultControls } from "../run/fault-controls.js";
import { pageData } from "../page-data.js";
import { presenter } from "../room/presenter.js";
import { ENDED, openStream } from "../run/runstream.js";
import { pageTitle, tell } from "../room/showing.js";
import { startSite } from "../site.js";
import { untilJudged } from "../run/verdict-fetch.js";

startSite();
// A verdict fetched once the run has ended, asked for again while it still says it is going.
for (const slot of document.querySelectorAll('[hx-trigger="verdict-ready from:body"]')) {
  untilJudged(slot, () => document.body.dispatchEvent(new Event("verdict-ready")));
}

function startSession(controls, data) {
  const statusEl = document.getElementById("run-status");
  const finishButton = document.getElementById("finish-button");
  const follow = document.getElementById("follow");
  const svg = document.getElementById("diagram");
  // Below ~70 % of its size the diagram scrolls sideways instead of shrinking out of legibility.
  const scenario = { clients: data.clients, backend: data.backend };
  const diagram = new LockDiagram(svg, {
    ...drawingOf("play", { scenario, nodes: data.nodes }),
    onHeader: controls === NO_CONTROLS ? null : (name) => controls.show(name),
    fit: presenter.on ? svg.parentElement : null,
  });
  presenter.adopt(diagram, svg.parentElement);
  svg.style.minWidth = `${Math.round(Number(svg.getAttribute("width")) * 0.7)}px`;

  let started = false,
    current = data.status;
  function setStatus(status, position) {
    current = status;
    statusEl.dataset.status = status;
    statusEl.textContent =
      status === "queued" && position
        ? `waiting for the lab (place ${position} in the queue)`
        : status === "running"
          ? started
            ? "running: your move"
            : "starting the servers…"
          : status;
    const on = status === "running" && started;
    if (status !== "reconnecting") {
      controls.setLive(on, ENDED.has(status));
      if (finishButton) finishButton.disabled = !on;
    }
  }

  function keepNowInView() {
    if (!follow || !follow.checked) return;
    const now = svg.querySelector("line.now");
    if (!now || now.style.display === "none") return;
    const r = now.getBoundingClientRect();
    if (r.bottom > window.innerHeight - 60) window.scrollBy({ top: r.bottom - window.innerHeight + 200 });
  }

  openStream(data.ws, 0, {
    onEvent(ev) {
      diagram.add(ev);
      if (ev.kind === "run_started") {
        started = true;
        setStatus(current);
      }
      keepNowInView();
    },
    onStatus(status, position) {
      if (!ENDED.has(status)) setStatus(status, position);
    },
    onDone(status) {
      setStatus(status);
      document.body.dispatchEvent(new Event("verdict-ready"));
    },
    onError(message) {
      console.warn("lockviz:", message);
    },
  });
  return { diagram };
}

function wireSetup(form) {
  if (form.dataset.wired) return;
  form.dataset.wired = "yes";
  const fencing = form.querySelector("#play-fencing");
  const notes = form.querySelectorAll(".no-fencing-note");
  const variants = form.querySelectorAll(".variant-choice");
  let wanted = fencing.checked;
  const sync = () => {
    const chosen = form.querySelector("input[name=backend]:checked");
    const name = chosen ? chosen.value : "";
    variants.forEach((choice) => (choice.hidden = choice.dataset.backend !== name));
    let forced = false;
    notes.forEach((note) => {
      const on = note.dataset.backend === name;
      note.hidden = !on;
      forced = forced || on;
    });
    if (forced && !fencing.disabled) wanted = fencing.checked;
    fencing.disabled = forced;
    fencing.checked = forced ? false : wanted;
  };
  form.addEventListener("change", (e) => {
    if (e.target.name === "backend") sync();
  });
  sync();
}

const setupForm = document.getElementById("play-form");
if (setupForm) wireSetup(setupForm);
// The setup form comes back from htmx after a refusal: wire the new one.
document.addEventListener("htmx:afterSettle", () => {
  const form = document.getElementById("play-form");
  if (form) wireSetup(form);
});

const controlsRoot = document.getElementById("fault-controls");
const data = pageData().run ? pageData() : null;
export const session = data ? startSession(controlsRoot ? faultControls(controlsRoot) : NO_CONTROLS, data) : null;
if (data) tell({ showing: () => ({ view: "run", run: data.run, at: null, title: pageTitle() }) });

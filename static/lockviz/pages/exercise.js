// An exercise (templates/lockviz/exercise.html): a break's rows are the shared step row editor
// (editor/step-rows.js), added and removed here; the attempt's run streams into its diagram. Whether
// the attempt solved the exercise is the server's to say: its partial asks for itself until
// the run's verdict decides it (htmx), and is asked again as soon as the run settles.
//
// Exports `exercise` {diagram, stream, rows}: what this page built (the browser tests read it).

import { LockDiagram } from "../diagram/diagram.js";
import { drawingOf } from "../run/drawing.js";
import { pageData } from "../page-data.js";
import { openStream, SETTLED } from "../run/runstream.js";
import { startSite } from "../site.js";
import { fit, place, removable, startRows } from "../editor/step-rows.js";

startSite();
const data = pageData();
const box = document.getElementById("exercise-rows");
const count = document.getElementById("exercise-row-count");

function rows() {
  return box ? [...box.querySelectorAll(".step-row")] : [];
}

function renumber() {
  rows().forEach((row, index) => place(row, index, (i) => `step ${i + 1}`));
  if (count) count.value = String(rows().length);
}

function armRemove(row) {
  removable(row, { renumber, instead: "exercise-add" });
}

function addRow() {
  if (rows().length >= Number(box.dataset.max || 30)) return;
  const blank = document.getElementById("exercise-blank-row");
  const row = blank.content.firstElementChild.cloneNode(true);
  box.append(row);
  renumber();
  fit(row, data.verbs);
  armRemove(row);
  row.querySelector("input").focus();
}

if (box) {
  startRows(box, data.verbs);
  rows().forEach(armRemove);
  document.getElementById("exercise-add").addEventListener("click", addRow);
}

let diagram = null;
let stream = null;
const svg = document.getElementById("diagram");
if (svg && data.run && data.scenario) {
  diagram = new LockDiagram(svg, drawingOf("exercise", { scenario: data.scenario, nodes: data.nodes }));
  const statusEl = document.getElementById("run-status");
  let lastSeq = 0;
  stream = openStream(data.ws, 0, {
    onEvent(event) {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
      diagram.add(event);
    },
    onStatus(status) {
      if (statusEl) {
        statusEl.dataset.status = status;
        statusEl.textContent = status;
      }
      const result = document.getElementById("attempt-result");
      // The verdict is stored before the status says so: ask for the judged attempt now.
      if (SETTLED.has(status) && result && result.dataset.outcome === "pending") {
        result.dispatchEvent(new Event("settled"));
      }
    },
    onError(message) {
      console.warn("lockviz:", message);
    },
  });
}

export const exercise = { diagram, stream, rows };

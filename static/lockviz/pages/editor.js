// New scenario: the settings show only the chosen lock service's own fields; the steps are the
// shared step row editor (editor/step-rows.js), with rows added from the page's template row and
// removed. The server checks the form as the learner types (htmx on the form, debounced) and
// answers with the problems by row; this script only keeps the rows numbered 0..n-1.

import { pageData } from "../page-data.js";
import { startSite } from "../site.js";
import { fit, place, removable, startRows } from "../editor/step-rows.js";

startSite();
const verbs = pageData().verbs;
const form = document.getElementById("editor-form");
const box = document.getElementById("editor-rows");
const count = document.getElementById("editor-row-count");
const backend = document.getElementById("editor-backend");
const legend = (index) => `step ${index + 1}`;

function showBackend() {
  for (const set of form.querySelectorAll(".backend-settings")) {
    set.hidden = set.dataset.backend !== backend.value;
  }
}

function rows() {
  return [...box.querySelectorAll(".step-row")];
}

function renumber() {
  rows().forEach((row, index) => place(row, index, legend));
  count.value = String(rows().length);
}

function recheck() {
  form.dispatchEvent(new Event("change", { bubbles: true }));
}

function addRow() {
  if (rows().length >= Number(box.dataset.max || 60)) return;
  const row = document.getElementById("editor-blank-row").content.firstElementChild.cloneNode(true);
  box.append(row);
  renumber();
  fit(row, verbs);
  armRemove(row);
  row.querySelector("input").focus();
}

function armRemove(row) {
  removable(row, {
    renumber,
    instead: "editor-add",
    removed() {
      // A check still on its way answers for the rows as they were: its answer is not swapped
      // in (below), and the recheck asks again (queued after it: hx-sync="this:queue last").
      removals += 1;
      recheck();
    },
  });
}

export const editor = { form, rows, addRow };

// A check sent before a row was removed answers with a problem slot per row as they were: its
// answer is dropped (a newer check follows), or htmx would look for the removed row's slot.
// htmx says "before swap" on the answer's target (outside the form), not on the form.
let removals = 0;
const sentAt = new WeakMap();

if (form) {
  form.addEventListener("htmx:beforeRequest", (event) => sentAt.set(event.detail.xhr, removals));
  document.getElementById("editor-result").addEventListener("htmx:beforeSwap", (event) => {
    const sent = sentAt.get(event.detail.xhr);
    if (sent !== undefined && sent !== removals) event.detail.shouldSwap = false;
  });
  startRows(box, verbs);
  showBackend();
  backend.addEventListener("change", showBackend);
  for (const row of rows()) armRemove(row);
  document.getElementById("editor-add").addEventListener("click", (event) => {
    event.preventDefault();
    addRow();
  });
}

// The lecture plan editor (templates/lockviz/plan_edit.html): items as rows of a form, each a
// fieldset whose fields are named items-<i>-<field>; the server reads them in the order of i and
// names each problem by its item's number. This module adds, removes and reorders rows (buttons,
// so the keyboard reaches them; focus stays on the row moved, and a live region says where it
// went), shows the fields of the kind chosen, and numbers the rows again after each change.

import { pageData } from "../page-data.js";
import { startSite } from "../site.js";

startSite();
const most = Number(pageData().most) || 30;
const $ = (id) => document.getElementById(id);
const rows = $("plan-rows");
const template = $("plan-row-template");
const said = $("plan-moved");
const NAMED = /items-(\d+|__i__)-/;

function allRows() {
  return [...rows.querySelectorAll(":scope > .plan-row")];
}

// Row k's fields are items-k-…; its legend and its buttons' words say item k+1.
function renumber() {
  allRows().forEach((row, k) => {
    for (const el of row.querySelectorAll("[name], [id], label[for], [aria-describedby]")) {
      for (const attr of ["name", "id", "for", "aria-describedby"]) {
        const value = el.getAttribute(attr);
        if (value && NAMED.test(value)) el.setAttribute(attr, value.replace(NAMED, `items-${k}-`));
      }
    }
    const described = row.getAttribute("aria-describedby");
    if (described) row.setAttribute("aria-describedby", described.replace(NAMED, `items-${k}-`));
    row.querySelector(".row-number").textContent = String(k + 1);
    for (const hidden of row.querySelectorAll(".row-moves .visually-hidden")) hidden.textContent = ` item ${k + 1}`;
  });
  const full = allRows().length >= most;
  $("add-item").disabled = full;
  $("add-item").title = full ? `A plan has at most ${most} items` : "";
}

function showKind(row) {
  const kind = row.querySelector(".row-kind").value;
  row.dataset.kind = kind;
  for (const part of row.querySelectorAll(".kind-fields")) part.hidden = part.dataset.for !== kind;
}

function announce(text) {
  said.textContent = text;
}

rows.addEventListener("change", (event) => {
  if (event.target.classList.contains("row-kind")) showKind(event.target.closest(".plan-row"));
});

rows.addEventListener("click", (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  const row = button.closest(".plan-row");
  const list = allRows();
  const at = list.indexOf(row);
  if (button.classList.contains("row-up") && at > 0) {
    rows.insertBefore(row, list[at - 1]);
    renumber();
    button.focus();
    announce(`Item moved up: it is item ${at} now.`);
  } else if (button.classList.contains("row-down") && at < list.length - 1) {
    rows.insertBefore(list[at + 1], row);
    renumber();
    button.focus();
    announce(`Item moved down: it is item ${at + 2} now.`);
  } else if (button.classList.contains("row-remove")) {
    row.remove();
    renumber();
    const next = allRows()[Math.min(at, allRows().length - 1)];
    (next ? next.querySelector(".row-kind") : $("add-item")).focus();
    announce(`Item ${at + 1} removed.`);
  }
});

$("add-item").addEventListener("click", () => {
  if (allRows().length >= most) return;
  const row = template.content.firstElementChild.cloneNode(true);
  rows.appendChild(row);
  renumber();
  showKind(row);
  row.querySelector(".row-kind").focus();
  announce(`Item ${allRows().length} added.`);
});

allRows().forEach(showKind);
renumber();
const problems = $("plan-problems");
if (problems) problems.focus();

export const editor = { rows: allRows, renumber };

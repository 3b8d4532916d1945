// The step row editor, shared by What if…? (pages/fork.js), New scenario (pages/editor.js) and an
// exercise's break (pages/exercise.js):
// each row (templates/lockviz/_step_row.html) shows only the fields its verb takes, from the one
// step vocabulary (lockviz/scenarios/verbs.py, handed over as the page data's verbs); a row
// without a verb yet shows only when, what and who. Rows can be added from a template row and
// removed, and the rows after a removed one are numbered again so the form stays 0..n-1.
// Without this script every field shows, and the server ignores those the verb does not take.

/** The fields a row for `verb` shows: those the verb takes (none for no verb or an unknown one). */
export function takes(verbs, verb) {
  return (verbs && verbs[verb]) || [];
}

/** A form field's name moved to row `index`: "ms_3" becomes "ms_5"; other names stay. */
export function renamed(name, index) {
  const found = /^(.+)_(\d+|__i__)$/.exec(name || "");
  return found ? `${found[1]}_${index}` : name;
}

/** An id or a reference to one moved to row `index`: "editor-row-3-problem" → "editor-row-5-problem". */
export function reindexed(id, index) {
  return (id || "").replace(/-row-(\d+|__i__)(?=-|$)/, `-row-${index}`);
}

/** Show `row` the fields its verb takes, and no other. */
export function fit(row, verbs) {
  const verb = row.querySelector("select[name^=do_]").value;
  const shown = takes(verbs, verb);
  for (const label of row.querySelectorAll("label[data-field]")) {
    label.hidden = !shown.includes(label.dataset.field);
  }
}

/** Move `row` to place `index`: its fields' names, its ids, its legend's number. */
export function place(row, index, legend) {
  for (const field of row.querySelectorAll("[name]")) field.name = renamed(field.name, index);
  for (const node of [row, ...row.querySelectorAll("[id]")]) node.id = reindexed(node.id, index);
  const described = row.getAttribute("aria-describedby");
  if (described) row.setAttribute("aria-describedby", reindexed(described, index));
  row.dataset.index = String(index);
  const title = row.querySelector("legend");
  if (title && legend) title.textContent = legend(index, row);
}

/**
 * Show `row`'s remove button and arm it: the row goes, the rows are numbered again
 * (`renumber`), the focus moves to the row that came after it, or to the element with id
 * `instead` (the add button) when it was the last; then `removed()` (the editor checks again).
 */
export function removable(row, { renumber, instead, removed = () => {} }) {
  const button = row.querySelector(".remove-step");
  if (!button) return;
  button.hidden = false;
  button.addEventListener("click", () => {
    const next = row.nextElementSibling;
    row.remove();
    renumber();
    (next ? next.querySelector("input") : document.getElementById(instead)).focus();
    removed();
  });
}

/** The step rows in `box`: each fitted to its verb now and whenever its verb changes. */
export function startRows(box, verbs) {
  if (!box || !verbs) return;
  for (const row of box.querySelectorAll(".step-row")) fit(row, verbs);
  box.addEventListener("change", (event) => {
    const row = event.target.closest(".step-row");
    if (row && event.target.matches("select[name^=do_]")) fit(row, verbs);
  });
}

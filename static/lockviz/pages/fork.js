// What if…? — the fork editor: each row shows the fields its verb takes (from the one step
// vocabulary, lockviz/scenarios/verbs.py, sent as the page data's verbs), and a row without a verb yet
// shows only when, what and who. Without this script every field shows, and the server ignores
// those the verb does not take.

import { pageData } from "../page-data.js";
import { startSite } from "../site.js";

startSite();
const fields = pageData().verbs;

function fit(row) {
  const verb = row.querySelector("select[name^=do_]").value;
  const takes = fields[verb] || [];
  for (const label of row.querySelectorAll("label[data-field]")) {
    label.hidden = !takes.includes(label.dataset.field);
  }
}

for (const row of fields ? document.querySelectorAll(".fork-row") : []) {
  fit(row);
  row.querySelector("select[name^=do_]").addEventListener("change", () => fit(row));
}

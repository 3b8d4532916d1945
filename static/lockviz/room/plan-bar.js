// The plan bar (templates/lockviz/_plan_bar.html): on a presenter's pages while a lecture plan
// is presented, one key each moves through it: PageDown (a presentation clicker's "next") goes to
// the next item, PageUp to the previous one. Its buttons are forms that POST; the keys press
// them. In a text field the keys are the field's own.

let started = false;

export function startPlanBar(doc = document) {
  const bar = doc.getElementById("plan-bar");
  if (!bar || started) return;
  started = true;
  doc.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
    if (typing) return;
    const button = { PageDown: "plan-next", PageUp: "plan-previous" }[event.key];
    const found = button && doc.getElementById(button);
    if (!found) return;
    event.preventDefault();
    if (!found.disabled) found.click();
  });
}

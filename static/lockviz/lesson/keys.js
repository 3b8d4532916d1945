// A lesson's keyboard (pages/lesson.js): → and ← go one event, n and p from narration to
// narration; at a checkpoint, 1–9 pick a choice and Enter answers. In a text field keys are
// typing, and in the radio group the arrows are its own.

/** `act`: {on() (the telling has begun), waiting() (a question waits for its answer), next,
 * back, nextSay, prevSay (each called with true: by key), answer(), pick(n)}; `skip`: the
 * Skip button (Enter on it skips). */
export function lessonKeys(act, skip) {
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || !act.on()) return;
    const t = e.target;
    const radio = t instanceof HTMLInputElement && t.type === "radio";
    if (!radio && t.closest && t.closest("input, textarea, select, [contenteditable]")) return;
    if (e.key === "Enter") {
      if (act.waiting() && t !== skip) {
        e.preventDefault();
        act.answer();
      }
      return;
    }
    if (radio && e.key.startsWith("Arrow")) return; // the radio group's own keys
    if (/^[1-9]$/.test(e.key) && act.waiting()) {
      e.preventDefault();
      act.pick(Number(e.key) - 1);
      return;
    }
    const action = { ArrowRight: act.next, ArrowLeft: act.back, n: act.nextSay, p: act.prevSay }[e.key];
    if (action) {
      e.preventDefault();
      action(true);
    }
  });
}

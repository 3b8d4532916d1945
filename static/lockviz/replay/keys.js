// The replay's keyboard (pages/replay.js): Space plays or pauses, ← and → step one event,
// Shift+← and Shift+→ jump between narrations, Home and End go to the start and the end, [ and ]
// make it slower and faster. On the time slider, its own arrows, Home and End move it instead;
// in a text field, keys are typing.

const TYPING = new Set(["TEXTAREA", "SELECT"]);

/** `act`: {toggle(), step(delta), narration(dir), start(), end(), speed(delta)}. */
export function replayKeys(slider, act) {
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    const typing = TYPING.has(t.tagName) || (t.tagName === "INPUT" && t.type !== "range");
    if (typing) return;
    const onRange = t === slider; // the slider moves itself with arrows, Home and End
    const keys = {
      " ": () => act.toggle(),
      ArrowLeft: () => (e.shiftKey ? act.narration(-1) : act.step(-1)),
      ArrowRight: () => (e.shiftKey ? act.narration(1) : act.step(1)),
      Home: () => act.start(),
      End: () => act.end(),
      "[": () => act.speed(-1),
      "]": () => act.speed(1),
    };
    const action = keys[e.key];
    if (!action || (onRange && e.key !== " " && e.key !== "[" && e.key !== "]" && !e.shiftKey)) return;
    e.preventDefault(); // Space on a focused button would also click it
    action();
  });
  document.addEventListener("keyup", (e) => {
    if (e.key === " " && e.target.tagName === "BUTTON") e.preventDefault();
  });
}

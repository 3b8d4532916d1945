// Marks of one moment: a step of the script in the margin, a client's note, an acquire given
// up, the run ending early, failing or finishing (end.js draws what finishing closes).

import { describe, el, said, tOf } from "../svg.js";
import { finish } from "../end.js";
import { startRoles } from "./groups.js";

export function runStarted(d, ev) {
  d.layout.backend = d.options.backend || ev.backend;
  startRoles(d, ev);
}

// Every step gets its number in the margin (1, 2, 3 … narrated or not) and the narrator's
// short words for it, wrapped onto as many lines as they need; the tooltip and the page's story panel hold the whole narration.
export function step(d, ev) {
  const { layout: L, pen, measure } = d;
  const s = L.scale;
  const g = pen.group("labels", ev, "narration" + (ev.say ? " said" : ""), said(ev).text || describe(ev), "step");
  g.dataset.step = ev.index;
  const y = L.y(tOf(ev)),
    x = L.narrX;
  const tick = el("path", { class: "say-tick" }, g);
  const badge = el("circle", { class: "step-badge", cx: x + 10 * s, cy: y, r: 10 * s }, g);
  const digits = el("text", { class: "step-badge-text", x: x + 10 * s, y: y + 4 * s, "text-anchor": "middle" }, g);
  digits.textContent = Number.isInteger(ev.index) ? String(ev.index + 1) : "?";
  const font = measure.font(g.getAttribute("class"), "label say-short");
  // Wrapped, never cut: a projected caption must be read whole. A compare lane shows the
  // number alone (its words in the tooltip): the badge still takes the first free line.
  const wrapped = L.lane ? [] : measure.wrap(said(ev).label || "", font, L.narrW - 34 * s);
  const words = wrapped.length ? wrapped : ["\u00a0"];
  // The badge goes with its words: both move together to the first free line.
  const follow = (found) => {
    const dy = found.dy;
    badge.setAttribute("cy", y + dy);
    digits.setAttribute("y", y + dy + 4 * s);
    tick.setAttribute("d", dy > 4 ? `M${x - 14 * s},${y} L${x - 8 * s},${y} L${x - 2 * s},${y + dy}` : "");
  };
  pen.label(g, words, x + 26 * s, y + 4 * s, "start", "say-short", { padLeft: 26 * s, onPlace: follow });
}

// A client's note: a small mark with the narrator's words (a Redlock round's shortfall).
export function note(d, ev) {
  const { layout: L, pen } = d;
  if (!L.cols.has(ev.actor)) return;
  const x = L.x(ev.actor),
    y = L.y(tOf(ev)),
    s = L.scale;
  const g = pen.group("marks", ev, "note-mark", null, "note");
  el("rect", { x: x - 4 * s, y: y - 4 * s, width: 8 * s, height: 8 * s, transform: `rotate(45 ${x} ${y})` }, g);
  pen.obstacle(x - 6 * s, y - 6 * s, x + 6 * s, y + 6 * s);
  pen.label(g, said(ev).label, x + 10 * s, y + 15 * s, "start", "note-label", { short: said(ev).short });
}

export function acquireFailed(d, ev) {
  const { layout: L, pen } = d;
  const x = L.x(ev.actor),
    y = L.y(tOf(ev)),
    s = L.scale;
  d.rounds.forget(ev.actor);
  const g = pen.group("marks", ev, "acquire-failed", null, "gave-up");
  el("circle", { class: "no-entry", cx: x, cy: y + 6 * s, r: 6 * s }, g);
  el("line", { class: "no-entry-bar", x1: x - 4 * s, x2: x + 4 * s, y1: y + 6 * s, y2: y + 6 * s }, g);
  pen.obstacle(x - 7 * s, y - 1, x + 7 * s, y + 13 * s);
  pen.label(g, said(ev).label, x + 12 * s, y + 20 * s, "start", "muted");
}

export function ending(d, ev) {
  const L = d.layout;
  const y = L.y(tOf(ev));
  const g = d.pen.group("marks", ev, "ending", null, "ending");
  d.pen.label(g, said(ev).label, L.G.axisX + 8 * L.scale, y + 16 * L.scale, "start", "muted");
}

export function runFailed(d, ev) {
  const L = d.layout;
  const y = L.y(tOf(ev));
  const g = d.pen.group("marks", ev, "run-failed", null, "failed");
  el("line", { class: "fail-line", x1: L.G.axisX, x2: L.width - 8, y1: y, y2: y }, g);
  d.pen.label(g, said(ev).label, L.G.axisX + 8 * L.scale, y + 18 * L.scale, "start", "fail-label");
  finish(d, null, tOf(ev), ev);
}

export function runFinished(d, ev) {
  d.state.finishEvent = ev;
  finish(d, ev.verdict, tOf(ev), ev);
}

// Clocks: a jump or a new rate is a badge where it happened (a server's left of its lifeline, a
// client's left of its bars, wherever there is room), and each lifeline's header says its clock
// at the moment shown (frame.js reads the changes kept here).

import { el, said, tOf } from "../svg.js";

export function clockJumped(d, ev) {
  clockState(d, ev.actor, { offset: ev.offset_ms }, ev);
  const { layout: L, pen, measure } = d;
  if (L.role(ev.actor) === "client") return clientClock(d, ev, said(ev).label, "clock-jump");
  const s = L.scale;
  const x = L.x(ev.actor),
    y = L.y(tOf(ev));
  const g = pen.group("marks", ev, "clock-jump", null, "clock");
  const text = said(ev).label;
  const font = measure.font("clock-jump", "label clock-badge-text");
  const w = measure.width(text, font) + 16 * s,
    left = x - 10 * s - w; // left of the lifeline: its marks go right
  el("line", { class: "clock-link", x1: left + w, x2: x, y1: y, y2: y }, g);
  el("rect", { class: "clock-badge", x: left, y: y - 11 * s, width: w, height: 22 * s, rx: 11 * s }, g);
  const badge = el(
    "text",
    { class: "label clock-badge-text", x: left + w / 2, y: y + 5 * s, "text-anchor": "middle" },
    g,
  );
  badge.textContent = text;
  pen.obstacle(left, y - 11 * s, x, y + 11 * s);
}

export function clockRate(d, ev) {
  clockState(d, ev.actor, { rate: ev.rate }, ev);
  clientClock(d, ev, said(ev).label, "clock-rate");
}

// A client's clock: a badge where it changed, left of its bars, wherever there is room.
function clientClock(d, ev, text, cls) {
  const { layout: L, pen } = d;
  const x = L.x(ev.actor),
    y = L.y(tOf(ev)),
    s = L.scale;
  const g = pen.group("marks", ev, cls + " client-clock", null, "clock");
  const right = x + L.G.barLabelX + 4 * s;
  const link = el("path", { class: "clock-link", d: `M${x},${y} L${right},${y}` }, g);
  const badge = el("rect", { class: "clock-badge", y: y - 11 * s, height: 22 * s, rx: 11 * s }, g);
  const node = pen.label(g, text, right - 8 * s, y + 5 * s, "end", "clock-badge-text", { padX: 8 * s });
  if (!node) return;
  const follow = (found) => {
    const box = found.box;
    badge.setAttribute("x", box.x1);
    badge.setAttribute("width", box.x2 - box.x1);
    badge.setAttribute("y", box.y1);
    badge.setAttribute("height", box.y2 - box.y1);
    link.setAttribute("d", `M${x},${y} L${box.x2},${(box.y1 + box.y2) / 2}`);
  };
  node.label.onPlace = follow;
  if (node.label.at) follow(node.label.at);
}

// The lifeline's clock from this event on: its offset and rate (what the header says).
function clockState(d, name, change, ev) {
  const words = d.state.headerWords;
  const list = words.get(name) || [];
  const last = list.length ? Object.assign({}, list[list.length - 1].state) : { offset: 0, rate: 1 };
  for (const key in change) if (Number.isFinite(change[key])) last[key] = change[key];
  list.push({ seq: ev.seq, state: last });
  words.set(name, list);
}

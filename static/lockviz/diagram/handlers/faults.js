// Faults on nodes and links, drawn where they act: a crashed node's lifeline is broken until it
// restarts; a cut link is a dotted band on the two lifelines it joins (not on those between), a
// delayed link gets a line and its words, a healed one a dot.

import { el, said, tOf } from "../svg.js";
import { beliefEnd } from "./bars.js";

const MERGE_MS = 40; // link events of one click (a Redlock partition of 3 nodes) share one label

// A client's SIGKILL ends its belief and lifeline; a server's kill -9 breaks its lifeline
// until it restarts.
export function crashed(d, ev) {
  const role = d.layout.role(ev.actor);
  if (role === "node" || role === "storage") nodeDown(d, ev);
  else beliefEnd(d, ev);
}

function nodeDown(d, ev) {
  const { layout: L, pen, moments, state } = d;
  const x = L.x(ev.actor),
    t0 = tOf(ev),
    y = L.y(t0),
    s = L.scale;
  if (state.downs.some((dn) => dn.node === ev.actor && !moments.closed(dn.item))) return;
  const g = pen.group("marks", ev, "node-down", said(ev).text, "down");
  const gap = el("rect", { class: "down-gap", x: x - 5 * s, width: 10 * s }, g);
  const line = el("line", { class: "down-line", x1: x, x2: x }, g);
  const zig = `M${x - 11 * s},${y + 4 * s} L${x + 11 * s},${y - 4 * s} M${x - 11 * s},${y + 10 * s} L${x + 11 * s},${y + 2 * s}`;
  el("path", { class: "down-break", d: zig }, g);
  pen.obstacle(x - 12 * s, y - 6 * s, x + 12 * s, y + 12 * s);
  pen.label(g, said(ev).label, x + 14 * s, y + 6 * s, "start", "down-label");
  const down = { node: ev.actor, t0, g, parts: [gap, line] };
  down.item = moments.dynamic({ update: (it) => spanFault(d, it, down), node: g });
  state.downs.push(down);
}

export function restarted(d, ev) {
  const { layout: L, pen, moments, state } = d;
  const x = L.x(ev.actor),
    t = tOf(ev),
    y = L.y(t),
    s = L.scale;
  const down = state.downs.find((dn) => dn.node === ev.actor && !moments.closed(dn.item));
  if (down) moments.end(down.item, ev.seq, t);
  const kept = ev.persistence === "fsync";
  const g = pen.group("marks", ev, "node-restarted" + (kept ? " kept" : " empty"), null, "restarted");
  el(
    "path",
    { class: "restart-mark", d: `M${x - 7 * s},${y + 5 * s} L${x},${y - 6 * s} L${x + 7 * s},${y + 5 * s} z` },
    g,
  );
  pen.obstacle(x - 8 * s, y - 7 * s, x + 8 * s, y + 6 * s);
  pen.label(g, said(ev).label, x + 14 * s, y + 6 * s, "start", kept ? "restart-label" : "restart-label empty");
}

// One `link` event per client↔node link: a cut (blackhole, reset) or a delay lasts until
// the next event of the same link; `pass` heals it. A cut is a dotted band on the client's
// lifeline and on the node's, where the link's two ends are: nothing in between is shaded.
// A server cut off from its peers (`peers`) is one such link to each peer.
export function link(d, ev) {
  for (const other of ev.peers || [ev.node]) linkTo(d, ev, other);
}

function linkTo(d, ev, node) {
  const { layout: L, pen, moments, state } = d;
  const client = ev.actor,
    t = tOf(ev),
    s = L.scale,
    G = L.G;
  if (!L.cols.has(client) || !L.cols.has(node)) return;
  const open = state.links.find((l) => l.client === client && l.node === node && !moments.closed(l.item));
  if (open) {
    moments.end(open.item, ev.seq, t);
    open.t1 = t;
    if (open.mode === "blackhole") released(d, client, node, t); // what it held goes on now
  }
  const cx = L.x(client),
    nx = L.x(node),
    dir = nx >= cx ? 1 : -1,
    y = L.y(t);
  if (ev.mode === "pass") {
    const g = pen.group("marks", ev, "link-healed", null, "healed");
    el("line", { class: "heal-line", x1: cx + dir * 4, x2: nx - dir * 4, y1: y, y2: y }, g);
    el("circle", { class: "heal-dot", cx: nx - dir * 10 * s, cy: y, r: 4 * s }, g);
    pen.obstacleLine(cx + dir * 4, y, nx - dir * 4, y);
    linkNote(d, ev, "heal", cx, y, dir, "heal-label");
    return;
  }
  const cut = ev.mode === "blackhole" || ev.mode === "reset";
  const cls = cut ? `cut-link ${ev.mode}` : "delayed-link-span";
  const g = pen.group("bg", ev, cls, said(ev).text, cut ? "cut" : "delay");
  const parts = [];
  if (cut) {
    const w = G.cutW;
    parts.push(
      el("rect", { class: "strip", x: dir > 0 ? cx + 3 * s : cx - 3 * s - w, width: w, fill: pen.url("cut") }, g),
    );
    parts.push(
      el("rect", { class: "strip", x: dir > 0 ? nx - 3 * s - w : nx + 3 * s, width: w, fill: pen.url("cut") }, g),
    );
  }
  const edgeX = nx - dir * 10 * s;
  parts.push(el("line", { class: "edge", x1: edgeX, x2: edgeX }, g));
  const span = { client, node, t0: t, g, parts, delay: !cut, mode: ev.mode };
  span.item = moments.dynamic({ update: (it) => spanFault(d, it, span), node: g });
  state.links.push(span);
  const mark = pen.group("marks", ev, cut ? "cut-mark" : "delay-mark");
  if (cut) {
    // a zig-zag at each end of the link: the lifelines between are not touched
    for (const [a, b] of [
      [cx + dir * 3 * s, cx + dir * 27 * s],
      [nx - dir * 27 * s, nx - dir * 3 * s],
    ]) {
      const pts = [];
      for (let xx = Math.min(a, b), i = 0; xx <= Math.max(a, b) + 0.1; xx += 6 * s, i++)
        pts.push(`${xx.toFixed(1)},${(y + (i % 2 ? 4 : -4) * s).toFixed(1)}`);
      el("polyline", { class: "zigzag", points: pts.join(" ") }, mark);
      pen.obstacleLine(Math.min(a, b), y, Math.max(a, b), y);
    }
    linkNote(d, ev, "cut " + ev.mode, cx, y, dir, "cut-label");
  } else {
    el("line", { class: "delay-line", x1: cx + dir * 4, x2: nx - dir * 4, y1: y, y2: y }, mark);
    pen.obstacleLine(cx + dir * 4, y, nx - dir * 4, y);
    linkNote(d, ev, `delay ${ev.ms}|${ev.jitter_ms}`, cx, y, dir, "delay-label");
  }
}

// A blackhole holds a request's bytes on the link; when it heals they go on to the server:
// the held arrow continues from where it stopped, at the moment of the heal.
function released(d, client, node, t) {
  const { layout: L, pen, state } = d;
  const y = L.y(t);
  for (const call of state.calls.values()) {
    if (!call.held || call.released || call.req.actor !== client || call.req.to !== node) continue;
    call.released = true;
    const line = el(
      "line",
      {
        class: "arrow released",
        x1: call.x1 + call.dir * 2,
        y1: y,
        x2: call.x2 - call.dir * 3,
        y2: y,
        "marker-end": pen.url("req"),
      },
      call.g,
    );
    el("line", { class: "held-wait", x1: call.heldX, x2: call.heldX, y1: call.y, y2: y }, call.g);
    pen.segment(line, call.heldX, y, call.x2 - call.dir * 3, y);
    d.surface.extend(call.g, call.y, y);
  }
}

// The narrator names every link of one click in each link event's label: draw it once.
function linkNote(d, ev, verb, cx, y, dir, cls) {
  const { layout: L, pen, state } = d;
  const t = tOf(ev),
    text = said(ev).label || "";
  const same = state.linkNotes.find((n) => n.client === ev.actor && n.verb === verb && Math.abs(n.t - t) <= MERGE_MS);
  if (same && same.text === text) return same.node;
  const lg = pen.group("labels", ev, cls.replace("-label", "-link-label") + " link-label");
  const node = pen.label(lg, text, cx + dir * 10 * L.scale, y + 18 * L.scale, dir > 0 ? "start" : "end", cls);
  state.linkNotes.push({ client: ev.actor, verb, t, text, node });
  return node;
}

// A fault's band (a cut, a delay, a node down) from its start to its end at the moment shown.
function spanFault(d, item, f) {
  const { layout: L, moments } = d;
  const end = moments.endAt(item);
  const t1 = end ? end.t : Math.max(f.t0, moments.tNow);
  item.settled = !!end && d.limit === Infinity;
  const sig = `${t1}|${!end}`;
  if (item.drawn === sig) return;
  item.drawn = sig;
  const y0 = L.y(f.t0),
    y1 = L.y(t1);
  f.g.classList.toggle("open", !end);
  for (const shape of f.parts) {
    if (shape.tagName === "line") {
      shape.setAttribute("y1", y0);
      shape.setAttribute("y2", y1);
    } else d.pen.span(shape, f.t0, t1);
  }
  d.surface.extend(f.g, y0, y1);
}

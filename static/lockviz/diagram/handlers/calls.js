// Protocol messages, drawn as arrows: a request, its reply (a quick one on the request's own
// label line; a long wait drawn flat, as a wait at the server), what the storage did with a
// write, and a watch that fires. A request sent into a blackholed link is drawn held: it stops
// short of the server, at the link's cut, with a bar for an end (faults.js carries it on when
// the link heals), and its reply (a timeout) leaves from there, not from the server. Each handler takes the diagram and the event
// (docs/events.md); `READS` in handlers/index.js names the fields each one reads.

import { el, said, tOf } from "../svg.js";

const FLAT_PX = 60; // a round trip longer than this is drawn as a wait at the server, not a slant

export function request(d, ev) {
  const { layout: L, pen, state } = d;
  const G = L.G;
  const x1 = L.x(ev.actor),
    x2 = L.x(ev.to),
    dir = x2 >= x1 ? 1 : -1,
    y = L.y(tOf(ev));
  const held = heldBy(d, ev.actor, ev.to, tOf(ev));
  const heldX = x2 - dir * 32 * L.scale; // just before the cut's zig-zag at the server's end
  const g = pen.group("arrows", ev, held ? "request held" : "request", null, held ? "held" : "request");
  const line = el(
    "line",
    held
      ? { class: "arrow", x1: x1 + dir * 2, y1: y, x2: heldX, y2: y, "marker-end": pen.url("held") }
      : {
          class: "arrow",
          x1: x1 + dir * 2,
          y1: y,
          x2: x2 - dir * 3,
          y2: y + G.pendingPx,
          "marker-end": pen.url("req"),
        },
    g,
  );
  const key = ev.actor + "#" + ev.call;
  const call = { req: ev, g, line, x1, x2, dir, y, held, heldX, delayed: delayed(d, ev.actor, ev.to, tOf(ev)) };
  state.calls.set(key, call);
  if (ev.op === "watch" || ev.watch) state.watches.set(ev.actor, ev.to);
  pen.segment(line, x1 + dir * 2, y, held ? heldX : x2 - dir * 3, held ? y : y + G.pendingPx);
  const lg = pen.group("labels", ev, "request-label");
  const head = { x: x2 - dir * 16, anchor: dir > 0 ? "end" : "start" };
  const near = { x: x1 + dir * 8, anchor: dir > 0 ? "start" : "end" };
  call.label = pen.label(lg, said(ev).label, near.x, y - 5, near.anchor, "", { alt: [head] });
  call.lg = lg;
  call.pending = d.moments.dynamic({ update: () => pending(d, call), node: g });
  const early = state.early.get(key); // its reply overtook it in seq order
  if (early) {
    state.early.delete(key);
    reply(d, early);
  }
}

// A link that was cut by a blackhole at time t (it holds what is sent into it).
function heldBy(d, client, node, t) {
  return d.state.links.some(
    (l) => l.client === client && l.node === node && l.mode === "blackhole" && l.t0 <= t && (l.t1 == null || l.t1 > t),
  );
}

function delayed(d, client, node, t) {
  return d.state.links.some(
    (l) => l.client === client && l.node === node && l.delay && l.t0 <= t && (l.t1 == null || l.t1 > t),
  );
}

// The request arrow reaches the server half-way through the round trip, and the reply leaves
// from there; a long wait (a queue, a blocked call) is drawn flat: the request arrives, the
// server holds it (a dashed bar), then answers.
function pending(d, call) {
  if (call.held) return; // it stays where the link holds it
  const end = d.moments.endAt(call.pending);
  const sig = end ? "done" : "open";
  call.pending.settled = !!end;
  if (call.pending.drawn === sig) return;
  call.pending.drawn = sig;
  call.g.classList.toggle("pending", !end);
  const yEnd = end ? end.yMid : call.y + d.layout.G.pendingPx;
  call.line.setAttribute("y2", yEnd);
  if (call.wait) call.wait.style.display = end ? "" : "none";
}

export function reply(d, ev) {
  const { layout: L, pen, state } = d;
  const G = L.G,
    s = L.scale;
  const key = ev.actor + "#" + ev.call;
  const call = state.calls.get(key);
  if (!call) {
    state.early.set(key, ev);
    return;
  }
  const yRep = Math.max(L.y(tOf(ev)), call.y + G.minPair);
  const flat = (yRep - call.y > FLAT_PX * s && !call.delayed) || call.held;
  const yMid = flat ? call.y + G.minPair / 2 : (call.y + yRep) / 2;
  const yFrom = flat ? yRep - G.minPair / 2 : yMid;
  d.moments.end(call.pending, ev.seq, tOf(ev), { yMid });
  const far = call.held ? call.heldX : call.x2; // where the request got to
  if (!call.held) {
    call.line.setAttribute("y2", yMid);
    pen.segment(call.line, call.x1 + call.dir * 2, call.y, call.x2 - call.dir * 3, yMid);
  }
  const failed = ev.ok === false || ev.accepted === false || !!ev.error;
  const words = said(ev);
  const g = pen.group("arrows", ev, "reply" + (failed ? " failed" : ""), null, failed ? "reply-failed" : "reply");
  if (flat) {
    const x = far - call.dir * 4;
    call.wait = el("line", { class: call.held ? "wait held-wait" : "wait", x1: x, x2: x, y1: yMid, y2: yFrom }, call.g);
    if (!call.held) call.g.setAttribute("data-mark", "wait");
  }
  const line = el(
    "line",
    {
      class: "arrow",
      x1: far - call.dir * 2,
      y1: yFrom,
      x2: call.x1 + call.dir * 3,
      y2: yRep,
      "marker-end": pen.url(failed ? "bad" : "rep"),
    },
    g,
  );
  pen.segment(line, far - call.dir * 2, yFrom, call.x1 + call.dir * 3, yRep);
  d.surface.extend(call.g, call.y, yRep);
  d.surface.extend(g, call.y, yRep);
  state.lastAt.set(ev.from, Math.max(state.lastAt.get(ev.from) || 0, yFrom));
  const lg = pen.group("labels", ev, "reply-label" + (failed ? " failed" : ""));
  const text = words.label || "";
  const back = { x: call.x1 + call.dir * 10, y: yRep + 16 * s, anchor: call.dir > 0 ? "start" : "end" };
  if (L.backend === "redlock") {
    // at the server's end: "✔ redis-3" beside redis-3
    const x = far - call.dir * 12;
    pen.label(lg, text, x, yFrom + 15 * s, call.dir > 0 ? "end" : "start", "", {
      short: words.short,
      reach: 40 * s,
      alt: [back],
    });
  } else if (yRep - call.y > G.fastPx || !inlineReply(d, lg, call, text)) {
    pen.label(lg, text, back.x, back.y, back.anchor, "", { short: words.short });
  }
  if (ev.op === "write" && !call.held) write(d, call.req, ev, call.x2, yMid); // held: the storage has not seen it
}

// A quick round trip is one line of text, "SET NX PX 2000 → OK · token 33", on the request's
// label line: two stacked labels per call would not fit between calls 200 ms apart.
function inlineReply(d, lg, call, text) {
  const req = call.label && call.label.label;
  if (!req || !req.at || !text) return false;
  const joined = call.dir > 0 ? `${req.at.lines.join(" ")} \u2192 ${text}` : `${text} \u2190 ${req.at.lines.join(" ")}`;
  const spot = req.at.spot;
  const trial = { font: req.font, spots: [spot], lines: [joined] };
  const box = d.placer.box(trial, [joined], spot, req.at.dy);
  const roomy = call.dir > 0 ? box.x2 <= call.x2 - 3 : box.x1 >= call.x2 + 3;
  if (!roomy || d.space.hit(box, req.item)) return false;
  // One label now says both: the request's words and the reply's.
  d.placer.unplace(req);
  req.lines = [joined];
  req.shown = null;
  d.placer.place(req);
  call.label.classList.add("inline");
  lg.remove();
  return true;
}

// What the storage did with a write, drawn on its lifeline: shape and words, not only colour.
// An accepted stale write is the damage: red, at the moment it lands, saying what it destroyed.
function write(d, req, rep, x, y) {
  const { pen, state } = d;
  const words = said(rep);
  const rejected = rep.accepted === false;
  const damage = words.tone === "damage";
  const kind = rejected ? "rejected-write" : damage ? "damaged-write" : "write-accepted";
  const g = pen.group("marks", rep, kind, null, kind);
  g.setAttribute("role", "img");
  g.setAttribute("aria-label", words.mark || words.text || "");
  const s = d.layout.scale;
  if (rejected) {
    const r = 11 * s;
    const pts = Array.from({ length: 8 }, (_, i) => Math.PI / 8 + (i * Math.PI) / 4).map(
      (a) => `${(x + r * Math.cos(a)).toFixed(1)},${(y + r * Math.sin(a)).toFixed(1)}`,
    );
    el("polygon", { class: "octagon", points: pts.join(" ") }, g); // a stop sign
    const cross = `M${x - 5 * s},${y - 5 * s} L${x + 5 * s},${y + 5 * s} M${x + 5 * s},${y - 5 * s} L${x - 5 * s},${y + 5 * s}`;
    el("path", { class: "cross", d: cross }, g);
    pen.obstacle(x - r, y - r, x + r, y + r);
  } else if (damage) {
    const r = 13 * s;
    const points = `${x},${y - r} ${x + r},${y + r * 0.8} ${x - r},${y + r * 0.8}`;
    el("polygon", { class: "warn-triangle", points }, g);
    el("text", { class: "warn-bang", x, y: y + r * 0.65, "text-anchor": "middle" }, g).textContent = "!";
    pen.obstacle(x - r, y - r, x + r, y + r);
    g.setAttribute("data-write-seq", rep.seq);
  } else {
    el("rect", { class: "square", x: x - 6 * s, y: y - 6 * s, width: 12 * s, height: 12 * s }, g);
    pen.obstacle(x - 6 * s, y - 6 * s, x + 6 * s, y + 6 * s);
  }
  const cls = rejected ? "rejected-label" : damage ? "damage-label" : "stored-label";
  // A compare lane's margin right of the storage is narrow: the words wrap to fit it, clear of the step numbers.
  const L = d.layout;
  const text = L.lane
    ? d.measure.wrap(words.mark || "", d.measure.font(g.getAttribute("class"), "label " + cls), L.narrX - x - 24 * s)
    : words.mark || "";
  pen.label(g, text, x + 18 * s, y + 5 * s, "start", cls);
  const where = { x, y, req, rep, g, damage };
  state.writes.set(rep.seq, where);
  state.writes.set(req.seq, where);
}

// A watch fires: ZooKeeper tells the waiter, an arrow from the server it watched through.
export function woken(d, ev) {
  const { layout: L, pen, state } = d;
  if (!L.cols.has(ev.actor)) return;
  const s = L.scale;
  const server = state.watches.get(ev.actor) || Array.from(L.cols.values()).find((c) => c.role === "node")?.name;
  if (!server) return;
  const sx = L.x(server),
    cx = L.x(ev.actor),
    dir = cx >= sx ? 1 : -1;
  const y = Math.max(L.y(tOf(ev)), (state.lastAt.get(server) || 0) + 6 * s);
  const g = pen.group("arrows", ev, "notify", null, "watch");
  const line = el(
    "line",
    { class: "arrow", x1: sx + dir * 2, y1: y - 6 * s, x2: cx - dir * 3, y2: y, "marker-end": pen.url("notify") },
    g,
  );
  pen.segment(line, sx + dir * 2, y - 6 * s, cx - dir * 3, y);
  const bolt = `M${sx + dir * 6 * s},${y - 16 * s} l${dir * 4 * s},${6 * s} l${-dir * 3 * s},0 l${dir * 4 * s},${6 * s}`;
  el("path", { class: "bolt", d: bolt }, g);
  state.lastAt.set(server, y);
  const lg = pen.group("labels", ev, "notify-label");
  pen.label(lg, said(ev).label, sx - dir * 10 * s, y - 10 * s, dir > 0 ? "start" : "end", "notify-text", {
    short: said(ev).short,
    alt: [{ x: cx - dir * 14 * s, y: y + 16 * s, anchor: dir > 0 ? "end" : "start" }],
  });
}

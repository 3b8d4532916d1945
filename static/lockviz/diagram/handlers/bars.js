// Leases and beliefs: for each grant a lease bar (what the server granted, until the SERVER
// ended it) beside a belief bar (what the client thinks, until it released, lost or crashed).
// Where the belief outlives the lease the client acts on a lock it no longer holds: that gap is
// the lesson, so it gets its own hatch and words. And a paused client's band.

import { el, said, tOf } from "../svg.js";

export function granted(d, ev) {
  const { layout: L, pen, moments, state } = d;
  const G = L.G;
  d.rounds.forget(ev.actor);
  const x = L.x(ev.actor),
    t0 = tOf(ev);
  for (const old of state.beliefs)
    if (old.client === ev.actor && !moments.closed(old.item)) moments.end(old.item, ev.seq, t0);
  const lease = { client: ev.actor, node: ev.node, t0, x, by: null };
  lease.g = pen.group("bars", ev, "lease", null, "lease");
  lease.rect = el("rect", { class: "bar", x: x + G.leaseX, width: G.leaseW }, lease.g);
  lease.item = moments.dynamic({ update: (it) => bar(d, it, lease, lease.rect, lease.g), node: lease.g });
  const belief = { client: ev.actor, t0, lease, x };
  belief.g = pen.group("bars", ev, "belief", null, "belief");
  belief.rect = el("rect", { class: "bar", x: x + G.beliefX, width: G.beliefW, fill: pen.url("belief") }, belief.g);
  belief.item = moments.dynamic({ update: () => refreshBelief(d, belief), node: belief.g });
  state.leases.push(lease);
  state.beliefs.push(belief);
  const lg = pen.group("labels", ev, "lease-label");
  pen.label(lg, said(ev).label, x + G.barLabelX, L.y(t0) + 14 * L.scale, "end", "", { short: said(ev).short });
  // A server end that reached the recorder before this grant still belongs to it.
  const end = state.pendingEnds.find((e) => e.holder === ev.actor && tOf(e) >= t0 && sameNode(d, lease, e.actor));
  if (end) {
    state.pendingEnds.splice(state.pendingEnds.indexOf(end), 1);
    endLease(d, lease, end, "server");
  }
}

/** A bar (or band) from its start to its end at the moment shown, or to "now" while open. */
export function bar(d, item, thing, rect, g) {
  const end = d.moments.endAt(item);
  const t1 = end ? end.t : Math.max(thing.t0, d.moments.tNow);
  const sig = `${t1}|${!end}`;
  item.settled = !!end && d.limit === Infinity && end === item.ends[item.ends.length - 1];
  if (item.drawn === sig) return;
  item.drawn = sig;
  d.pen.span(rect, thing.t0, t1);
  g.classList.toggle("open", !end);
}

function sameNode(d, lease, node) {
  const n = lease.node;
  if (!n || n === node || !d.layout.cols.has(n)) return true;
  return String(n).split(",").includes(node);
}

// A server end overrides a client's release; the last server end wins.
function endLease(d, lease, ev, by) {
  lease.by = by;
  lease.endSeq = ev.seq;
  d.moments.end(lease.item, ev.seq, tOf(ev), { by });
  const belief = d.state.beliefs.find((b) => b.lease === lease);
  if (belief) d.moments.touch(belief.item, ev.seq);
}

// expired/deleted: where the SERVER ended a lease. A client-side release end is provisional.
export function serverEnd(d, ev) {
  const { layout: L, pen, moments, state } = d;
  const t = tOf(ev),
    s = L.scale;
  const lease = state.leases
    .slice()
    .reverse()
    .find(
      (l) =>
        l.client === ev.holder &&
        l.t0 <= t + 1 &&
        (!moments.closed(l.item) || l.by === "client") &&
        sameNode(d, l, ev.actor),
    );
  if (lease) endLease(d, lease, ev, "server");
  else if (ev.holder) state.pendingEnds.push(ev);
  const x = L.x(ev.actor),
    y = L.y(t);
  const expired = ev.kind === "expired";
  const g = pen.group("marks", ev, expired ? "lease-expired" : "key-deleted", null, expired ? "expired" : "deleted");
  if (expired && lease) {
    const x2 = lease.x + L.G.leaseX + L.G.leaseW + 2;
    el("line", { class: "lease-end-link", x1: x - 8 * s, y1: y, x2, y2: y }, g);
  }
  if (expired) {
    const hourglass = `M${x - 7 * s},${y - 8 * s} h${14 * s} l${-14 * s},${16 * s} h${14 * s} z`;
    el("path", { class: "hourglass", d: hourglass }, g);
  } else el("circle", { class: "deleted-dot", cx: x, cy: y, r: 5 * s }, g);
  pen.obstacle(x - 8 * s, y - 9 * s, x + 8 * s, y + 9 * s);
  pen.label(g, said(ev).label, x + 14 * s, y + 5 * s, "start", expired ? "expired-label" : "muted");
  if (lease) lease.gapWords = said(ev).mark;
}

// released / lost / crashed end what the client believes; a clean release also ends the lease
// when no server event did (a provisional end that a later expired/deleted overrides).
export function beliefEnd(d, ev) {
  const { layout: L, pen, moments, state } = d;
  const t = tOf(ev),
    x = L.x(ev.actor),
    y = L.y(t),
    s = L.scale;
  const belief = state.beliefs
    .slice()
    .reverse()
    .find((b) => b.client === ev.actor && !moments.closed(b.item));
  if (belief) moments.end(belief.item, ev.seq, t);
  if (ev.kind === "released" && ev.ok) {
    const lease = state.leases.find((l) => l.client === ev.actor && !moments.closed(l.item));
    if (lease) endLease(d, lease, ev, "client");
  }
  if (ev.kind === "lost") {
    const g = pen.group("marks", ev, "lost", null, "lost");
    el("line", { class: "tick-mark", x1: x - 8 * s, x2: x + 8 * s, y1: y, y2: y }, g);
    pen.obstacle(x - 8 * s, y - 3, x + 8 * s, y + 3);
    pen.label(g, said(ev).label, x + 12 * s, y + 5 * s, "start", "warn-label", { short: said(ev).short });
  }
  if (ev.kind === "crashed") {
    const pause = state.pauses.find((p) => p.client === ev.actor && !moments.closed(p.item));
    if (pause) moments.end(pause.item, ev.seq, t);
    const g = pen.group("marks", ev, "crash", null, "crash");
    const cross = `M${x - 10 * s},${y - 10 * s} L${x + 10 * s},${y + 10 * s} M${x + 10 * s},${y - 10 * s} L${x - 10 * s},${y + 10 * s}`;
    el("path", { class: "cross", d: cross }, g);
    pen.obstacle(x - 11 * s, y - 11 * s, x + 11 * s, y + 11 * s);
    pen.label(g, said(ev).label, x + 16 * s, y + 5 * s, "start", "crash-label");
    state.crashed.set(ev.actor, { y, seq: ev.seq });
  }
}

// The belief bar is hatched while a lease backs it; past the lease's end it switches to the
// warning hatch and says so, because that stretch is where the client is wrong.
function refreshBelief(d, b) {
  const { layout: L, pen, moments } = d;
  const G = L.G;
  const endAt = moments.endAt(b.item),
    leaseEndAt = moments.endAt(b.lease.item);
  const end = endAt ? endAt.t : Math.max(b.t0, moments.tNow);
  const leaseEnd = leaseEndAt ? leaseEndAt.t : Infinity;
  b.item.settled = !!endAt && !!leaseEndAt && d.limit === Infinity && b.lease.item.settled !== false;
  const sig = `${end}|${leaseEnd}|${!endAt}`;
  if (b.item.drawn === sig) return;
  b.item.drawn = sig;
  pen.span(b.rect, b.t0, Math.min(end, leaseEnd));
  b.g.classList.toggle("open", !endAt);
  const tiny = !(L.y(end) - L.y(leaseEnd) >= 2); // a release's sub-ms lag is not a gap
  if (b.gap) b.gap.style.display = tiny ? "none" : "";
  if (b.gapLabel) b.gapLabel.style.display = tiny || L.y(end) - L.y(leaseEnd) < G.gapLabelPx ? "none" : "";
  if (tiny) return;
  const seq = b.lease.endSeq;
  if (!b.gap) {
    const words = String(b.lease.gapWords || "").replace("\n", " ");
    b.gap = pen.group("bars", { seq }, "belief-gap", `${b.client}: ${words} (${leaseEnd.toFixed(1)} ms)`, "gap");
    b.gapRect = el("rect", { class: "bar", x: b.x + G.beliefX, width: G.beliefW, fill: pen.url("gap") }, b.gap);
    // The empty, dashed lease slot beside it says "no lease here" in shape, not only colour.
    b.ghost = el("rect", { class: "ghost", x: b.x + G.leaseX, width: G.leaseW }, b.gap);
  }
  b.gap.classList.toggle("open", !endAt); // it grows with the run's "now" until the belief ends
  pen.span(b.gapRect, leaseEnd, end);
  pen.span(b.ghost, leaseEnd, end);
  if (!b.gapLabel && L.y(end) - L.y(leaseEnd) >= G.gapLabelPx && b.lease.gapWords) {
    const lg = pen.group("labels", { seq }, "belief-gap-label", b.gap.firstChild.textContent);
    const y = L.y(leaseEnd) + 15 * L.scale;
    // The lesson of the run: never left out for want of room (on a projector's narrow columns
    // the next client's bars, obstacles once the run has ended, left it none: a student's
    // wider diagram said it where the projector did not).
    b.gapLabel = pen.label(lg, b.lease.gapWords, b.x + G.barLabelX, y, "end", "gap-label", { keep: true });
  }
}

export function paused(d, ev) {
  const { layout: L, pen, state } = d;
  const G = L.G;
  const x = L.x(ev.actor),
    t0 = tOf(ev);
  const g = pen.group("bg", ev, "pause", null, "pause");
  // The paused client's own: its lifeline and its bars, within its column, never across the
  // next client's (whose lease and writes would look paused too).
  const half = L.colW / 2;
  const left = Math.max(G.bandLeft, -half),
    right = Math.min(G.bandRight, half);
  const rect = el("rect", { x: x + left, width: right - left, fill: pen.url("pause") }, g);
  const pause = { client: ev.actor, t0, rect, g, x };
  pause.item = d.moments.dynamic({ update: (it) => bar(d, it, pause, rect, g), node: g });
  state.pauses.push(pause);
  const lg = pen.group("labels", ev, "pause-label");
  pen.label(lg, said(ev).label, x + 10 * L.scale, L.y(t0) + 18 * L.scale, "start", "pause-text");
}

export function resumed(d, ev) {
  const { layout: L, pen, moments } = d;
  const pause = d.state.pauses.find((p) => p.client === ev.actor && !moments.closed(p.item));
  if (!pause) return;
  moments.end(pause.item, ev.seq, tOf(ev));
  const lg = pen.group("labels", ev, "resume-label");
  // At its moment, beside the band's end, right or left of the lifeline (in a compare lane, only
  // there: pen.js).
  const y = L.y(tOf(ev)) - 6 * L.scale;
  const left = { x: pause.x - 30 * L.scale, anchor: "end" };
  pen.label(lg, said(ev).label, pause.x + 10 * L.scale, y, "start", "muted", { alt: [left] });
}

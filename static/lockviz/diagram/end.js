// The end of a run: every open bar, band and pending request closes where the run ended; the
// bars become obstacles for the labels still to come; the verdict's overlaps (two clients
// believing they held the lock at once) are cross-hatched across the diagram with the
// narrator's words; an accepted stale write the narrator did not flag is flagged now.

import { el, lines, said, secs } from "./svg.js";

/** Close the run at endMs (default: its latest event); `ev` is the event that ended it
 * (run_finished, run_failed) or null when the page says so (LockDiagram.finish). */
export function finish(d, verdict, endMs, ev) {
  const { layout: L, pen, moments, state } = d;
  const t = Number.isFinite(endMs) ? endMs : state.now;
  ev = ev || { kind: "run_finished", actor: "lab", t_ms: t, verdict, seq: Infinity };
  state.now = Math.max(state.now, t);
  const close = (item, t0) => {
    if (!moments.closed(item)) moments.end(item, ev.seq, Math.max(t0, t));
  };
  for (const l of state.leases)
    if (!moments.closed(l.item)) {
      l.by = "end";
      close(l.item, l.t0);
    }
  for (const b of state.beliefs) close(b.item, b.t0);
  for (const p of state.pauses) close(p.item, p.t0);
  for (const f of state.links.concat(state.downs)) close(f.item, f.t0);
  for (const c of state.calls.values())
    if (!moments.closed(c.pending)) moments.end(c.pending, ev.seq, t, { yMid: c.y + L.G.pendingPx });
  state.finished = true;
  barsAsObstacles(d);
  const y = L.y(t),
    G = L.G;
  const g = pen.group("grid", ev, "run-end finish", null, "run-end");
  el("line", { x1: G.axisX, x2: L.narrX - 16, y1: y, y2: y }, g);
  pen.obstacleLine(G.axisX, y, L.narrX - 16, y);
  pen.label(g, said(ev).label || `${secs(t, 2)}`, G.axisX + 8 * L.scale, y + 18 * L.scale, "start", "muted");
  const words = lines(said(ev).mark);
  ((verdict && verdict.overlaps) || []).forEach((o, i) => overlap(d, ev, o, words[i]));
  for (const w of (verdict && verdict.writes) || []) if (w.stale && w.accepted) staleWrite(d, w);
  // A session without a schedule (free play) was drawn for a guess at its length: it ends
  // where it ended, without the empty time below.
  if (d.options.fitToEnd) {
    d.extentMs = t + END_MARGIN_MS;
    if (!d.batch) d.frame.resize(true);
  }
}

const END_MARGIN_MS = 600; // below a fitted end: room for its label

// At the end the bars have their final lengths: labels keep off them from now on (but those drawn
// over the bars, a time mark's words: pushed out, they could be left out on one screen and kept
// on another).
function barsAsObstacles(d) {
  const { layout: L, state } = d;
  const G = L.G;
  const last = (item) => (item.ends.length ? item.ends[item.ends.length - 1].t : state.now);
  for (const l of state.leases) {
    const b = state.beliefs.find((x) => x.lease === l);
    const t1 = Math.max(last(l.item), b ? last(b.item) : 0);
    d.pen.obstacle(l.x + G.beliefX - 1, L.y(l.t0), l.x + G.leaseX + G.leaseW + 1, L.y(t1), true);
  }
}

// Two clients believed they held the lock at once: cross-hatch the whole width, with words.
function overlap(d, ev, o, words) {
  const { layout: L, pen, measure } = d;
  const y0 = L.y(o.start_ms),
    y1 = L.y(Math.max(o.start_ms, o.end_ms)),
    G = L.G;
  const right = L.narrX - 16 * L.scale; // the margin's step badges stay clear
  const g = pen.group("bg", ev, "overlap finish", `${words || ""}: ${o.start_ms} ms to ${o.end_ms} ms`, "overlap");
  const fill = pen.url("overlap");
  el("rect", { class: "band", x: G.axisX, width: right - G.axisX, y: y0, height: y1 - y0, fill }, g);
  d.surface.extend(g, y0, y1);
  for (const yy of [y0, y1]) el("line", { class: "edge", x1: G.axisX, x2: right, y1: yy, y2: yy }, g);
  if (!words) return;
  const lg = pen.group("labels", ev, "overlap-label finish", words);
  const font = measure.font("overlap-label finish", "label overlap-text");
  // In the margin; a compare lane's margin holds only step numbers, so its words go in the band.
  const x = L.lane ? G.axisX + 8 * L.scale : L.narrX + 4 * L.scale;
  const wrapped = measure.wrap(words, font, L.lane ? right - x - 8 * L.scale : L.narrW - 8 * L.scale);
  pen.label(lg, wrapped, x, y0 + 16 * L.scale, "start", "overlap-text", { far: true }); // the run's finding
}

// A stale write the narrator did not see as damage (an event without words): flag it at the end.
function staleWrite(d, w) {
  const at = d.state.writes.get(w.seq);
  if (!at || at.damage) return;
  at.g.classList.add("damaged-write");
  at.g.setAttribute("data-mark", "damaged-write");
  at.damage = true;
}

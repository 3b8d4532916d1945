// The drawing primitives the event handlers use: a group for one event's elements (in its
// layer's chunk, with its tooltip and legend key), a label at its nearest free spot, an obstacle
// labels keep clear of, an arrow's segment, a bar's span in time. It remembers what each event
// drew, so that the replay cursor can mark it.

import { describe, el, lines, tOf } from "./svg.js";

const LANE_REACH = 30; // px at scale 1: how far a label in a compare lane may move from its spot

export class Pen {
  /** `diagram`: its layout, surface, rounds, placer, measure and the event being drawn. */
  constructor(diagram) {
    this.d = diagram;
    this.bySeq = new Map(); // seq → the groups drawn for it
  }

  /** A group of one event's elements, in its layer's chunk; `mark` names its legend entry. */
  group(layer, ev, cls, title, mark) {
    const { surface, layout } = this.d;
    const chunk = surface.chunk(layer, ev.seq);
    const g = el("g", { class: cls, "data-seq": ev.seq === Infinity ? null : ev.seq }, chunk);
    if (mark) g.setAttribute("data-mark", mark);
    if (Number.isFinite(ev.t_ms)) surface.extend(chunk, layout.y(tOf(ev)) - 40, layout.y(tOf(ev)) + 40);
    el("title", {}, g).textContent = title || describe(ev);
    if (ev.seq != null) {
      const list = this.bySeq.get(ev.seq);
      if (list) list.push(g);
      else this.bySeq.set(ev.seq, [g]);
    }
    this.d.rounds.adoptGroup(g, ev);
    return g;
  }

  /** A label at (x, y), or at the nearest free spot (labels.js); null for no words.
   * opts: {alt: [{x, y?, anchor}] (other spots), short (text), far (may move far down), close
   * (stays within `reach` of its spot, or is left out), roam (within `reach` of any of its
   * spots), overBars (drawn over the bars: they neither push it nor take its room), keep (never
   * left out: labels.js), padX, padLeft, reach, onPlace(found)}.
   * In a compare lane a label stays close (unless `far` is true: what the run's end says):
   * a narrow lane has no room to move words far from what they name, where they would pile up
   * under other events; what is left out is in its event's tooltip. */
  label(parent, text, x, y, anchor, cls, opts) {
    const { layout, measure, placer } = this.d;
    const o = opts || {};
    const node = el("text", { class: "label " + (cls || ""), x, y, "text-anchor": anchor }, parent);
    const groupCls = parent.getAttribute("class") || "";
    const label = {
      node,
      lines: Array.isArray(text) ? text : lines(text),
      short: o.short ? lines(o.short) : null,
      font: measure.font(groupCls, "label " + (cls || "")),
      far: o.far,
      overBars: Boolean(o.overBars),
      keep: Boolean(o.keep),
      roam: Boolean(o.roam),
      close: o.close || (layout.lane && o.far !== true),
      spots: [{ x, y, anchor }].concat((o.alt || []).map((a) => ({ x: a.x, y: a.y ?? y, anchor: a.anchor }))),
      minY: layout.G.top - 30 * layout.scale,
      minX: layout.G.axisX + 2,
      maxX: layout.lane ? layout.width - 2 : Infinity, // a compare lane is exactly as wide as it is shown
      padX: o.padX,
      padLeft: o.padLeft,
      onPlace: o.onPlace,
      reach: layout.lane ? Math.min(o.reach || Infinity, LANE_REACH * layout.scale) : o.reach,
    };
    if (!label.lines.length) {
      node.remove();
      return null;
    }
    node.label = label;
    if (this.d.rounds.adoptLabel(label)) return node; // its round is folded already: no room taken
    placer.place(label);
    return node;
  }

  /** A box labels keep clear of; a `bar` (a lease's or belief's, at the run's end): but the
   * labels drawn over the bars. */
  obstacle(x1, y1, x2, y2, bar = false) {
    return this.d.placer.block({ kind: "box", x1, y1, x2, y2, bar });
  }

  /** A horizontal line labels keep 4 px clear of (a cut's zig-zag, the run's end). */
  obstacleLine(x1, y1, x2, y2) {
    return this.obstacle(Math.min(x1, x2), Math.min(y1, y2) - 4, Math.max(x1, x2), Math.max(y1, y2) + 4);
  }

  /** The arrow `line` runs (x1, y1)–(x2, y2) now: labels keep off it (and off where it ran before). */
  segment(line, x1, y1, x2, y2) {
    const { space, placer } = this.d;
    if (line.seg) space.remove(line.seg);
    const seg = {
      kind: "seg",
      ax: x1,
      ay: y1,
      bx: x2,
      by: y2,
      x1: Math.min(x1, x2),
      x2: Math.max(x1, x2),
      y1: Math.min(y1, y2) - 1,
      y2: Math.max(y1, y2) + 1,
    };
    line.seg = seg;
    if (this.d.rounds.adoptSegment(seg)) return seg; // folded already: no room taken
    return placer.block(seg);
  }

  /** A rect from run time t0 to t1. */
  span(rect, t0, t1) {
    const { layout, surface } = this.d;
    const y0 = layout.y(t0),
      y1 = layout.y(Math.max(t0, t1));
    rect.setAttribute("y", y0);
    rect.setAttribute("height", Math.max(0, y1 - y0));
    surface.extend(rect, y0, y1);
  }

  /** A reference to one of this diagram's markers or patterns (frame.js draws them). */
  url(id) {
    return `url(#${this.d.ids}${id})`;
  }
}

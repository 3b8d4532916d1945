// The frame the events are drawn in: markers and hatches, a header and a lifeline per column
// (a button when the page acts on it), the time axis with its ticks, the "now" line, the breaks
// of a long quiet stretch, the lines a page marks at a moment, and the svg's size, which grows
// calmly as a run streams.
//
// Over ~300 lines: all that is drawn around the events reads the same layout and the same
// extent, and its parts (the axis, the breaks, the marks, the lifelines) move together when the
// svg grows (resize).

import { el, secs, set, signedDuration } from "./svg.js";

const ROLE_WORDS = { client: "client", node: "lock node", storage: "storage" };

export class Frame {
  /** `diagram`: its svg, layout, surface, pen, state, the moment shown and its extent in time. */
  constructor(diagram) {
    this.d = diagram;
    this.lifelines = new Map();
    this.height = 0;
    this.marked = []; // the time marks drawn: {mark, line, words}
  }

  /** Draw the empty frame: every lifeline from the start, so nothing moves when events arrive. */
  draw() {
    const d = this.d,
      svg = d.svg,
      L = d.layout;
    el("title", {}, svg).textContent = "Sequence diagram of the lock run";
    this.defs(el("defs", {}, svg));
    d.surface.addLayers(svg);
    this.axis = el("g", { class: "axis" }, d.surface.layers.grid);
    this.nowLine = el("line", { class: "now", x1: L.G.axisX, x2: L.narrX - 16 }, d.surface.layers.grid);
    for (const col of L.cols.values()) this.header(col);
    d.extentMs = Math.max(d.extentMs, L.durationMs, this.pastEnd());
    this.resize(false);
    for (const mark of d.timeMarks) this.timeMark(mark);
  }

  defs(defs) {
    const d = this.d,
      scale = d.layout.scale;
    const marker = (id, path, cls) => {
      const m = el(
        "marker",
        {
          id: d.ids + id,
          class: cls,
          viewBox: "0 0 10 10",
          refX: 9,
          refY: 5,
          markerWidth: 10 * scale,
          markerHeight: 10 * scale,
          markerUnits: "userSpaceOnUse",
          orient: "auto",
        },
        defs,
      );
      el("path", { d: path }, m);
    };
    marker("req", "M0,0 L10,5 L0,10 z", "head head-request");
    marker("rep", "M1,1 L9,5 L1,9", "head head-reply");
    marker("bad", "M1,1 L9,5 L1,9", "head head-failed");
    marker("notify", "M0,1 L10,5 L0,9 z", "head head-notify");
    marker("held", "M8,0 L8,10", "head head-held"); // a bar: it stops here
    const hatch = (id, cls, size, angle, cross) => {
      const p = el(
        "pattern",
        {
          id: d.ids + id,
          class: cls,
          patternUnits: "userSpaceOnUse",
          width: size,
          height: size,
          patternTransform: `rotate(${angle})`,
        },
        defs,
      );
      el("rect", { class: "pat-bg", width: size, height: size }, p);
      el("line", { class: "pat-line", x1: 0, y1: 0, x2: 0, y2: size }, p);
      if (cross) el("line", { class: "pat-line", x1: 0, y1: 0, x2: size, y2: 0 }, p);
    };
    hatch("belief", "hatch-belief", 5, 45);
    hatch("gap", "hatch-gap", 5, 45);
    hatch("pause", "hatch-pause", 8, -45);
    hatch("overlap", "hatch-overlap", 10, 45, true);
    // A cut link is dotted, two holders are cross-hatched: never the same pink area.
    const dots = el(
      "pattern",
      { id: d.ids + "cut", class: "dots-cut", patternUnits: "userSpaceOnUse", width: 6, height: 6 },
      defs,
    );
    el("rect", { class: "pat-bg", width: 6, height: 6 }, dots);
    el("circle", { class: "pat-dot", cx: 3, cy: 3, r: 1.4 }, dots);
  }

  header(col) {
    const d = this.d,
      L = d.layout,
      G = L.G;
    const g = el("g", { class: `lifeline-header ${col.role}`, "data-actor": col.name }, d.surface.layers.lifelines);
    const w = Math.min(L.colW - 20 * L.scale, 150 * L.scale);
    el(
      "rect",
      { x: col.x - w / 2, y: G.headerTop, width: w, height: G.headerH, rx: col.role === "client" ? 10 : 2 },
      g,
    );
    const name = el("text", { class: "name", x: col.x, y: G.headerTop + 21 * L.scale, "text-anchor": "middle" }, g);
    name.textContent = col.name;
    const roleText = el("text", { class: "role", x: col.x, y: G.headerTop + 38 * L.scale, "text-anchor": "middle" }, g);
    roleText.textContent = this.part(col);
    col.roleText = roleText;
    col.header = g;
    const line = el(
      "line",
      { class: `lifeline ${col.role}`, x1: col.x, x2: col.x, y1: G.headerTop + G.headerH },
      d.surface.layers.lifelines,
    );
    this.lifelines.set(col.name, line);
    d.space.add({ kind: "box", x1: col.x - w / 2, x2: col.x + w / 2, y1: 0, y2: G.headerTop + G.headerH + 4 });
    this.headerAction(col);
  }

  /** The header is a button calling the page's onHeader(name, role, element), if it has one. */
  headerAction(col) {
    const g = col.header;
    if (!g) return;
    if (g.act) {
      g.removeEventListener("click", g.act);
      g.removeEventListener("keydown", g.key);
    }
    const options = this.d.options;
    const fn = options.onHeader;
    g.classList.toggle("actionable", !!fn);
    if (!fn) {
      ["tabindex", "role", "aria-haspopup", "aria-description"].forEach((a) => g.removeAttribute(a));
      g.act = g.key = null;
      return;
    }
    g.act = () => options.onHeader(col.name, col.role, g);
    g.key = (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        g.act();
      }
    };
    g.setAttribute("tabindex", "0");
    g.setAttribute("role", "button");
    g.setAttribute("aria-haspopup", "dialog");
    // Named by what it shows (its name and role, or its clock), as a sighted user would say it;
    // what it does is its description.
    g.setAttribute("aria-description", `do something to this ${col.role === "client" ? "client" : "server"}`);
    g.addEventListener("click", g.act);
    g.addEventListener("keydown", g.key);
  }

  /** Grow in chunks (a fifth of the run) and animate, so late events extend the page calmly;
   * to past the run's end at once where it is known (reachEnd). */
  grow(t) {
    const d = this.d;
    if (t <= d.extentMs) return;
    d.extentMs = this.past(Math.max(t, d.endMs));
    if (!d.batch) this.resize(true);
  }

  /** The run's end is known now (LockDiagram.reachEnd): the extent any page holding all its
   * events reaches. */
  reach() {
    const d = this.d;
    if (this.pastEnd() <= d.extentMs) return;
    d.extentMs = this.pastEnd();
    if (!d.batch) this.resize(true);
  }

  /** Where the axis ends for a run whose events went past its schedule to `t`. */
  past(t) {
    return t + Math.max(500, this.d.layout.durationMs * 0.2);
  }

  /** Where it ends for the run's known end: nothing past the schedule if it ended within it. */
  pastEnd() {
    const d = this.d;
    return d.endMs > d.layout.durationMs ? this.past(d.endMs) : 0;
  }

  resize(animate) {
    const d = this.d,
      L = d.layout,
      view = d.view;
    const h = Math.max(200, Math.ceil(L.y(d.extentMs) + L.G.bottom));
    const from = this.height || h;
    this.height = h;
    this.ticks();
    this.lifelineEnds();
    const size = (v) => {
      const height = Math.max(1, Math.round(v));
      d.svg.setAttribute("viewBox", `0 0 ${Math.max(1, L.width)} ${height}`);
      d.svg.setAttribute("width", Math.max(1, L.width));
      d.svg.setAttribute("height", height);
    };
    const still = view.matchMedia && view.matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (!animate || still || from >= h || !view.requestAnimationFrame) return size(h);
    const start = view.performance.now();
    const step = (now) => {
      if (this.height !== h) return; // a newer resize took over
      const k = Math.min(1, (now - start) / 300);
      size(from + (h - from) * k);
      if (k < 1) view.requestAnimationFrame(step);
    };
    view.requestAnimationFrame(step);
  }

  lifelineEnds() {
    const d = this.d;
    for (const [name, line] of this.lifelines) {
      const crash = d.state.crashed.get(name);
      const end = crash && !(crash.seq > d.limit) ? crash.y : this.height - 20;
      set(line, "y2", end); // a lifeline runs the diagram's height: repaint it only if it moved
    }
  }

  // Tick spacing: the smallest round step that leaves ~48 px between labels; none inside a break.
  ticks() {
    if (!this.axis) return;
    const d = this.d,
      L = d.layout,
      G = L.G;
    this.axis.textContent = "";
    const steps = [250, 500, 1000, 2000, 5000, 10000, 30000, 60000];
    const step = steps.find((s) => s * L.px >= 48 * L.scale) || 120000;
    const digits = step < 500 ? 2 : 1;
    const bottom = (this.height || G.top) - 20;
    el("line", { class: "axis-line", x1: G.axisX, x2: G.axisX, y1: G.top - 8, y2: bottom }, this.axis);
    const inBreak = (t) => L.breaks.some((b) => t > b.t0 && t < b.t1);
    for (let t = 0; t <= d.extentMs; t += step) {
      if (inBreak(t)) continue;
      const y = L.y(t);
      el("line", { class: "grid-line", x1: G.axisX, x2: L.width - 8, y1: y, y2: y }, this.axis);
      el("line", { class: "tick", x1: G.axisX - 6, x2: G.axisX, y1: y, y2: y }, this.axis);
      const label = el("text", { class: "tick-label", x: G.axisX - 10, y: y + 5, "text-anchor": "end" }, this.axis);
      label.textContent = secs(t, digits);
    }
  }

  /** A long stretch with nothing happening, drawn short (Layout.breakBefore), with its length. */
  drawBreak(b, ev) {
    const { layout: L, pen, surface } = this.d;
    const y0 = L.y(b.t0),
      y1 = L.y(b.t1),
      G = L.G;
    const g = pen.group("grid", { seq: ev.seq }, "time-break", `${secs(b.t1 - b.t0, 1)} with nothing to draw`, "break");
    el("rect", { class: "break-band", x: G.axisX - 30, y: y0, width: L.width - G.axisX + 22, height: y1 - y0 }, g);
    surface.extend(g, y0, y1);
    const wave = (y) => {
      const pts = [];
      for (let x = G.axisX - 30, i = 0; x <= L.width - 8; x += 10, i++) pts.push(`${x},${y + (i % 2 ? 3 : -3)}`);
      return pts.join(" ");
    };
    el("polyline", { class: "break-edge", points: wave(y0) }, g);
    el("polyline", { class: "break-edge", points: wave(y1) }, g);
    const words = `\u22ef ${secs(b.t1 - b.t0, 1)} \u22ef`;
    pen.label(g, words, G.axisX + 8, (y0 + y1) / 2 + 5, "start", "break-label", { far: false });
    this.ticks();
    // A mark after the break moves up with the rest (a fork of a session left idle parts after
    // a break: its line was drawn where the stretch, drawn short, would have ended).
    const after = this.marked.filter((m) => m.mark.tMs > b.t0);
    this.marked = this.marked.filter((m) => !after.includes(m));
    for (const m of after) {
      m.line.remove();
      m.words.remove();
      if (m.text && m.text.label) this.d.placer.unplace(m.text.label);
      this.timeMark(m.mark);
    }
  }

  /** A dashed line across the diagram at run time mark.tMs, with the mark's words. */
  timeMark(mark) {
    const L = this.d.layout;
    const y = L.y(mark.tMs);
    const g = el("g", { class: "time-mark" }, this.d.surface.layers.grid);
    el("line", { class: "time-mark-line", x1: L.G.axisX, x2: L.width - 8, y1: y, y2: y }, g);
    // Its words: a label over the bars (with a label's halo; under a bar across the moment they
    // were cut: "what if…? ▮ rts from here"), near the line, above or below it, left or right,
    // or anywhere else along it, wherever no other label or arrow is (arrows drawn later move
    // it, as any label). They have no tooltip to keep them, so they are left out only where the
    // whole line is crowded: at the moment a fork parts its grant's arrows, their labels and the
    // step's caption take the two ends (a student's diagram lacked the words the projector drew).
    const s = L.scale;
    const words = el("g", { class: "time-mark time-mark-words" }, this.d.surface.layers.labels);
    const left = L.G.axisX + 6,
      right = L.width - 10;
    const above = y - 5,
      below = y + 16 * s;
    const alt = [
      { x: left, y: below, anchor: "start" },
      { x: right, y: above, anchor: "end" },
      { x: right, y: below, anchor: "end" },
    ];
    const font = this.d.measure.font("time-mark time-mark-words", "label time-mark-label");
    const wide = this.d.measure.width(mark.text, font);
    for (let x = left + 20 * s; x + wide <= right; x += 20 * s)
      alt.push({ x, y: above, anchor: "start" }, { x, y: below, anchor: "start" });
    const text = this.d.pen.label(words, mark.text, left, above, "start", "time-mark-label", {
      alt,
      close: true,
      roam: true,
      overBars: true,
      reach: 24 * s,
    });
    this.marked.push({ mark, line: g, words, text });
  }

  /** What depends on the moment shown: where lifelines end, the clocks in the headers, "now". */
  show() {
    const d = this.d,
      L = d.layout;
    this.lifelineEnds();
    for (const col of L.cols.values()) this.headerClock(col);
    const y = L.y(d.moments.tNow);
    set(this.nowLine, "y1", y);
    set(this.nowLine, "y2", y);
    set(this.nowLine, "display", d.state.finished && d.limit === Infinity ? "none" : "inline");
  }

  // A lifeline's part at the moment shown: a group's server says its own (run_started's `roles`,
  // then each `role` event: handlers/groups.js keeps them), every other its kind of lifeline.
  part(col) {
    let part = (this.d.run.roles || {})[col.name];
    for (const entry of this.d.state.headerRoles.get(col.name) || [])
      if (!(entry.seq > this.d.limit)) part = entry.role;
    return part || ROLE_WORDS[col.role];
  }

  // In each header, instead of its part: the lifeline's clock at the moment shown
  // (handlers/clocks.js keeps each lifeline's clock changes).
  headerClock(col) {
    if (!col.roleText) return;
    let state = { offset: 0, rate: 1 };
    for (const entry of this.d.state.headerWords.get(col.name) || [])
      if (!(entry.seq > this.d.limit)) state = entry.state;
    const parts = [];
    if (state.offset) parts.push(`clock ${signedDuration(state.offset)}`);
    if (state.rate !== 1) parts.push(`${parts.length ? "" : "clock "}runs \u00d7${state.rate}`);
    const text = parts.length ? parts.join(" \u00b7 ") : this.part(col);
    if (col.roleText.textContent !== text) col.roleText.textContent = text;
    col.roleText.classList.toggle("clock-state", parts.length > 0);
  }
}

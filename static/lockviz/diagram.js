/*
 * lockviz: the live sequence diagram of one lock run.
 *
 * Renders the events of docs/events.md into an <svg> as a vertical sequence diagram where
 * time flows down in proportion: lifelines for clients, lock nodes and storage, request/reply
 * arrows, and for each grant a lease bar (what the server granted) beside a belief bar (what
 * the client thinks). Where the belief outlives the lease the client acts on a lock it no
 * longer holds; that gap is the lesson, so it gets its own colour, hatch and label.
 *
 * Drawing is incremental so a streaming run never jumps: column positions are fixed up front,
 * each event draws its own elements and only updates shapes it ends (a pending arrow, an open
 * bar). Every element group carries data-seq for highlight/replay; showUpTo re-renders the
 * prefix instead of hiding, so bars that later events end are drawn as they were at that step.
 *
 * Faults are drawn where they act: a cut link is a shaded strip between the client's and the
 * node's lifelines from its `link` event until the link heals (`cut-link`), a delayed link gets
 * a label (`delayed-link`), a crashed node's lifeline is broken until it restarts (`node-down`),
 * and clock jumps and rates show as badges, with each lifeline's current clock in its header.
 * Kinds it does not know are kept (tooltips, seq) but not drawn, and never break the drawing.
 *
 * API: new LockDiagram(svg, {clients, nodes, storage, durationMs, pxPerMs, columnWidth,
 * narrationWidth, backend, onHeader}); add(event), addAll(events), reset(), finish(verdict, endMs?),
 * highlight(seq), showUpTo(seq), setHeaderAction(fn), markTime(tMs, text). onHeader(name, role,
 * element), given as an option or later by setHeaderAction, makes each lifeline header a button
 * (click, Enter or Space): the live pages open their fault menus with it. markTime draws a line
 * across the diagram at a moment, with its words from the server (where a fork parts from its
 * original), kept through redraws and resets.
 */
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const XHTML_NS = "http://www.w3.org/1999/xhtml";
  const DEFAULTS = { pxPerMs: 0.12, columnWidth: 220, narrationWidth: 230, durationMs: 4000, storage: "storage" };

  // Geometry in px. Bars and their labels sit LEFT of a client's lifeline, so arrows, which
  // leave to the right towards the servers, never cross them.
  const G = {
    axisX: 64, firstCol: 232, serverRight: 196, top: 84, bottom: 60, headerTop: 10, headerH: 46,
    leaseX: -14, leaseW: 10, beliefX: -25, beliefW: 8, barLabelX: -32,
    bandLeft: -84, bandRight: 112, // pause band across a client's column
    minPair: 8, fastPx: 22, // a request/reply pair spans at least this, so a 0.5 ms round trip still shows two arrows
    pendingPx: 6, gapLabelPx: 12, labelSearchPx: 120,
    mergeMs: 40, // link events of one click (a Redlock partition of 3 nodes) share one label
  };

  const HANDLERS = {
    run_started: "_runStarted", request: "_request", reply: "_reply", granted: "_granted",
    expired: "_serverEnd", deleted: "_serverEnd", released: "_beliefEnd", lost: "_beliefEnd",
    crashed: "_crashed", paused: "_paused", resumed: "_resumed", step: "_step",
    clock_jumped: "_clockJumped", acquire_failed: "_acquireFailed", run_failed: "_runFailed",
    run_finished: "_runFinished", link: "_link", restarted: "_restarted", clock_rate: "_clockRate",
    note: "_noteMark",
  };
  const CLIENT_KINDS = new Set(["request", "reply", "granted", "released", "lost", "crashed", "paused",
    "resumed", "acquire_failed", "extended"]);
  const SERVER_KINDS = new Set(["expired", "deleted", "clock_jumped"]);
  let instances = 0;

  // ---- small helpers -------------------------------------------------------------------

  function el(tag, attrs, parent) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const key in attrs) if (attrs[key] != null) node.setAttribute(key, attrs[key]);
    if (parent) parent.appendChild(node);
    return node;
  }
  const tOf = (ev) => (Number.isFinite(ev.t_ms) ? Math.max(0, ev.t_ms) : 0);
  const secs = (ms, digits) => (ms / 1000).toFixed(digits) + " s";
  const uniq = (list) => Array.from(new Set(list));
  const hits = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
  const bySeq = (a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity);

  function signedDuration(ms) {
    const sign = ms < 0 ? "\u2212" : "+";
    const abs = Math.abs(ms);
    return sign + (abs >= 1000 ? +(abs / 1000).toFixed(1) + " s" : abs + " ms");
  }

  // The tooltip: every field of the event, so hovering answers "what exactly happened here".
  function describe(ev) {
    const head = `#${ev.seq ?? "?"} ${ev.kind} \u00b7 ${ev.actor} \u00b7 t = ${tOf(ev).toFixed(1)} ms`;
    const said = ev.said && ev.said.text ? [ev.said.text] : [];
    const rest = Object.keys(ev).filter((k) => !["seq", "t_ms", "actor", "kind", "said"].includes(k))
      .map((k) => `${k}: ${typeof ev[k] === "object" ? JSON.stringify(ev[k]) : ev[k]}`);
    return [head].concat(said, rest).join("\n");
  }

  // Every word on the diagram comes from the server's narrator (lockviz/runs/narrator.py), with
  // the event: `said.label` on its arrow or beside its mark, `said.mark` at the storage.
  const label = (ev) => (ev.said && ev.said.label) || "";

  // ---- the diagram ---------------------------------------------------------------------

  class LockDiagram {
    constructor(svg, options) {
      if (!svg || svg.namespaceURI !== SVG_NS) throw new TypeError("LockDiagram needs an <svg> element");
      this.svg = svg;
      this.options = Object.assign({}, options || {});
      this.px = this.options.pxPerMs || DEFAULTS.pxPerMs;
      this.colW = this.options.columnWidth || DEFAULTS.columnWidth;
      this.narrW = this.options.narrationWidth || DEFAULTS.narrationWidth;
      this.ids = "lv" + ++instances + "-"; // marker/pattern ids are document-global
      svg.classList.add("lock-diagram");
      if (!svg.hasAttribute("role")) svg.setAttribute("role", "group");
      this.reset();
    }

    /** Draw one event; returns false for a seq already seen, so a resume never draws twice. */
    add(ev) {
      if (!ev || typeof ev !== "object") return false;
      if (ev.seq != null && this.seen.has(ev.seq)) return false;
      if (ev.seq != null) this.seen.add(ev.seq);
      this.events.push(ev);
      const relayout = ev.kind === "run_started" ? this._adoptRun(ev) : this._discover(ev);
      this._grow(tOf(ev));
      if (relayout) this._rerender();
      else if (!(ev.seq > this.limit)) this._draw(ev);
      return true;
    }

    addAll(events) { return Array.from(events || []).filter((ev) => this.add(ev)).length; }

    /** Forget every event (replays reuse the diagram); constructor options stay. */
    reset() {
      Object.assign(this, { events: [], seen: new Set(), limit: Infinity, current: null, run: {},
        found: { clients: [], nodes: [] }, extentMs: 0, manualFinish: null });
      this._rerender();
    }

    /** End of run: close open bars at endMs (default: latest event), shade overlaps, flag stale writes. */
    finish(verdict, endMs) {
      const ev = this.finishEvent; // run_finished already drawn: redraw with its seq and time
      if (ev) return this._finish(verdict || ev.verdict, endMs ?? tOf(ev), ev);
      this.manualFinish = { verdict, endMs };
      this._finish(verdict, endMs, null);
    }

    /** Mark the elements of one event as current (replay cursor); null clears. */
    highlight(seq) {
      this.current = seq;
      this.svg.querySelectorAll(".current").forEach((n) => n.classList.remove("current"));
      if (seq == null) return [];
      const found = Array.from(this.svg.querySelectorAll(`[data-seq="${seq}"]`));
      found.forEach((n) => n.classList.add("current"));
      return found;
    }

    /** Make the lifeline headers buttons that call fn(name, role, element); null makes them plain again. */
    setHeaderAction(fn) {
      this.options.onHeader = fn || null;
      this._rerender();
    }

    /** A dashed line across the diagram at run time tMs, with `text` (e.g. where a fork parts). */
    markTime(tMs, text) {
      const mark = { tMs: Number(tMs) || 0, text: String(text || "") };
      this.timeMarks = (this.timeMarks || []).concat([mark]);
      this._timeMark(mark);
    }

    _timeMark(mark) {
      const y = this._y(mark.tMs);
      const g = el("g", { class: "time-mark" }, this.layers.grid);
      el("line", { class: "time-mark-line", x1: G.axisX, x2: this.width - 8, y1: y, y2: y }, g);
      el("text", { class: "time-mark-label", x: G.axisX + 6, y: y - 5 }, g).textContent = mark.text;
    }

    /** Show the run as it was after event `seq` (null/Infinity: everything). */
    showUpTo(seq) {
      this.limit = seq == null ? Infinity : seq;
      this._rerender();
    }

    // ---- layout --------------------------------------------------------------------------

    // run_started fills in what the constructor did not say; relayout only if it changed something.
    _adoptRun(ev) {
      const o = this.options;
      this.run = ev;
      if (!o.durationMs && ev.duration_ms) this.extentMs = 0;
      return !o.clients || !o.nodes || !o.storage || !o.durationMs;
    }

    // An actor nobody announced still gets a column (appended, so this is the one case that relayouts).
    _discover(ev) {
      const known = (n) => this.cols.has(n);
      const fresh = [];
      if (CLIENT_KINDS.has(ev.kind) && !known(ev.actor)) fresh.push(["clients", ev.actor]);
      if (SERVER_KINDS.has(ev.kind) && !known(ev.actor)) fresh.push(["nodes", ev.actor]);
      const server = ev.kind === "request" ? ev.to : ev.kind === "reply" ? ev.from : null;
      if (server && !known(server)) fresh.push(["nodes", server]);
      if (ev.holder && !known(ev.holder)) fresh.push(["clients", ev.holder]);
      fresh.forEach(([role, name]) => this.found[role].push(name));
      return fresh.length > 0;
    }

    _layout() {
      const o = this.options, r = this.run;
      this.storage = o.storage || r.storage || DEFAULTS.storage;
      this.durationMs = o.durationMs || r.duration_ms || DEFAULTS.durationMs;
      this.backend = o.backend || r.backend;
      const clients = uniq((o.clients || r.clients || []).concat(this.found.clients));
      const nodes = uniq((o.nodes || r.nodes || []).concat(this.found.nodes)).filter((n) => n !== this.storage);
      const cols = clients.map((n) => [n, "client"]).concat(nodes.map((n) => [n, "node"]), [[this.storage, "storage"]]);
      this.cols = new Map(cols.map(([name, role], i) => [name, { name, role, x: G.firstCol + i * this.colW }]));
      this.narrX = G.firstCol + (cols.length - 1) * this.colW + G.serverRight;
      this.width = this.narrX + this.narrW + 12;
    }

    _y(t) { return G.top + Math.max(0, t) * this.px; }
    _x(name) { return this.cols.get(name) ? this.cols.get(name).x : G.firstCol; }

    _rerender() {
      Object.assign(this, { calls: new Map(), early: new Map(), leases: [], beliefs: [], pauses: [],
        pendingEnds: [], writes: new Map(), boxes: [], crashed: new Map(), now: 0, finished: false,
        finishEvent: null, finishBoxes: null, links: [], linkNotes: [], downs: [], clocks: new Map() });
      this._layout();
      this._frame();
      this.events.filter((e) => !(e.seq > this.limit)).sort(bySeq).forEach((e) => this._draw(e));
      if (this.manualFinish && this.limit === Infinity) {
        this._finish(this.manualFinish.verdict, this.manualFinish.endMs, null);
      }
      if (this.current != null) this.highlight(this.current);
    }

    _frame() {
      this.svg.textContent = "";
      el("title", {}, this.svg).textContent = "Sequence diagram of the lock run";
      this._defs(el("defs", {}, this.svg));
      this.layers = {};
      for (const name of ["bg", "grid", "lifelines", "bars", "arrows", "marks", "labels"]) {
        this.layers[name] = el("g", { class: "layer-" + name }, this.svg);
      }
      this.axis = el("g", { class: "axis" }, this.layers.grid);
      this.nowLine = el("line", { class: "now", x1: G.axisX, x2: this.narrX - 16 }, this.layers.grid);
      this.lifelines = new Map();
      for (const col of this.cols.values()) this._header(col);
      this.extentMs = Math.max(this.extentMs, this.durationMs);
      this.height = 0;
      this._resize(false);
      for (const mark of this.timeMarks || []) this._timeMark(mark);
    }

    _defs(defs) {
      const marker = (id, d, cls) => {
        const m = el("marker", { id: this.ids + id, class: cls, viewBox: "0 0 10 10", refX: 9, refY: 5,
          markerWidth: 10, markerHeight: 10, markerUnits: "userSpaceOnUse", orient: "auto" }, defs);
        el("path", { d }, m);
      };
      marker("req", "M0,0 L10,5 L0,10 z", "head head-request");
      marker("rep", "M1,1 L9,5 L1,9", "head head-reply");
      marker("bad", "M1,1 L9,5 L1,9", "head head-failed");
      const hatch = (id, cls, size, angle, cross) => {
        const p = el("pattern", { id: this.ids + id, class: cls, patternUnits: "userSpaceOnUse",
          width: size, height: size, patternTransform: `rotate(${angle})` }, defs);
        el("rect", { class: "pat-bg", width: size, height: size }, p);
        el("line", { class: "pat-line", x1: 0, y1: 0, x2: 0, y2: size }, p);
        if (cross) el("line", { class: "pat-line", x1: 0, y1: 0, x2: size, y2: 0 }, p);
      };
      hatch("belief", "hatch-belief", 5, 45);
      hatch("gap", "hatch-gap", 5, 45);
      hatch("pause", "hatch-pause", 8, -45);
      hatch("overlap", "hatch-overlap", 10, 45, true);
    }

    _url(id) { return `url(#${this.ids}${id})`; }

    _header(col) {
      const g = el("g", { class: `lifeline-header ${col.role}`, "data-actor": col.name }, this.layers.lifelines);
      const w = Math.min(this.colW - 30, 150);
      el("rect", { x: col.x - w / 2, y: G.headerTop, width: w, height: G.headerH, rx: col.role === "client" ? 10 : 2 }, g);
      el("text", { class: "name", x: col.x, y: G.headerTop + 21, "text-anchor": "middle" }, g).textContent = col.name;
      const role = { client: "client", node: "lock node", storage: "storage" }[col.role];
      const roleText = el("text", { class: "role", x: col.x, y: G.headerTop + 38, "text-anchor": "middle" }, g);
      roleText.textContent = role;
      col.roleText = roleText;
      const line = el("line", { class: `lifeline ${col.role}`, x1: col.x, x2: col.x, y1: G.headerTop + G.headerH }, this.layers.lifelines);
      this.lifelines.set(col.name, line);
      if (this.options.onHeader) this._headerButton(g, col);
    }

    _headerButton(g, col) {
      const act = () => this.options.onHeader(col.name, col.role, g);
      g.classList.add("actionable");
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-haspopup", "dialog");
      g.setAttribute("aria-label", `${col.name}: do something to this ${col.role === "client" ? "client" : "server"}`);
      g.addEventListener("click", act);
      g.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); act(); }
      });
    }

    // Grow in chunks (a fifth of the run) and animate, so late events extend the page calmly.
    _grow(t) {
      if (t <= this.extentMs) return;
      this.extentMs = t + Math.max(500, this.durationMs * 0.2);
      this._resize(true);
    }

    _resize(animate) {
      const h = Math.ceil(this._y(this.extentMs) + G.bottom);
      const from = this.height || h;
      this.height = h;
      this._drawAxis();
      for (const [name, line] of this.lifelines) line.setAttribute("y2", this.crashed.get(name) ?? h - 20);
      const set = (v) => {
        this.svg.setAttribute("viewBox", `0 0 ${this.width} ${v}`);
        this.svg.setAttribute("width", this.width);
        this.svg.setAttribute("height", v);
      };
      const still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      if (!animate || still || from >= h || !window.requestAnimationFrame) return set(h);
      const start = performance.now();
      const step = (now) => {
        if (this.height !== h) return; // a newer resize took over
        const k = Math.min(1, (now - start) / 300);
        set(Math.round(from + (h - from) * k));
        if (k < 1) requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    }

    // Tick spacing: the smallest round step that leaves ~48 px between labels.
    _drawAxis() {
      this.axis.textContent = "";
      const step = [250, 500, 1000, 2000, 5000, 10000, 30000].find((s) => s * this.px >= 48) || 60000;
      const digits = step < 500 ? 2 : 1;
      el("line", { class: "axis-line", x1: G.axisX, x2: G.axisX, y1: G.top - 8, y2: this.height - 20 }, this.axis);
      for (let t = 0; t <= this.extentMs; t += step) {
        const y = this._y(t);
        el("line", { class: "grid-line", x1: G.axisX, x2: this.width - 8, y1: y, y2: y }, this.axis);
        el("line", { class: "tick", x1: G.axisX - 6, x2: G.axisX, y1: y, y2: y }, this.axis);
        el("text", { class: "tick-label", x: G.axisX - 10, y: y + 5, "text-anchor": "end" }, this.axis).textContent = secs(t, digits);
      }
    }

    // ---- drawing primitives --------------------------------------------------------------

    _group(layer, ev, cls, title) {
      const g = el("g", { class: cls, "data-seq": ev.seq }, this.layers[layer]);
      el("title", {}, g).textContent = title || describe(ev);
      return g;
    }

    // A text label at (x, y) or, if another label holds that spot, the nearest free one (see
    // _free): labels of events a few ms apart must not print over each other.
    // `alt` ({x, anchor}) is a second spot on the same line, tried before pushing the label down.
    _label(parent, text, x, y, anchor, cls, alt) {
      const lines = Array.isArray(text) ? text : [text];
      const node = el("text", { class: "label " + (cls || ""), x, y, "text-anchor": anchor }, parent);
      lines.forEach((line, i) => { el("tspan", { x, dy: i ? "1.2em" : null }, node).textContent = line; });
      let box = this._measure(node, lines, x, y, anchor);
      let dy = this._free(box, true);
      if (dy == null && alt) {
        const w = box.x2 - box.x1, x1 = alt.anchor === "end" ? alt.x - w + 2 : alt.x - 2;
        const altBox = { x1, x2: x1 + w, y1: box.y1, y2: box.y2 };
        dy = this._free(altBox, true);
        if (dy != null) {
          box = altBox;
          node.setAttribute("text-anchor", alt.anchor);
          [node].concat(Array.from(node.children)).forEach((n) => n.setAttribute("x", alt.x));
        }
      }
      if (dy == null) dy = this._free(box, false);
      if (dy) node.setAttribute("transform", `translate(0 ${dy})`);
      node.labelDy = dy;
      node.labelBox = { x1: box.x1, x2: box.x2, y1: box.y1 + dy, y2: box.y2 + dy };
      this.boxes.push(node.labelBox);
      return node;
    }

    _measure(node, lines, x, y, anchor) {
      let b = null;
      try { b = node.getBBox(); } catch (e) { b = null; } // detached or hidden svg: estimate instead
      if (b && b.width > 0) return { x1: b.x - 2, y1: b.y, x2: b.x + b.width + 2, y2: b.y + b.height };
      const w = Math.max(...lines.map((l) => l.length)) * 7.5;
      const x1 = anchor === "end" ? x - w : anchor === "middle" ? x - w / 2 : x;
      return { x1, y1: y - 13, x2: x1 + w, y2: y - 13 + lines.length * 17 };
    }

    // The vertical shift that frees `box`: small nudges either way (a label 4 px off still reads
    // as its arrow's), then, unless `near`, further down. null if near and nothing is free.
    _free(box, near) {
      const tries = [0, -2, 2, -4, 4, -6, 6];
      if (!near) for (let dy = 8; dy <= G.labelSearchPx; dy += 2) tries.push(dy);
      for (const dy of tries) {
        const moved = { x1: box.x1, x2: box.x2, y1: box.y1 + dy, y2: box.y2 + dy };
        if (!this.boxes.some((b) => hits(b, moved))) return dy;
      }
      return near ? null : 0;
    }

    _obstacle(x1, y1, x2, y2) { this.boxes.push({ x1, y1, x2, y2 }); } // a mark labels keep clear of

    _span(rect, t0, t1) {
      const y0 = this._y(t0);
      rect.setAttribute("y", y0);
      rect.setAttribute("height", Math.max(0, this._y(Math.max(t0, t1)) - y0));
    }

    _draw(ev) {
      if (ev.kind !== "run_finished") this.now = Math.max(this.now, tOf(ev));
      const handler = HANDLERS[ev.kind];
      try {
        if (handler) this[handler](ev);
      } catch (err) { // an odd event (an old export, a new kind's cousin) must not stop the drawing
        console.warn("lockviz: could not draw event", ev.seq, ev.kind, err);
      }
      this._refresh();
    }

    // Open bars and bands reach down to the latest event: the diagram's "now". Closed ones are
    // skipped once drawn at their final size (touching every bar per event is quadratic).
    _refresh() {
      const stale = (item, sig) => item.t1 == null || item.drawn !== (item.drawn = sig);
      for (const l of this.leases) {
        if (!stale(l, l.t1)) continue;
        this._span(l.rect, l.t0, l.t1 ?? this.now);
        l.g.classList.toggle("open", l.t1 == null);
      }
      for (const b of this.beliefs) if (stale(b, `${b.t1}|${b.lease.t1}`)) this._refreshBelief(b);
      for (const p of this.pauses) if (stale(p, p.t1)) this._span(p.rect, p.t0, p.t1 ?? this.now);
      for (const f of this.links.concat(this.downs)) if (stale(f, f.t1)) this._spanFault(f);
      const y = this._y(this.now);
      this.nowLine.setAttribute("y1", y);
      this.nowLine.setAttribute("y2", y);
      this.nowLine.style.display = this.finished ? "none" : "";
    }

    // The belief bar is hatched while a lease backs it; past the lease's end it switches to the
    // warning hatch and says so, because that stretch is where the client is wrong.
    _refreshBelief(b) {
      const end = b.t1 ?? this.now;
      const leaseEnd = b.lease.t1 ?? Infinity;
      this._span(b.rect, b.t0, Math.min(end, leaseEnd));
      b.g.classList.toggle("open", b.t1 == null);
      const tiny = !(this._y(end) - this._y(leaseEnd) >= 2); // a release's sub-ms lag is not a gap
      if (b.gap) b.gap.style.display = tiny ? "none" : "";
      if (tiny) return;
      if (!b.gap) {
        b.gap = this._group("bars", { seq: b.lease.endSeq }, "belief-gap",
          `${b.client} believes it holds the lock, but the server ended the lease at ${leaseEnd.toFixed(1)} ms`);
        b.gapRect = el("rect", { class: "bar", x: b.x + G.beliefX, width: G.beliefW, fill: this._url("gap") }, b.gap);
        // The empty, dashed lease slot beside it says "no lease here" in shape, not only colour.
        b.ghost = el("rect", { class: "ghost", x: b.x + G.leaseX, width: G.leaseW }, b.gap);
      }
      this._span(b.gapRect, leaseEnd, end);
      this._span(b.ghost, leaseEnd, end);
      if (!b.gapLabel && this._y(end) - this._y(leaseEnd) >= G.gapLabelPx) {
        const lg = this._group("labels", { seq: b.lease.endSeq }, "belief-gap-label", b.gap.firstChild.textContent);
        b.gapLabel = this._label(lg, ["believes it holds", "(lease gone)"], b.x + G.barLabelX, this._y(leaseEnd) + 15, "end", "gap-label");
      }
    }

    // ---- event handlers ------------------------------------------------------------------

    _runStarted(ev) { this.backend = this.options.backend || ev.backend; }

    _request(ev) {
      const x1 = this._x(ev.actor), x2 = this._x(ev.to), dir = x2 >= x1 ? 1 : -1, y = this._y(tOf(ev));
      const g = this._group("arrows", ev, "request pending");
      const line = el("line", { class: "arrow", x1: x1 + dir * 2, y1: y, x2: x2 - dir * 3, y2: y + G.pendingPx,
        "marker-end": this._url("req") }, g);
      const lg = this._group("labels", ev, "request-label");
      const text = this._label(lg, label(ev), x1 + dir * 8, y - 5, dir > 0 ? "start" : "end", "",
        { x: x2 - dir * 16, anchor: dir > 0 ? "end" : "start" }); // a fan-out (Redlock) labels at the heads
      const key = ev.actor + "#" + ev.call;
      this.calls.set(key, { req: ev, g, line, lg, label: text, x1, x2, dir, y });
      const early = this.early.get(key); // its reply overtook it in seq order
      if (early) { this.early.delete(key); this._reply(early); }
    }

    // The request arrow lands on the server half-way through the round trip; the reply leaves from there.
    _reply(ev) {
      const key = ev.actor + "#" + ev.call;
      const call = this.calls.get(key);
      if (!call) { this.early.set(key, ev); return; }
      const yRep = Math.max(this._y(tOf(ev)), call.y + G.minPair);
      const yMid = (call.y + yRep) / 2;
      call.line.setAttribute("y2", yMid);
      call.g.classList.remove("pending");
      const failed = ev.ok === false || ev.accepted === false || !!ev.error;
      const g = this._group("arrows", ev, "reply" + (failed ? " failed" : ""));
      el("line", { class: "arrow", x1: call.x2 - call.dir * 2, y1: yMid, x2: call.x1 + call.dir * 3, y2: yRep,
        "marker-end": this._url(failed ? "bad" : "rep") }, g);
      const lg = this._group("labels", ev, "reply-label" + (failed ? " failed" : ""));
      if (yRep - call.y > G.fastPx || !this._inlineReply(lg, call, label(ev))) {
        this._label(lg, label(ev), call.x1 + call.dir * 10, yRep + 16, call.dir > 0 ? "start" : "end");
      }
      if (ev.op === "write") this._write(call.req, ev, call.x2, yMid);
    }

    // A quick round trip is one line of text, "SET NX PX 2000 → OK token 33", on the request's
    // label line: two stacked labels per call would not fit between calls 200 ms apart.
    _inlineReply(lg, call, text) {
      const anchor = call.dir > 0 ? "start" : "end";
      const at = call.dir > 0 ? call.label.labelBox.x2 + 4 : call.label.labelBox.x1 - 4;
      const node = el("text", { class: "label inline", x: at, y: call.y - 5, "text-anchor": anchor,
        transform: call.label.getAttribute("transform") }, lg);
      node.textContent = call.dir > 0 ? `\u2192 ${text}` : `${text} \u2190`;
      const box = this._measure(node, [node.textContent], at, call.y - 5, anchor);
      const moved = { x1: box.x1, x2: box.x2, y1: box.y1 + call.label.labelDy, y2: box.y2 + call.label.labelDy };
      const roomy = call.dir > 0 ? moved.x2 <= call.x2 - 3 : moved.x1 >= call.x2 + 3;
      if (!roomy || this.boxes.some((b) => hits(b, moved))) { node.remove(); return false; }
      node.labelBox = moved;
      this.boxes.push(moved);
      return true;
    }

    // What the storage did with a write, drawn on its lifeline: shape and words, not only colour.
    _write(req, rep, x, y) {
      const rejected = rep.accepted === false;
      const text = (rep.said && rep.said.mark) || "";
      const g = this._group("marks", rep, rejected ? "rejected-write" : "write-accepted");
      g.setAttribute("role", "img");
      g.setAttribute("aria-label", rejected ? `Write ${req.value ?? ""} rejected: ${rep.reason || ""}` : text);
      if (rejected) {
        const r = 11, pts = Array.from({ length: 8 }, (_, i) => Math.PI / 8 + (i * Math.PI) / 4)
          .map((a) => `${(x + r * Math.cos(a)).toFixed(1)},${(y + r * Math.sin(a)).toFixed(1)}`);
        el("polygon", { class: "octagon", points: pts.join(" ") }, g); // a stop sign
        el("path", { class: "cross", d: `M${x - 5},${y - 5} L${x + 5},${y + 5} M${x + 5},${y - 5} L${x - 5},${y + 5}` }, g);
        this._obstacle(x - r, y - r, x + r, y + r);
      } else {
        el("rect", { class: "square", x: x - 6, y: y - 6, width: 12, height: 12 }, g);
        this._obstacle(x - 6, y - 6, x + 6, y + 6);
      }
      this._label(g, text, x + 18, y + 5, "start", rejected ? "rejected-label" : "stored-label");
      const where = { x, y, req, rep };
      this.writes.set(rep.seq, where);
      this.writes.set(req.seq, where);
    }

    _granted(ev) {
      const x = this._x(ev.actor), t0 = tOf(ev);
      for (const old of this.beliefs) if (old.client === ev.actor && old.t1 == null) old.t1 = t0; // superseded
      const lease = { client: ev.actor, node: ev.node, t0, t1: null, by: null, x };
      lease.g = this._group("bars", ev, "lease open");
      lease.rect = el("rect", { class: "bar", x: x + G.leaseX, width: G.leaseW }, lease.g);
      const belief = { client: ev.actor, t0, t1: null, lease, x };
      belief.g = this._group("bars", ev, "belief open");
      belief.rect = el("rect", { class: "bar", x: x + G.beliefX, width: G.beliefW, fill: this._url("belief") }, belief.g);
      this.leases.push(lease);
      this.beliefs.push(belief);
      const lg = this._group("labels", ev, "lease-label");
      this._label(lg, label(ev), x + G.barLabelX, this._y(t0) + 14, "end");
      // A server end that reached the recorder before this grant still belongs to it.
      const end = this.pendingEnds.find((e) => e.holder === ev.actor && tOf(e) >= t0 && this._sameNode(lease, e.actor));
      if (end) {
        this.pendingEnds.splice(this.pendingEnds.indexOf(end), 1);
        this._endLease(lease, end, "server");
      }
    }

    _sameNode(lease, node) {
      const n = lease.node;
      return !n || n === node || (Array.isArray(n) && n.includes(node)) || !this.cols.has(n);
    }

    _endLease(lease, ev, by) { Object.assign(lease, { t1: tOf(ev), by, endSeq: ev.seq }); }

    // expired/deleted: where the SERVER ended a lease. A client-side release end is provisional.
    _serverEnd(ev) {
      const t = tOf(ev);
      const lease = this.leases.slice().reverse().find((l) => l.client === ev.holder && l.t0 <= t + 1 &&
        (l.t1 == null || l.by === "client") && this._sameNode(l, ev.actor));
      if (lease) this._endLease(lease, ev, "server");
      else if (ev.holder) this.pendingEnds.push(ev);
      const x = this._x(ev.actor), y = this._y(t);
      const expired = ev.kind === "expired";
      const g = this._group("marks", ev, expired ? "lease-expired" : "key-deleted");
      if (expired && lease) el("line", { class: "lease-end-link", x1: x - 8, y1: y, x2: lease.x + G.leaseX + G.leaseW + 2, y2: y }, g);
      if (expired) el("path", { class: "hourglass", d: `M${x - 7},${y - 8} h14 l-14,16 h14 z` }, g);
      else el("circle", { class: "deleted-dot", cx: x, cy: y, r: 5 }, g);
      this._obstacle(x - 8, y - 9, x + 8, y + 9);
      const text = expired ? [label(ev), `(holder: ${ev.holder ?? "?"})`] : label(ev);
      this._label(g, text, x + 14, y + 5, "start", expired ? "expired-label" : "muted");
    }

    // released / lost / crashed end what the client believes; a clean release also ends the lease
    // when no server event did (a provisional end that a later expired/deleted overrides).
    _beliefEnd(ev) {
      const t = tOf(ev), x = this._x(ev.actor), y = this._y(t);
      const belief = this.beliefs.slice().reverse().find((b) => b.client === ev.actor && b.t1 == null);
      if (belief) belief.t1 = t;
      if (ev.kind === "released" && ev.ok) {
        const lease = this.leases.find((l) => l.client === ev.actor && l.t1 == null);
        if (lease) this._endLease(lease, ev, "client");
      }
      if (ev.kind === "lost") {
        const g = this._group("marks", ev, "lost");
        el("line", { class: "tick-mark", x1: x - 8, x2: x + 8, y1: y, y2: y }, g);
        this._label(g, label(ev), x + 12, y + 5, "start", "warn-label");
      }
      if (ev.kind === "crashed") {
        const pause = this.pauses.find((p) => p.client === ev.actor && p.t1 == null);
        if (pause) pause.t1 = t;
        const g = this._group("marks", ev, "crash");
        el("path", { class: "cross", d: `M${x - 10},${y - 10} L${x + 10},${y + 10} M${x + 10},${y - 10} L${x - 10},${y + 10}` }, g);
        this._obstacle(x - 11, y - 11, x + 11, y + 11);
        this._label(g, label(ev), x + 16, y + 5, "start", "crash-label");
        this.crashed.set(ev.actor, y);
        this.lifelines.get(ev.actor)?.setAttribute("y2", y);
      }
    }

    _paused(ev) {
      const x = this._x(ev.actor), t0 = tOf(ev);
      const g = this._group("bg", ev, "pause");
      const rect = el("rect", { x: x + G.bandLeft, width: G.bandRight - G.bandLeft, fill: this._url("pause") }, g);
      this.pauses.push({ client: ev.actor, t0, t1: null, rect, g, x });
      const lg = this._group("labels", ev, "pause-label");
      this._label(lg, label(ev), x + 10, this._y(t0) + 18, "start", "pause-text");
    }

    _resumed(ev) {
      const pause = this.pauses.find((p) => p.client === ev.actor && p.t1 == null);
      if (!pause) return;
      pause.t1 = tOf(ev);
      const lg = this._group("labels", ev, "resume-label");
      this._label(lg, label(ev), pause.x + 10, this._y(pause.t1) - 6, "start", "muted");
    }

    // Narration lives in the page's story panel; the margin shows its number and first words,
    // so the diagram stays legible however long the text is.
    _step(ev) {
      if (!ev.say) return;
      const g = this._group("labels", ev, "narration");
      g.dataset.step = ev.index;
      const y = this._y(tOf(ev)), x = this.narrX;
      const box = { x1: x, x2: x + this.narrW, y1: y - 10, y2: y + 10 };
      const dy = this._free(box, false);
      this.boxes.push({ x1: box.x1, x2: box.x2, y1: box.y1 + dy, y2: box.y2 + dy });
      if (dy > 4) el("path", { class: "say-tick", d: `M${x - 14},${y} L${x - 8},${y} L${x - 2},${y + dy}` }, g);
      el("circle", { class: "step-badge", cx: x + 9, cy: y + dy, r: 9 }, g);
      el("text", { class: "step-badge-text", x: x + 9, y: y + dy + 4, "text-anchor": "middle" }, g)
        .textContent = String(ev.index + 1);
      const first = ev.say.split(/(?<=[.:;!?])\s/)[0];
      const short = first.length > 28 ? first.slice(0, 27).trimEnd() + "…" : first;
      el("text", { class: "say-short", x: x + 24, y: y + dy + 4 }, g).textContent = short;
    }

    // A wrapped note in the right margin (HTML in a foreignObject wraps for free), nudged below
    // earlier notes; a leader line keeps it tied to its time when it had to move.
    _note(g, text, y, cls) {
      const x = this.narrX, top = y - 12;
      const fo = el("foreignObject", { x, y: top, width: this.narrW, height: 20 }, g);
      const div = document.createElementNS(XHTML_NS, "div");
      div.setAttribute("class", cls);
      div.textContent = text;
      fo.appendChild(div);
      const h = div.offsetHeight || Math.ceil((text.length * 8) / this.narrW) * 20; // layout px, unscaled
      const box = { x1: x, x2: x + this.narrW, y1: top, y2: top + h };
      const dy = this._free(box, false);
      fo.setAttribute("y", top + dy);
      fo.setAttribute("height", h + 6);
      this.boxes.push({ x1: box.x1, x2: box.x2, y1: box.y1 + dy, y2: box.y2 + dy + 6 });
      if (dy > 4) el("path", { class: "say-tick", d: `M${x - 14},${y} L${x - 8},${y} L${x - 2},${y + dy}` }, g);
      return fo;
    }

    _clockJumped(ev) {
      this._clockState(ev.actor, { offset: ev.offset_ms });
      if (this._role(ev.actor) === "client") return this._clientClock(ev, label(ev), "clock-jump");
      const x = this._x(ev.actor), y = this._y(tOf(ev));
      const g = this._group("marks", ev, "clock-jump");
      const text = label(ev);
      const w = text.length * 7.5 + 14, left = x - 10 - w; // left of the lifeline: its marks go right
      el("line", { class: "clock-link", x1: left + w, x2: x, y1: y, y2: y }, g);
      el("rect", { class: "clock-badge", x: left, y: y - 11, width: w, height: 22, rx: 11 }, g);
      el("text", { class: "clock-badge-text", x: left + w / 2, y: y + 5, "text-anchor": "middle" }, g).textContent = text;
      this._obstacle(left, y - 11, x, y + 11);
    }

    // ---- faults on links, nodes and clocks -----------------------------------------------

    _role(name) { return this.cols.get(name) ? this.cols.get(name).role : null; }

    // A client's SIGKILL ends its belief and lifeline; a server's kill -9 breaks its lifeline
    // until it restarts.
    _crashed(ev) {
      const role = this._role(ev.actor);
      if (role === "node" || role === "storage") this._nodeDown(ev);
      else this._beliefEnd(ev);
    }

    _nodeDown(ev) {
      const x = this._x(ev.actor), t0 = tOf(ev), y = this._y(t0);
      if (this.downs.some((d) => d.node === ev.actor && d.t1 == null)) return;
      const g = this._group("marks", ev, "node-down open", `${ev.actor} killed (kill -9): down until it restarts`);
      const gap = el("rect", { class: "down-gap", x: x - 5, width: 10 }, g);
      const line = el("line", { class: "down-line", x1: x, x2: x }, g);
      el("path", { class: "down-break", d: `M${x - 11},${y + 4} L${x + 11},${y - 4} M${x - 11},${y + 10} L${x + 11},${y + 2}` }, g);
      this._obstacle(x - 12, y - 6, x + 12, y + 12);
      this._label(g, label(ev), x + 14, y + 6, "start", "down-label");
      this.downs.push({ node: ev.actor, t0, t1: null, g, parts: [gap, line] });
    }

    _restarted(ev) {
      const x = this._x(ev.actor), t = tOf(ev), y = this._y(t);
      const down = this.downs.find((d) => d.node === ev.actor && d.t1 == null);
      if (down) { down.t1 = t; down.g.classList.remove("open"); }
      const kept = ev.persistence === "fsync";
      const text = label(ev);
      const g = this._group("marks", ev, "node-restarted" + (kept ? " kept" : " empty"));
      el("path", { class: "restart-mark", d: `M${x - 7},${y + 5} L${x},${y - 6} L${x + 7},${y + 5} z` }, g);
      this._obstacle(x - 8, y - 7, x + 8, y + 6);
      this._label(g, text, x + 14, y + 6, "start", kept ? "restart-label" : "restart-label empty");
    }

    // One `link` event per client↔node link: a cut (blackhole, reset) or a delay lasts until
    // the next event of the same link; `pass` heals it.
    _link(ev) {
      const client = ev.actor, node = ev.node, t = tOf(ev);
      if (!this.cols.has(client) || !this.cols.has(node)) return;
      const open = this.links.find((l) => l.client === client && l.node === node && l.t1 == null);
      if (open) { open.t1 = t; open.g.classList.remove("open"); }
      const cx = this._x(client), nx = this._x(node), dir = nx >= cx ? 1 : -1, y = this._y(t);
      if (ev.mode === "pass") {
        const g = this._group("marks", ev, "link-healed");
        el("line", { class: "heal-line", x1: cx + dir * 4, x2: nx - dir * 4, y1: y, y2: y }, g);
        el("circle", { class: "heal-dot", cx: nx - dir * 10, cy: y, r: 4 }, g);
        this._linkNote(ev, "heal", (names) => `${client} \u21f9 ${names} healed`, cx, y, dir, "heal-label");
        return;
      }
      const cut = ev.mode === "blackhole" || ev.mode === "reset";
      const cls = cut ? `cut-link open ${ev.mode}` : "delayed-link-span open";
      const g = this._group("bg", ev, cls, cut
        ? `${client} \u21f9 ${node} cut (${ev.mode}): ${ev.mode === "reset" ? "connections are reset" : "bytes are held, nothing arrives"}`
        : `${client} \u21f9 ${node} delayed ${ev.ms ?? "?"} ms`);
      const x1 = Math.min(cx, nx), x2 = Math.max(cx, nx), edgeX = nx - dir * 10;
      const parts = [];
      if (cut) parts.push(el("rect", { class: "strip", x: x1, width: x2 - x1 }, g));
      parts.push(el("line", { class: "edge", x1: edgeX, x2: edgeX }, g));
      this.links.push({ client, node, t0: t, t1: null, g, parts });
      const mark = this._group("marks", ev, cut ? "cut-mark" : "delay-mark");
      if (cut) {
        const pts = [];
        for (let xx = x1, i = 0; xx <= x2; xx += 6, i++) pts.push(`${xx.toFixed(1)},${(y + (i % 2 ? 4 : -4)).toFixed(1)}`);
        el("polyline", { class: "zigzag", points: pts.join(" ") }, mark);
        this._linkNote(ev, "cut " + ev.mode, (names) => `\u2702 ${client} \u21f9 ${names} cut (${ev.mode})`, cx, y, dir, "cut-label");
      } else {
        el("line", { class: "delay-line", x1: cx + dir * 4, x2: nx - dir * 4, y1: y, y2: y }, mark);
        const jitter = ev.jitter_ms ? ` \u00b1${ev.jitter_ms}` : "";
        const label = this._linkNote(ev, `delay ${ev.ms}|${ev.jitter_ms}`,
          (names) => `${client} \u21f9 ${names} delay ${ev.ms ?? "?"}${jitter} ms`, cx, y, dir, "delay-label");
        label.closest("g").classList.add("delayed-link");
      }
    }

    // The words for a link change; the same change to several links at once shares one label.
    _linkNote(ev, verb, words, cx, y, dir, cls) {
      const t = tOf(ev);
      const same = this.linkNotes.find((n) => n.client === ev.actor && n.verb === verb && Math.abs(n.t - t) <= G.mergeMs);
      if (same && !same.nodes.includes(ev.node)) {
        same.nodes.push(ev.node);
        const text = words(same.nodes.join(", "));
        const span = same.label.firstChild;
        span.textContent = text;
        const box = this._measure(same.label, [text], +same.label.getAttribute("x"), +same.label.getAttribute("y"), same.label.getAttribute("text-anchor"));
        Object.assign(same.label.labelBox, { x1: box.x1, x2: box.x2 });
        return same.label;
      }
      const lg = this._group("labels", ev, cls.replace("-label", "-link-label") + " link-label");
      const label = this._label(lg, words(ev.node), cx + dir * 10, y + 18, dir > 0 ? "start" : "end", cls);
      this.linkNotes.push({ client: ev.actor, verb, t, nodes: [ev.node], label });
      return label;
    }

    _spanFault(f) {
      const y0 = this._y(f.t0), y1 = this._y(Math.max(f.t0, f.t1 ?? this.now));
      f.g.classList.toggle("open", f.t1 == null);
      for (const shape of f.parts) {
        if (shape.tagName === "line") { shape.setAttribute("y1", y0); shape.setAttribute("y2", y1); }
        else this._span(shape, f.t0, f.t1 ?? this.now);
      }
    }

    // A client's clock: a badge where it changed, left of its bars, wherever there is room.
    _clientClock(ev, text, cls) {
      const x = this._x(ev.actor), y = this._y(tOf(ev));
      const g = this._group("marks", ev, cls + " client-clock");
      const label = el("text", { class: "clock-badge-text", y: y + 5, "text-anchor": "middle" }, g);
      label.textContent = text;
      const size = this._measure(label, [text], 0, y + 5, "middle"), w = size.x2 - size.x1 + 12;
      const right = x + G.barLabelX + 4, left = right - w;
      const dy = this._free({ x1: left - 2, x2: right + 2, y1: y - 12, y2: y + 12 }, false);
      const link = dy ? `M${x},${y} L${right + 8},${y + dy}` : `M${x},${y} L${right},${y}`;
      el("path", { class: "clock-link", d: link }, g);
      const badge = el("rect", { class: "clock-badge", x: left, y: y + dy - 11, width: w, height: 22, rx: 11 }, g);
      g.insertBefore(badge, label);
      label.setAttribute("x", left + w / 2);
      label.setAttribute("y", y + dy + 5);
      this._obstacle(left - 2, y + dy - 12, right + 2, y + dy + 12);
    }

    _clockRate(ev) {
      this._clockState(ev.actor, { rate: ev.rate });
      this._clientClock(ev, label(ev), "clock-rate");
    }

    // In each header, instead of its role: the lifeline's clock now, if it is not the true one.
    _clockState(name, change) {
      const col = this.cols.get(name);
      if (!col || !col.roleText) return;
      const state = Object.assign({ offset: 0, rate: 1 }, this.clocks.get(name) || {});
      for (const key in change) if (Number.isFinite(change[key])) state[key] = change[key];
      this.clocks.set(name, state);
      const parts = [];
      if (state.offset) parts.push(`clock ${signedDuration(state.offset)}`);
      if (state.rate !== 1) parts.push(`${parts.length ? "" : "clock "}runs \u00d7${state.rate}`);
      const role = { client: "client", node: "lock node", storage: "storage" }[col.role];
      col.roleText.textContent = parts.length ? parts.join(" \u00b7 ") : role;
      col.roleText.classList.toggle("clock-state", parts.length > 0);
    }

    // A learner's note: a muted dot whose tooltip holds the text.
    _noteMark(ev) {
      if (!this.cols.has(ev.actor)) return;
      const g = this._group("marks", ev, "note-mark", `note (${ev.actor}): ${ev.text ?? ""}`);
      el("circle", { cx: this._x(ev.actor), cy: this._y(tOf(ev)), r: 3.5 }, g);
    }

    _acquireFailed(ev) {
      const x = this._x(ev.actor), y = this._y(tOf(ev));
      const g = this._group("marks", ev, "acquire-failed");
      el("circle", { class: "no-entry", cx: x, cy: y + 6, r: 6 }, g);
      this._label(g, ["acquire failed", ev.reason || ""].filter(Boolean), x + 12, y + 20, "start", "muted");
    }

    _runFailed(ev) {
      const y = this._y(tOf(ev));
      const g = this._group("marks", ev, "run-failed");
      el("line", { class: "fail-line", x1: G.axisX, x2: this.width - 8, y1: y, y2: y }, g);
      this._label(g, `run failed: ${ev.error || "unknown error"}`, G.axisX + 8, y + 18, "start", "fail-label");
      this._finish(null, tOf(ev), ev);
    }

    _runFinished(ev) { this.finishEvent = ev; this._finish(ev.verdict, tOf(ev), ev); }

    // ---- end of run ----------------------------------------------------------------------

    _finish(verdict, endMs, ev) {
      const t = Number.isFinite(endMs) ? endMs : this.now;
      ev = ev || { kind: "run_finished", actor: "lab", t_ms: t, verdict };
      // finish() may follow add(run_finished): drop the first drawing and the label room it took.
      this.svg.querySelectorAll(".finish").forEach((n) => n.remove());
      if (this.finishBoxes == null) this.finishBoxes = this.boxes.length;
      else this.boxes.length = this.finishBoxes;
      this.now = Math.max(this.now, t);
      for (const l of this.leases) if (l.t1 == null) this._endLease(l, { t_ms: Math.max(l.t0, t), seq: ev.seq }, "end");
      for (const b of this.beliefs) if (b.t1 == null) b.t1 = Math.max(b.t0, t);
      for (const p of this.pauses) if (p.t1 == null) p.t1 = Math.max(p.t0, t);
      for (const f of this.links.concat(this.downs)) if (f.t1 == null) f.t1 = Math.max(f.t0, t);
      this.finished = true;
      this._refresh();
      const y = this._y(t);
      const g = this._group("grid", ev, "run-end finish");
      el("line", { x1: G.axisX, x2: this.narrX - 16, y1: y, y2: y }, g);
      this._label(g, `run end ${secs(t, 2)}`, G.axisX + 8, y + 18, "start", "muted");
      for (const o of (verdict && verdict.overlaps) || []) this._overlap(ev, o);
      for (const w of (verdict && verdict.writes) || []) if (w.stale && w.accepted) this._staleWrite(ev, w);
    }

    // Two clients believed they held the lock at once: shade the whole width, hatch + words.
    _overlap(ev, o) {
      const y0 = this._y(o.start_ms), y1 = this._y(Math.max(o.start_ms, o.end_ms));
      const names = (o.clients || []).join(" & ");
      const text = `two holders: ${names} (${secs(o.end_ms - o.start_ms, 2)})`;
      const g = this._group("bg", ev, "overlap finish", `${text}: ${o.start_ms} ms to ${o.end_ms} ms`);
      el("rect", { class: "band", x: G.axisX, width: this.width - 8 - G.axisX, y: y0, height: y1 - y0, fill: this._url("overlap") }, g);
      for (const yy of [y0, y1]) el("line", { class: "edge", x1: G.axisX, x2: this.width - 8, y1: yy, y2: yy }, g);
      const lg = this._group("labels", ev, "overlap-label finish", text);
      this._note(lg, text, y0 + 14, "overlap-text");
    }

    _staleWrite(ev, w) {
      const at = this.writes.get(w.seq);
      if (!at) return;
      const title = `Stale write accepted: ${w.client} wrote with token ${w.token}` +
        (w.superseded_by ? ` after ${w.superseded_by} took over` : "") + " (data corrupted)";
      const g = this._group("marks", ev, "stale-write-accepted finish", title);
      g.setAttribute("data-write-seq", w.seq);
      g.setAttribute("role", "img");
      g.setAttribute("aria-label", title);
      const { x, y } = at;
      el("polygon", { class: "warn-triangle", points: `${x},${y - 13} ${x + 13},${y + 10} ${x - 13},${y + 10}` }, g);
      el("text", { class: "warn-bang", x, y: y + 8, "text-anchor": "middle" }, g).textContent = "!";
      this._label(g, ["STALE WRITE ACCEPTED", "(data corrupted)"], x + 18, y + 24, "start", "stale-label");
    }
  }

  window.LockDiagram = LockDiagram;
})();

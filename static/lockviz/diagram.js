/*
 * lockviz: the live sequence diagram of one lock run. Needs diagram-layout.js.
 *
 * Renders the events of docs/events.md into an <svg> as a vertical sequence diagram where
 * time flows down in proportion: lifelines for clients, lock nodes and storage, request/reply
 * arrows, and for each grant a lease bar (what the server granted) beside a belief bar (what
 * the client thinks). Where the belief outlives the lease the client acts on a lock it no
 * longer holds; that gap is the lesson, so it gets its own colour, hatch and label.
 *
 * Every word comes from the server's narrator (lockviz/runs/narrator/) with the event, as
 * `said`: `label` on its arrow or mark, `mark` for a second mark (a write at the storage, the
 * words beside a belief that outlived its lease), `round`/`fold` for retries folded into one
 * band. This file draws; it does not phrase.
 *
 * Drawing is incremental so a streaming run never jumps: columns are fixed up front (every
 * lifeline is drawn from the start), each event draws its own elements, and labels take the
 * nearest free spot (diagram-layout.js). A replay draws the whole run once and then shows it up
 * to a moment (showUpTo): elements are grouped by seq in chunks that are shown or hidden
 * whole, and only what depends on the moment (open bars, pending requests, folded rounds) is
 * redrawn, so stepping and scrubbing cost the same at 20 events or 20,000.
 *
 * Faults are drawn where they act: a cut link is a dotted band on the two lifelines it joins
 * (not on those between), a delayed link gets a label, a crashed node's lifeline is broken until
 * it restarts, clock jumps and rates show as badges, with each lifeline's clock in its header.
 * An accepted stale write is drawn in red at the storage, where and when it lands. A long
 * stretch with nothing happening (an idle free-play session) is drawn short, with its length.
 *
 * API: new LockDiagram(svg, {clients, nodes, storage, durationMs, pxPerMs, columnWidth,
 * narrationWidth, backend, onHeader, fit, breakMs}); add(event), addAll(events), reset(),
 * finish(verdict, endMs?), highlight(seq), showUpTo(seq), setHeaderAction(fn), relayout(),
 * nowY(), toggleFold(id), markTime(tMs, text). `fit` (an element) makes the columns share its
 * width. markTime draws a line across the diagram at a moment, with its words from the server
 * (where a fork parts from its original), kept through redraws and resets.
 */
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const { Space, Measure, Placer } = window.LockLayout;
  const DEFAULTS = { pxPerMs: 0.12, columnWidth: 220, narrationWidth: 230, durationMs: 4000, storage: "storage" };
  const CHUNK = 128; // events per chunk: a replay shows or hides whole chunks
  const VIRTUAL_FROM = 2500; // from this many events, only chunks near the screen are laid out
  const END = "end"; // the chunk of what finish() draws without a run_finished event

  // Geometry in px at scale 1. Bars and their labels sit LEFT of a client's lifeline, so arrows,
  // which leave to the right towards the servers, never cross them.
  const BASE = {
    axisX: 64, firstCol: 250, serverRight: 196, top: 84, bottom: 60, headerTop: 10, headerH: 46,
    leaseX: -14, leaseW: 10, beliefX: -25, beliefW: 8, barLabelX: -32,
    bandLeft: -84, bandRight: 112, // pause band across a client's column
    minPair: 8, fastPx: 22, pendingPx: 6, gapLabelPx: 12, labelSearchPx: 120, cutW: 12, breakPx: 56,
  };
  const MERGE_MS = 40; // link events of one click (a Redlock partition of 3 nodes) share one label
  const FLAT_PX = 60; // a round trip longer than this is drawn as a wait at the server, not a slant

  const HANDLERS = {
    run_started: "_runStarted", request: "_request", reply: "_reply", granted: "_granted",
    expired: "_serverEnd", deleted: "_serverEnd", released: "_beliefEnd", lost: "_beliefEnd",
    crashed: "_crashed", paused: "_paused", resumed: "_resumed", step: "_step",
    clock_jumped: "_clockJumped", acquire_failed: "_acquireFailed", run_failed: "_runFailed",
    run_finished: "_runFinished", link: "_link", restarted: "_restarted", clock_rate: "_clockRate",
    note: "_noteMark", woken: "_woken", ending: "_ending",
  };
  const CLIENT_KINDS = new Set(["request", "reply", "granted", "released", "lost", "crashed", "paused",
    "resumed", "acquire_failed", "extended", "woken"]);
  const SERVER_KINDS = new Set(["expired", "deleted", "clock_jumped"]);
  let instances = 0;

  // ---- small helpers -------------------------------------------------------------------

  function el(tag, attrs, parent) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const key in attrs) if (attrs[key] != null) node.setAttribute(key, attrs[key]);
    if (parent) parent.appendChild(node);
    return node;
  }
  // An attribute set only when it changes: an unchanged long line is not repainted.
  function set(node, attr, value) {
    const cache = node.attrs || (node.attrs = {});
    if (cache[attr] === value) return;
    cache[attr] = value;
    node.setAttribute(attr, value);
  }
  const tOf = (ev) => (Number.isFinite(ev.t_ms) ? Math.max(0, ev.t_ms) : 0);
  const secs = (ms, digits) => (ms / 1000).toFixed(digits) + " s";
  const uniq = (list) => Array.from(new Set(list));
  const bySeq = (a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity);
  const said = (ev) => ev.said || {};
  const lines = (text) => String(text || "").split("\n").filter(Boolean);
  const chunkOf = (seq) => (seq == null ? null : seq === Infinity ? END : Math.floor(seq / CHUNK));

  function signedDuration(ms) {
    const sign = ms < 0 ? "\u2212" : "+";
    const abs = Math.abs(ms);
    return sign + (abs >= 1000 ? +(abs / 1000).toFixed(1) + " s" : abs + " ms");
  }

  // The tooltip: the narrator's sentence and every field of the event.
  function describe(ev) {
    const head = `#${ev.seq ?? "?"} ${ev.kind} \u00b7 ${ev.actor} \u00b7 t = ${tOf(ev).toFixed(1)} ms`;
    const text = said(ev).text ? [said(ev).text] : [];
    const rest = Object.keys(ev).filter((k) => !["seq", "t_ms", "actor", "kind", "said"].includes(k))
      .map((k) => `${k}: ${typeof ev[k] === "object" ? JSON.stringify(ev[k]) : ev[k]}`);
    return [head].concat(text, rest).join("\n");
  }

  // ---- the diagram ---------------------------------------------------------------------

  class LockDiagram {
    constructor(svg, options) {
      if (!svg || svg.namespaceURI !== SVG_NS) throw new TypeError("LockDiagram needs an <svg> element");
      this.svg = svg;
      this.options = Object.assign({}, options || {});
      this.ids = "lv" + ++instances + "-"; // marker/pattern ids are document-global
      svg.classList.add("lock-diagram");
      if (!svg.hasAttribute("role")) svg.setAttribute("role", "group");
      this.openFolds = new Set();
      this.reset();
    }

    /** Draw one event; returns false for a seq already seen, so a resume never draws twice. */
    add(ev) {
      if (!ev || typeof ev !== "object") return false;
      if (ev.seq != null && this.seen.has(ev.seq)) return false;
      if (ev.seq != null) this.seen.add(ev.seq);
      this.events.push(ev);
      const relayout = ev.kind === "run_started" ? this._adoptRun(ev) : this._discover(ev);
      if (relayout) { this._rerender(); return true; }
      this._maybeBreak(ev);
      this._draw(ev);
      this._grow(tOf(ev));
      return true;
    }

    addAll(events) {
      const list = Array.from(events || []);
      let n = 0;
      this._virtualise(this.events.length + list.length); // before drawing: nothing laid out in vain
      this.batch = true; // one resize and one refresh at the end, not one per event
      try { for (const ev of list) if (this.add(ev)) n++; } finally { this.batch = false; }
      this._resize(false);
      this._show();
      return n;
    }

    /** Forget every event (replays reuse the diagram); constructor options stay. */
    reset() {
      Object.assign(this, { events: [], seen: new Set(), limit: Infinity, current: null, run: {},
        found: { clients: [], nodes: [] }, extentMs: 0, manualFinish: null });
      this._rerender();
    }

    /** Lay the diagram out again (the page's size or the presenter view changed). */
    relayout() { this._rerender(); }

    /** End of run: close open bars at endMs (default: latest event), shade overlaps, flag stale writes. */
    finish(verdict, endMs) {
      if (this.finishEvent) return; // run_finished drew it, with its seq and time
      this.manualFinish = { verdict, endMs };
      this._finish(verdict, endMs, null);
      this._show();
    }

    /** Mark the elements of one event as current (replay cursor); null clears. */
    highlight(seq) {
      this.current = seq;
      for (const n of this.marked || []) n.classList.remove("current");
      this.marked = [];
      for (const g of this.pinned || []) { g.pinned = false; this._applyChunk(g); }
      this.pinned = [];
      if (seq == null) return [];
      let found = (this.bySeq.get(seq) || []).filter((n) => n.isConnected);
      const round = this.foldOfSeq.get(seq);
      if (round && !(round.closeSeq > this.limit) && !this.openFolds.has(round.fold.id)) found = [round.fold.band]; // folded away: the band stands for it
      found.forEach((n) => n.classList.add("current"));
      this.marked = found;
      if (this.virtual) { // the cursor's marks are laid out wherever the page has scrolled
        for (const n of found) {
          const g = n.closest("g.chunk");
          if (g && !g.pinned) { g.pinned = true; this.pinned.push(g); this._applyChunk(g); }
        }
      }
      return found;
    }

    /** Make the lifeline headers buttons that call fn(name, role, element); null makes them plain again. */
    setHeaderAction(fn) {
      this.options.onHeader = fn || null;
      for (const col of this.cols.values()) this._headerAction(col);
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
      el("line", { class: "time-mark-line", x1: this.G.axisX, x2: this.width - 8, y1: y, y2: y }, g);
      el("text", { class: "time-mark-label", x: this.G.axisX + 6, y: y - 5 }, g).textContent = mark.text;
    }

    /** Show the run as it was after event `seq` (null/Infinity: everything). `scrollBy`: the
     * px the page scrolls right after (a replay following its cursor), so that a long run lays
     * out the part that will be on screen, not the part that was. */
    showUpTo(seq, scrollBy) {
      this.limit = seq == null ? Infinity : seq;
      this.scrollAhead = scrollBy || 0;
      this._show();
      this.scrollAhead = 0;
    }

    /** Where event `seq` is drawn (px from the top of the svg, in its own units); null if none. */
    yOf(seq) {
      const ev = this.events.find((e) => e.seq === seq);
      return ev ? this._y(tOf(ev)) : null;
    }

    /** Where "now" is drawn (px from the top of the svg, in its own units). */
    nowY() { return this._y(this.tNow); }

    /** Open or close a folded band of refused rounds. */
    toggleFold(id) {
      if (this.openFolds.has(id)) this.openFolds.delete(id); else this.openFolds.add(id);
      const fold = this.folds.find((f) => f.id === id);
      if (fold) this._foldState(fold, true);
    }

    // ---- layout --------------------------------------------------------------------------

    // run_started fills in what the constructor did not say; relayout only if it changed something.
    _adoptRun(ev) {
      const o = this.options;
      this.run = ev;
      return this._columns().join() !== Array.from(this.cols.keys()).join() || Boolean(!o.durationMs && ev.duration_ms);
    }

    // The lifelines in order: clients, lock nodes, the storage.
    _columns() {
      const o = this.options, r = this.run;
      const storage = o.storage || r.storage || DEFAULTS.storage;
      const clients = uniq((o.clients || r.clients || []).concat(this.found.clients));
      const nodes = uniq((o.nodes || r.nodes || []).concat(this.found.nodes)).filter((n) => n !== storage && !clients.includes(n));
      return clients.concat(nodes, [storage]);
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
      const seen = new Set();
      fresh.forEach(([role, name]) => { if (!seen.has(name)) { seen.add(name); this.found[role].push(name); } });
      return fresh.length > 0;
    }

    _layout() {
      const o = this.options, r = this.run;
      const scale = parseFloat(getComputedStyle(this.svg).getPropertyValue("--diagram-scale")) || 1;
      this.scale = scale;
      this.G = Object.fromEntries(Object.entries(BASE).map(([k, v]) => [k, v * scale]));
      this.px = (o.pxPerMs || DEFAULTS.pxPerMs) * scale;
      this.storage = o.storage || r.storage || DEFAULTS.storage;
      this.durationMs = o.durationMs || r.duration_ms || DEFAULTS.durationMs;
      this.backend = o.backend || r.backend;
      const clients = uniq((o.clients || r.clients || []).concat(this.found.clients));
      const cols = this._columns().map((n) => [n, n === this.storage ? "storage" : clients.includes(n) ? "client" : "node"]);
      let colW = (o.columnWidth || DEFAULTS.columnWidth) * scale;
      this.narrW = (o.narrationWidth || DEFAULTS.narrationWidth) * scale;
      if (o.fit && o.fit.clientWidth && cols.length > 1) {
        // Share the page's width: columns first, then the margins give way, within limits.
        const room = o.fit.clientWidth - 4, minCol = 110 * scale, gaps = cols.length - 1;
        const fixed = () => this.G.firstCol + this.G.serverRight + this.narrW + 12;
        const over = fixed() + gaps * minCol - room;
        if (over > 0) this.narrW = Math.max(130 * scale, this.narrW - over);
        const still = fixed() + gaps * minCol - room;
        if (still > 0) this.G.serverRight = Math.max(150 * scale, this.G.serverRight - still);
        colW = Math.max(minCol, Math.min(colW, (room - fixed()) / gaps));
      }
      this.colW = colW;
      this.cols = new Map(cols.map(([name, role], i) => [name, { name, role, x: this.G.firstCol + i * colW }]));
      this.narrX = this.G.firstCol + (cols.length - 1) * colW + this.G.serverRight;
      this.width = Math.round(this.narrX + this.narrW + 12);
    }

    // Time to px. A break (a long stretch with nothing happening) is drawn G.breakPx tall.
    _y(t) {
      let drawn = Math.max(0, t);
      for (const b of this.breaks) {
        if (t <= b.t0) break;
        const inside = Math.min(t, b.t1) - b.t0;
        drawn -= inside - inside * (b.keep / (b.t1 - b.t0));
      }
      return this.G.top + drawn * this.px;
    }
    _x(name) { return this.cols.get(name) ? this.cols.get(name).x : this.G.firstCol; }
    _role(name) { return this.cols.get(name) ? this.cols.get(name).role : null; }

    // A quiet stretch longer than breakMs before this event is drawn short (free play left idle).
    _maybeBreak(ev) {
      const t = tOf(ev);
      const limit = this.options.breakMs || Math.max(4000, this.durationMs);
      if (t - this.lastT > limit && this.lastT > 0) {
        const b = { t0: this.lastT + 300, t1: t - 300, keep: this.G.breakPx / this.px };
        if (b.t1 - b.t0 > b.keep) {
          this.breaks.push(b);
          this._drawBreak(b, ev);
          this._drawAxis();
        }
      }
      this.lastT = Math.max(this.lastT, t);
    }

    _rerender() {
      Object.assign(this, { calls: new Map(), early: new Map(), dyn: [], open: new Set(), leases: [], beliefs: [],
        pauses: [], pendingEnds: [], writes: new Map(), crashed: new Map(), now: 0, tNow: 0, finished: false,
        finishEvent: null, links: [], linkNotes: [], downs: [], clocks: new Map(), bySeq: new Map(), marked: [],
        chunks: {}, folds: [], foldOfSeq: new Map(), rounds: new Map(), watches: new Map(), lastAt: new Map(),
        headerWords: new Map(), breaks: [], lastT: 0, shownLimit: undefined, timeIndex: null,
        itemsAt: new Map(), openNow: [], pinned: [], win: [-Infinity, Infinity] });
      this.svg.textContent = "";
      this.space = new Space();
      this.measure = new Measure(this.svg);
      this._layout();
      this.placer = new Placer(this.space, this.measure, this.G.labelSearchPx);
      this.placer.onPlaced = (label, box) => this._extend(label.node, box.y1, box.y2);
      this._frame();
      this.batch = true;
      try {
        for (const e of this.events.slice().sort(bySeq)) {
          this._maybeBreak(e);
          this._draw(e);
          this._grow(tOf(e));
        }
        if (this.manualFinish) this._finish(this.manualFinish.verdict, this.manualFinish.endMs, null);
      } finally { this.batch = false; }
      this._resize(false);
      this._show();
      if (this.current != null) this.highlight(this.current);
    }

    _frame() {
      el("title", {}, this.svg).textContent = "Sequence diagram of the lock run";
      this._defs(el("defs", {}, this.svg));
      this.layers = {};
      for (const name of ["bg", "grid", "lifelines", "bars", "arrows", "marks", "labels"]) {
        this.layers[name] = el("g", { class: "layer-" + name }, this.svg);
      }
      this.axis = el("g", { class: "axis" }, this.layers.grid);
      this.nowLine = el("line", { class: "now", x1: this.G.axisX, x2: this.narrX - 16 }, this.layers.grid);
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
          markerWidth: 10 * this.scale, markerHeight: 10 * this.scale, markerUnits: "userSpaceOnUse", orient: "auto" }, defs);
        el("path", { d }, m);
      };
      marker("req", "M0,0 L10,5 L0,10 z", "head head-request");
      marker("rep", "M1,1 L9,5 L1,9", "head head-reply");
      marker("bad", "M1,1 L9,5 L1,9", "head head-failed");
      marker("notify", "M0,1 L10,5 L0,9 z", "head head-notify");
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
      // A cut link is dotted, two holders are cross-hatched: never the same pink area.
      const dots = el("pattern", { id: this.ids + "cut", class: "dots-cut", patternUnits: "userSpaceOnUse", width: 6, height: 6 }, defs);
      el("rect", { class: "pat-bg", width: 6, height: 6 }, dots);
      el("circle", { class: "pat-dot", cx: 3, cy: 3, r: 1.4 }, dots);
    }

    _url(id) { return `url(#${this.ids}${id})`; }

    _header(col) {
      const G = this.G;
      const g = el("g", { class: `lifeline-header ${col.role}`, "data-actor": col.name }, this.layers.lifelines);
      const w = Math.min(this.colW - 20 * this.scale, 150 * this.scale);
      el("rect", { x: col.x - w / 2, y: G.headerTop, width: w, height: G.headerH, rx: col.role === "client" ? 10 : 2 }, g);
      el("text", { class: "name", x: col.x, y: G.headerTop + 21 * this.scale, "text-anchor": "middle" }, g).textContent = col.name;
      const roleText = el("text", { class: "role", x: col.x, y: G.headerTop + 38 * this.scale, "text-anchor": "middle" }, g);
      roleText.textContent = { client: "client", node: "lock node", storage: "storage" }[col.role];
      col.roleText = roleText;
      col.header = g;
      const line = el("line", { class: `lifeline ${col.role}`, x1: col.x, x2: col.x, y1: G.headerTop + G.headerH }, this.layers.lifelines);
      this.lifelines.set(col.name, line);
      this.space.add({ kind: "box", x1: col.x - w / 2, x2: col.x + w / 2, y1: 0, y2: G.headerTop + G.headerH + 4 });
      this._headerAction(col);
    }

    _headerAction(col) {
      const g = col.header;
      if (!g) return;
      if (g.act) { g.removeEventListener("click", g.act); g.removeEventListener("keydown", g.key); }
      const fn = this.options.onHeader;
      g.classList.toggle("actionable", !!fn);
      if (!fn) {
        ["tabindex", "role", "aria-haspopup", "aria-label"].forEach((a) => g.removeAttribute(a));
        g.act = g.key = null;
        return;
      }
      g.act = () => this.options.onHeader(col.name, col.role, g);
      g.key = (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); g.act(); } };
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-haspopup", "dialog");
      g.setAttribute("aria-label", `${col.name}: do something to this ${col.role === "client" ? "client" : "server"}`);
      g.addEventListener("click", g.act);
      g.addEventListener("keydown", g.key);
    }

    // Grow in chunks (a fifth of the run) and animate, so late events extend the page calmly.
    _grow(t) {
      if (t <= this.extentMs) return;
      this.extentMs = t + Math.max(500, this.durationMs * 0.2);
      if (!this.batch) this._resize(true);
    }

    _resize(animate) {
      const h = Math.max(200, Math.ceil(this._y(this.extentMs) + this.G.bottom));
      const from = this.height || h;
      this.height = h;
      this._drawAxis();
      this._lifelineEnds();
      const set = (v) => {
        const height = Math.max(1, Math.round(v));
        this.svg.setAttribute("viewBox", `0 0 ${Math.max(1, this.width)} ${height}`);
        this.svg.setAttribute("width", Math.max(1, this.width));
        this.svg.setAttribute("height", height);
      };
      const still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      if (!animate || still || from >= h || !window.requestAnimationFrame) return set(h);
      const start = performance.now();
      const step = (now) => {
        if (this.height !== h) return; // a newer resize took over
        const k = Math.min(1, (now - start) / 300);
        set(from + (h - from) * k);
        if (k < 1) requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    }

    _lifelineEnds() {
      for (const [name, line] of this.lifelines) {
        const crash = this.crashed.get(name);
        const end = crash && !(crash.seq > this.limit) ? crash.y : this.height - 20;
        set(line, "y2", end); // a lifeline runs the diagram's height: repaint it only if it moved
      }
    }

    // Tick spacing: the smallest round step that leaves ~48 px between labels; none inside a break.
    _drawAxis() {
      if (!this.axis) return;
      this.axis.textContent = "";
      const G = this.G;
      const step = [250, 500, 1000, 2000, 5000, 10000, 30000, 60000].find((s) => s * this.px >= 48 * this.scale) || 120000;
      const digits = step < 500 ? 2 : 1;
      el("line", { class: "axis-line", x1: G.axisX, x2: G.axisX, y1: G.top - 8, y2: (this.height || G.top) - 20 }, this.axis);
      const inBreak = (t) => this.breaks.some((b) => t > b.t0 && t < b.t1);
      for (let t = 0; t <= this.extentMs; t += step) {
        if (inBreak(t)) continue;
        const y = this._y(t);
        el("line", { class: "grid-line", x1: G.axisX, x2: this.width - 8, y1: y, y2: y }, this.axis);
        el("line", { class: "tick", x1: G.axisX - 6, x2: G.axisX, y1: y, y2: y }, this.axis);
        el("text", { class: "tick-label", x: G.axisX - 10, y: y + 5, "text-anchor": "end" }, this.axis).textContent = secs(t, digits);
      }
    }

    _drawBreak(b, ev) {
      const y0 = this._y(b.t0), y1 = this._y(b.t1), G = this.G;
      const g = this._group("grid", { seq: ev.seq }, "time-break", `${secs(b.t1 - b.t0, 1)} with nothing to draw`, "break");
      el("rect", { class: "break-band", x: G.axisX - 30, y: y0, width: this.width - G.axisX + 22, height: y1 - y0 }, g);
      this._extend(g, y0, y1);
      const wave = (y) => {
        const pts = [];
        for (let x = G.axisX - 30, i = 0; x <= this.width - 8; x += 10, i++) pts.push(`${x},${y + (i % 2 ? 3 : -3)}`);
        return pts.join(" ");
      };
      el("polyline", { class: "break-edge", points: wave(y0) }, g);
      el("polyline", { class: "break-edge", points: wave(y1) }, g);
      this._label(g, `\u22ef ${secs(b.t1 - b.t0, 1)} \u22ef`, G.axisX + 8, (y0 + y1) / 2 + 5, "start", "break-label", { far: false });
    }

    // ---- drawing primitives --------------------------------------------------------------

    // A group of one event's elements, in its layer's chunk; `mark` names its legend entry.
    _group(layer, ev, cls, title, mark) {
      const chunk = this._chunk(layer, ev.seq);
      const g = el("g", { class: cls, "data-seq": ev.seq === Infinity ? null : ev.seq }, chunk);
      if (mark) g.setAttribute("data-mark", mark);
      if (Number.isFinite(ev.t_ms)) this._extend(chunk, this._y(tOf(ev)) - 40, this._y(tOf(ev)) + 40);
      el("title", {}, g).textContent = title || describe(ev);
      if (ev.seq != null) {
        const list = this.bySeq.get(ev.seq);
        if (list) list.push(g); else this.bySeq.set(ev.seq, [g]);
      }
      const round = this._roundOf(ev);
      if (round) {
        round.groups.push(g);
        if (round.fold) {
          this.foldOfSeq.set(ev.seq, round);
          const folded = !(round.closeSeq > this.limit);
          g.classList.toggle("folded", folded);
          g.classList.toggle("unfolded", folded && this.openFolds.has(round.fold.id));
        }
      }
      return g;
    }

    // The chunk of a layer that holds events [k*CHUNK, (k+1)*CHUNK): a replay shows or hides it whole.
    _chunk(layer, seq) {
      const key = chunkOf(seq);
      const parent = this.layers[layer];
      if (key == null) return parent;
      const chunks = this.chunks[layer] || (this.chunks[layer] = new Map());
      let g = chunks.get(key);
      if (g) return g;
      g = el("g", { class: "chunk", "data-chunk": key });
      g.y0 = g.y1 = null;
      if (this.virtual) { g.style.display = "none"; g.shownAs = "off"; } // until _show places it
      const next = Array.from(chunks.entries()).filter(([k]) => key !== END && (k === END || k > key)).sort(([a], [b]) => (a === END) - (b === END) || a - b)[0];
      parent.insertBefore(g, next ? next[1] : null);
      chunks.set(key, g);
      if (!this.virtual) this._showChunk(layer, key, g); // a long run's chunk waits for _show
      return g;
    }

    // A label at (x, y), or at the nearest free spot (diagram-layout.js).
    // opts: {alt: [{x, anchor}] (other spots on the line), short (text), far (may move far down), cls of its group}
    _label(parent, text, x, y, anchor, cls, opts) {
      const o = opts || {};
      const node = el("text", { class: "label " + (cls || ""), x, y, "text-anchor": anchor }, parent);
      const groupCls = parent.getAttribute("class") || "";
      const label = {
        node, lines: Array.isArray(text) ? text : lines(text), short: o.short ? lines(o.short) : null,
        font: this.measure.font(groupCls, "label " + (cls || "")), far: o.far,
        spots: [{ x, y, anchor }].concat((o.alt || []).map((a) => ({ x: a.x, y: a.y ?? y, anchor: a.anchor }))),
        minY: this.G.top - 30 * this.scale, minX: this.G.axisX + 2, padX: o.padX, padLeft: o.padLeft, onPlace: o.onPlace, reach: o.reach,
      };
      if (!label.lines.length) { node.remove(); return null; }
      node.label = label;
      const round = this._roundOf(this.drawing);
      if (round) round.labels.push(label);
      if (round && round.closeSeq != null) { // its round is folded already: no room taken
        node.setAttribute("display", "none");
        round.labelsGone = true;
        return node;
      }
      this.placer.place(label);
      return node;
    }

    _obstacle(x1, y1, x2, y2) { return this.placer.block({ kind: "box", x1, y1, x2, y2 }); }

    _segment(line, x1, y1, x2, y2) {
      if (line.seg) this.space.remove(line.seg);
      const seg = { kind: "seg", ax: x1, ay: y1, bx: x2, by: y2,
        x1: Math.min(x1, x2), x2: Math.max(x1, x2), y1: Math.min(y1, y2) - 1, y2: Math.max(y1, y2) + 1 };
      line.seg = seg;
      const round = this._roundOf(this.drawing);
      if (round) round.segs.push(seg);
      if (round && round.closeSeq != null) return seg; // folded already: no room taken
      return this.placer.block(seg);
    }

    _span(rect, t0, t1) {
      const y0 = this._y(t0), y1 = this._y(Math.max(t0, t1));
      rect.setAttribute("y", y0);
      rect.setAttribute("height", Math.max(0, y1 - y0));
      this._extend(rect, y0, y1);
    }

    _draw(ev) {
      if (ev.kind !== "run_finished") this.now = Math.max(this.now, tOf(ev));
      const handler = HANDLERS[ev.kind];
      this.drawing = ev;
      try {
        if (handler) this[handler](ev);
        if (said(ev).fold) this._fold(ev);
      } catch (err) { // an odd event (an old export, a new kind's cousin) must not stop the drawing
        console.warn("lockviz: could not draw event", ev.seq, ev.kind, err);
      }
      this.drawing = null;
      if (!this.batch) this._show();
    }

    // ---- what depends on the moment shown ------------------------------------------------

    // A thing drawn over time (a bar, a band, a pending request): `ends` lists [seq, t] of the
    // events that end it, in order; shown at the moment, it is open until the first end shown.
    _dynamic(item) {
      item.ends = item.ends || [];
      item.drawn = null;
      item.seq0 = this.drawing && this.drawing.seq != null ? this.drawing.seq : -Infinity;
      item.chunk = item.node && item.node.closest ? item.node.closest("g.chunk") : null;
      this.dyn.push(item);
      this.open.add(item);
      this._at(item.seq0, item);
      return item;
    }

    _end(item, seq, t, extra) {
      item.ends.push(Object.assign({ seq: seq ?? Infinity, t }, extra || {}));
      this.open.add(item); // redraw it once at its end
      this._at(seq ?? Infinity, item);
    }

    // Items by the seqs where they start or end: a move of the cursor redraws only those it
    // passes, and those open at either end of the move.
    _at(seq, item) {
      if (!Number.isFinite(seq)) return;
      const list = this.itemsAt.get(seq);
      if (list) list.push(item); else this.itemsAt.set(seq, [item]);
    }

    // The items to redraw for a move of the cursor from `prev` to this.limit.
    _toRedraw(prev) {
      const limit = this.limit;
      if (limit === Infinity && prev === Infinity) return this.open;
      if (prev === undefined || !Number.isFinite(prev) || !Number.isFinite(limit)) return this.dyn;
      const lo = Math.min(prev, limit), hi = Math.max(prev, limit);
      if (hi - lo > 2048) return this.dyn;
      const items = new Set(this.openNow);
      for (let seq = lo + 1; seq <= hi; seq++) for (const item of this.itemsAt.get(seq) || []) items.add(item);
      return items;
    }

    // The end of an item as it was at the moment shown (null: still open then).
    _endAt(item) {
      let found = null;
      for (const e of item.ends) if (!(e.seq > this.limit)) found = e;
      return found;
    }

    // Show the run up to this.limit: chunks, then everything that depends on the moment.
    _show() {
      if (this.batch) return;
      this.tNow = this._timeAt(this.limit);
      this._virtualise();
      if (this.virtual) this._window();
      const moved = this.limit !== this.shownLimit || this.virtual;
      if (moved) for (const layer of Object.keys(this.chunks)) for (const [key, g] of this.chunks[layer]) this._showChunk(layer, key, g);
      const items = Array.from(this._toRedraw(this.shownLimit));
      this.shownLimit = this.limit;
      const openNow = [];
      for (const item of items) {
        if (item.seq0 <= this.limit && !this._endAt(item)) openNow.push(item);
        const chunk = item.chunk;
        if (this.virtual && chunk && chunk.shownAs === "off") { // redrawn when its chunk is shown
          (chunk.dirty || (chunk.dirty = new Set())).add(item);
          continue;
        }
        item.update(item);
        if (this.limit === Infinity && item.ends.length && item.settled) this.open.delete(item);
      }
      this.openNow = openNow;
      for (const fold of this.folds) {
        const chunk = fold.band.parentNode;
        if (this.virtual && chunk && chunk.shownAs === "off") { // folded or not when shown
          (chunk.dirtyFolds || (chunk.dirtyFolds = new Set())).add(fold);
          continue;
        }
        this._foldState(fold);
      }
      this._lifelineEnds();
      for (const col of this.cols.values()) this._headerClock(col);
      const y = this._y(this.tNow);
      set(this.nowLine, "y1", y);
      set(this.nowLine, "y2", y);
      set(this.nowLine, "display", this.finished && this.limit === Infinity ? "none" : "inline");
    }

    _timeAt(limit) {
      if (limit === Infinity) return this.now;
      if (!this.timeIndex || this.timeIndex.n !== this.events.length) {
        const sorted = this.events.filter((e) => e.seq != null).sort(bySeq);
        let t = 0;
        const seqs = [], times = [];
        for (const e of sorted) { if (e.kind !== "run_finished") t = Math.max(t, tOf(e)); seqs.push(e.seq); times.push(t); }
        this.timeIndex = { n: this.events.length, seqs, times };
      }
      const { seqs, times } = this.timeIndex;
      let lo = 0, hi = seqs.length - 1, found = -1;
      while (lo <= hi) { const mid = (lo + hi) >> 1; if (seqs[mid] <= limit) { found = mid; lo = mid + 1; } else hi = mid - 1; }
      return found < 0 ? 0 : times[found];
    }

    // A chunk is shown when its events are at or before the moment shown (those after it, in the
    // chunk that holds the moment, are hidden one by one) and, in a long run, when it is near
    // the screen: only what is near the screen is laid out and painted.
    _showChunk(layer, key, g) {
      const limit = this.limit;
      g.seqState = key === END ? (limit === Infinity ? "all" : "none")
        : (key + 1) * CHUNK - 1 <= limit ? "all" : key * CHUNK > limit ? "none" : "some";
      this._applyChunk(g);
    }

    _applyChunk(g) {
      const on = g.seqState !== "none" && (!this.virtual || g.pinned || this._near(g));
      const state = on ? g.seqState : "off";
      if (state === g.shownAs && (state !== "some" || g.limitShown === this.limit)) return;
      if (state === "some" || g.shownAs === "some") {
        for (const child of g.children) {
          const want = state === "some" && Number(child.getAttribute("data-seq")) > this.limit ? "none" : "";
          if (child.style.display !== want) child.style.display = want;
        }
      }
      const display = on ? "" : "none";
      if (on && g.dirty && g.dirty.size) { // what changed while it was left out
        for (const item of g.dirty) item.update(item);
        g.dirty.clear();
      }
      if (on && g.dirtyFolds && g.dirtyFolds.size) {
        for (const fold of g.dirtyFolds) this._foldState(fold);
        g.dirtyFolds.clear();
      }
      if (g.style.display !== display) g.style.display = display;
      g.shownAs = state;
      g.limitShown = this.limit;
    }

    _near(g) { return g.y0 == null || (g.y1 >= this.win[0] && g.y0 <= this.win[1]); }

    // What a chunk covers (px), so that a long run can leave out what is far from the screen.
    _extend(node, y0, y1) {
      const g = node && node.closest ? node.closest("g.chunk") : null;
      if (!g || !Number.isFinite(y0) || !Number.isFinite(y1)) return;
      g.y0 = g.y0 == null ? Math.min(y0, y1) : Math.min(g.y0, y0, y1);
      g.y1 = g.y1 == null ? Math.max(y0, y1) : Math.max(g.y1, y0, y1);
    }

    // The part of the diagram near the screen (a quarter of a screen above and below), in its own
    // units; scrolling shows more before the frame is painted.
    _window() {
      const r = this.svg.getBoundingClientRect();
      const scale = r.height > 0 && this.height > 0 ? r.height / this.height : 1;
      const top = (this.scrollAhead - r.top) / scale, screen = window.innerHeight / scale;
      this.win = [top - screen / 4, top + 1.25 * screen];
    }

    _virtualise(count) {
      if (this.virtual || (count ?? this.events.length) < VIRTUAL_FROM || this.options.virtual === false) return;
      this.virtual = true;
      this.win = [-Infinity, Infinity];
      let queued = false;
      this.onScroll = () => {
        if (queued) return;
        queued = true;
        requestAnimationFrame(() => { queued = false; this._refreshWindow(); });
      };
      window.addEventListener("scroll", this.onScroll, { passive: true });
      window.addEventListener("resize", this.onScroll, { passive: true });
    }

    _refreshWindow() {
      if (!this.virtual) return;
      this._window();
      for (const layer of Object.keys(this.chunks)) for (const g of this.chunks[layer].values()) this._applyChunk(g);
    }

    // ---- event handlers ------------------------------------------------------------------

    _runStarted(ev) { this.backend = this.options.backend || ev.backend; }

    _request(ev) {
      const G = this.G;
      const x1 = this._x(ev.actor), x2 = this._x(ev.to), dir = x2 >= x1 ? 1 : -1, y = this._y(tOf(ev));
      const g = this._group("arrows", ev, "request", null, "request");
      const line = el("line", { class: "arrow", x1: x1 + dir * 2, y1: y, x2: x2 - dir * 3, y2: y + G.pendingPx,
        "marker-end": this._url("req") }, g);
      const key = ev.actor + "#" + ev.call;
      const call = { req: ev, g, line, x1, x2, dir, y, delayed: this._delayed(ev.actor, ev.to, tOf(ev)) };
      this.calls.set(key, call);
      if (ev.op === "watch" || ev.watch) this.watches.set(ev.actor, ev.to);
      this._segment(line, x1 + dir * 2, y, x2 - dir * 3, y + G.pendingPx);
      const lg = this._group("labels", ev, "request-label");
      const head = { x: x2 - dir * 16, anchor: dir > 0 ? "end" : "start" };
      const near = { x: x1 + dir * 8, anchor: dir > 0 ? "start" : "end" };
      const spots = [near, head];
      call.label = this._label(lg, said(ev).label, spots[0].x, y - 5, spots[0].anchor, "", { alt: [spots[1]] });
      call.lg = lg;
      call.pending = this._dynamic({ update: () => this._pending(call), node: g });
      const early = this.early.get(key); // its reply overtook it in seq order
      if (early) { this.early.delete(key); this._reply(early); }
    }

    _delayed(client, node, t) {
      return this.links.some((l) => l.client === client && l.node === node && l.delay && l.t0 <= t && (l.t1 == null || l.t1 > t));
    }

    // The request arrow reaches the server half-way through the round trip, and the reply leaves
    // from there; a long wait (a queue, a blocked call) is drawn flat: the request arrives, the
    // server holds it (a dashed bar), then answers.
    _pending(call) {
      const end = this._endAt(call.pending);
      const sig = end ? "done" : "open";
      call.pending.settled = !!end;
      if (call.pending.drawn === sig) return;
      call.pending.drawn = sig;
      call.g.classList.toggle("pending", !end);
      const yEnd = end ? end.yMid : call.y + this.G.pendingPx;
      call.line.setAttribute("y2", yEnd);
      if (call.wait) call.wait.style.display = end ? "" : "none";
    }

    _reply(ev) {
      const G = this.G;
      const key = ev.actor + "#" + ev.call;
      const call = this.calls.get(key);
      if (!call) { this.early.set(key, ev); return; }
      const yRep = Math.max(this._y(tOf(ev)), call.y + G.minPair);
      const flat = yRep - call.y > FLAT_PX * this.scale && !call.delayed;
      const yMid = flat ? call.y + G.minPair / 2 : (call.y + yRep) / 2;
      const yFrom = flat ? yRep - G.minPair / 2 : yMid;
      this._end(call.pending, ev.seq, tOf(ev), { yMid });
      call.line.setAttribute("y2", yMid);
      this._segment(call.line, call.x1 + call.dir * 2, call.y, call.x2 - call.dir * 3, yMid);
      const failed = ev.ok === false || ev.accepted === false || !!ev.error;
      const words = said(ev);
      const g = this._group("arrows", ev, "reply" + (failed ? " failed" : ""), null, failed ? "reply-failed" : "reply");
      if (flat) {
        call.wait = el("line", { class: "wait", x1: call.x2 - call.dir * 4, x2: call.x2 - call.dir * 4, y1: yMid, y2: yFrom }, call.g);
        call.g.setAttribute("data-mark", "wait");
      }
      const line = el("line", { class: "arrow", x1: call.x2 - call.dir * 2, y1: yFrom, x2: call.x1 + call.dir * 3, y2: yRep,
        "marker-end": this._url(failed ? "bad" : "rep") }, g);
      this._segment(line, call.x2 - call.dir * 2, yFrom, call.x1 + call.dir * 3, yRep);
      this._extend(call.g, call.y, yRep);
      this._extend(g, call.y, yRep);
      this.lastAt.set(ev.from, Math.max(this.lastAt.get(ev.from) || 0, yFrom));
      const lg = this._group("labels", ev, "reply-label" + (failed ? " failed" : ""));
      const text = words.label || "";
      const fan = this.backend === "redlock";
      if (fan) { // at the server's end: "✔ redis-3" beside redis-3
        this._label(lg, text, call.x2 - call.dir * 12, yFrom + 15 * this.scale, call.dir > 0 ? "end" : "start", "",
          { short: words.short, reach: 40 * this.scale, alt: [{ x: call.x1 + call.dir * 10, y: yRep + 16 * this.scale, anchor: call.dir > 0 ? "start" : "end" }] });
      } else if (yRep - call.y > G.fastPx || !this._inlineReply(lg, call, text)) {
        this._label(lg, text, call.x1 + call.dir * 10, yRep + 16 * this.scale, call.dir > 0 ? "start" : "end", "", { short: words.short });
      }
      if (ev.op === "write") this._write(call.req, ev, call.x2, yMid);
    }

    // A quick round trip is one line of text, "SET NX PX 2000 → OK · token 33", on the request's
    // label line: two stacked labels per call would not fit between calls 200 ms apart.
    _inlineReply(lg, call, text) {
      const req = call.label && call.label.label;
      if (!req || !req.at || !text) return false;
      const joined = call.dir > 0 ? `${req.at.lines.join(" ")} \u2192 ${text}` : `${text} \u2190 ${req.at.lines.join(" ")}`;
      const spot = req.at.spot;
      const trial = { font: req.font, spots: [spot], lines: [joined] };
      const box = this.placer.box(trial, [joined], spot, req.at.dy);
      const roomy = call.dir > 0 ? box.x2 <= call.x2 - 3 : box.x1 >= call.x2 + 3;
      if (!roomy || this.space.hit(box, req.item)) return false;
      // One label now says both: the request's words and the reply's.
      this.placer.unplace(req);
      req.lines = [joined];
      req.shown = null;
      this.placer.place(req);
      call.label.classList.add("inline");
      lg.remove();
      return true;
    }

    // What the storage did with a write, drawn on its lifeline: shape and words, not only colour.
    // An accepted stale write is the damage: red, at the moment it lands, saying what it destroyed.
    _write(req, rep, x, y) {
      const words = said(rep);
      const rejected = rep.accepted === false;
      const damage = words.tone === "damage";
      const kind = rejected ? "rejected-write" : damage ? "damaged-write" : "write-accepted";
      const g = this._group("marks", rep, kind, null, kind);
      g.setAttribute("role", "img");
      g.setAttribute("aria-label", words.mark || words.text || "");
      const s = this.scale;
      if (rejected) {
        const r = 11 * s, pts = Array.from({ length: 8 }, (_, i) => Math.PI / 8 + (i * Math.PI) / 4)
          .map((a) => `${(x + r * Math.cos(a)).toFixed(1)},${(y + r * Math.sin(a)).toFixed(1)}`);
        el("polygon", { class: "octagon", points: pts.join(" ") }, g); // a stop sign
        el("path", { class: "cross", d: `M${x - 5 * s},${y - 5 * s} L${x + 5 * s},${y + 5 * s} M${x + 5 * s},${y - 5 * s} L${x - 5 * s},${y + 5 * s}` }, g);
        this._obstacle(x - r, y - r, x + r, y + r);
      } else if (damage) {
        const r = 13 * s;
        el("polygon", { class: "warn-triangle", points: `${x},${y - r} ${x + r},${y + r * 0.8} ${x - r},${y + r * 0.8}` }, g);
        el("text", { class: "warn-bang", x, y: y + r * 0.65, "text-anchor": "middle" }, g).textContent = "!";
        this._obstacle(x - r, y - r, x + r, y + r);
        g.setAttribute("data-write-seq", rep.seq);
      } else {
        el("rect", { class: "square", x: x - 6 * s, y: y - 6 * s, width: 12 * s, height: 12 * s }, g);
        this._obstacle(x - 6 * s, y - 6 * s, x + 6 * s, y + 6 * s);
      }
      const cls = rejected ? "rejected-label" : damage ? "damage-label" : "stored-label";
      this._label(g, words.mark || "", x + 18 * s, y + 5 * s, "start", cls);
      const where = { x, y, req, rep, g, damage };
      this.writes.set(rep.seq, where);
      this.writes.set(req.seq, where);
    }

    _granted(ev) {
      const G = this.G;
      this.rounds.delete(ev.actor);
      const x = this._x(ev.actor), t0 = tOf(ev);
      for (const old of this.beliefs) if (old.client === ev.actor && !this._closed(old.item)) this._end(old.item, ev.seq, t0);
      const lease = { client: ev.actor, node: ev.node, t0, x, by: null };
      lease.g = this._group("bars", ev, "lease", null, "lease");
      lease.rect = el("rect", { class: "bar", x: x + G.leaseX, width: G.leaseW }, lease.g);
      lease.item = this._dynamic({ update: (it) => this._bar(it, lease, lease.rect, lease.g), node: lease.g });
      const belief = { client: ev.actor, t0, lease, x };
      belief.g = this._group("bars", ev, "belief", null, "belief");
      belief.rect = el("rect", { class: "bar", x: x + G.beliefX, width: G.beliefW, fill: this._url("belief") }, belief.g);
      belief.item = this._dynamic({ update: () => this._refreshBelief(belief), node: belief.g });
      this.leases.push(lease);
      this.beliefs.push(belief);
      const lg = this._group("labels", ev, "lease-label");
      this._label(lg, said(ev).label, x + G.barLabelX, this._y(t0) + 14 * this.scale, "end", "", { short: said(ev).short });
      // A server end that reached the recorder before this grant still belongs to it.
      const end = this.pendingEnds.find((e) => e.holder === ev.actor && tOf(e) >= t0 && this._sameNode(lease, e.actor));
      if (end) {
        this.pendingEnds.splice(this.pendingEnds.indexOf(end), 1);
        this._endLease(lease, end, "server");
      }
    }

    _closed(item) { return item.ends.length > 0; }

    _bar(item, thing, rect, g) {
      const end = this._endAt(item);
      const t1 = end ? end.t : Math.max(thing.t0, this.tNow);
      const sig = `${t1}|${!end}`;
      item.settled = !!end && this.limit === Infinity && end === item.ends[item.ends.length - 1];
      if (item.drawn === sig) return;
      item.drawn = sig;
      this._span(rect, thing.t0, t1);
      g.classList.toggle("open", !end);
    }

    _sameNode(lease, node) {
      const n = lease.node;
      if (!n || n === node || !this.cols.has(n)) return true;
      return String(n).split(",").includes(node);
    }

    // A server end overrides a client's release; the last server end wins.
    _endLease(lease, ev, by) {
      lease.by = by;
      lease.endSeq = ev.seq;
      this._end(lease.item, ev.seq, tOf(ev), { by });
      const belief = this.beliefs.find((b) => b.lease === lease);
      if (belief) { this.open.add(belief.item); this._at(ev.seq, belief.item); }
    }

    // expired/deleted: where the SERVER ended a lease. A client-side release end is provisional.
    _serverEnd(ev) {
      const t = tOf(ev), s = this.scale;
      const lease = this.leases.slice().reverse().find((l) => l.client === ev.holder && l.t0 <= t + 1 &&
        (!this._closed(l.item) || l.by === "client") && this._sameNode(l, ev.actor));
      if (lease) this._endLease(lease, ev, "server");
      else if (ev.holder) this.pendingEnds.push(ev);
      const x = this._x(ev.actor), y = this._y(t);
      const expired = ev.kind === "expired";
      const g = this._group("marks", ev, expired ? "lease-expired" : "key-deleted", null, expired ? "expired" : "deleted");
      if (expired && lease) el("line", { class: "lease-end-link", x1: x - 8 * s, y1: y, x2: lease.x + this.G.leaseX + this.G.leaseW + 2, y2: y }, g);
      if (expired) el("path", { class: "hourglass", d: `M${x - 7 * s},${y - 8 * s} h${14 * s} l${-14 * s},${16 * s} h${14 * s} z` }, g);
      else el("circle", { class: "deleted-dot", cx: x, cy: y, r: 5 * s }, g);
      this._obstacle(x - 8 * s, y - 9 * s, x + 8 * s, y + 9 * s);
      this._label(g, said(ev).label, x + 14 * s, y + 5 * s, "start", expired ? "expired-label" : "muted");
      if (lease) lease.gapWords = said(ev).mark;
    }

    // released / lost / crashed end what the client believes; a clean release also ends the lease
    // when no server event did (a provisional end that a later expired/deleted overrides).
    _beliefEnd(ev) {
      const t = tOf(ev), x = this._x(ev.actor), y = this._y(t), s = this.scale;
      const belief = this.beliefs.slice().reverse().find((b) => b.client === ev.actor && !this._closed(b.item));
      if (belief) this._end(belief.item, ev.seq, t);
      if (ev.kind === "released" && ev.ok) {
        const lease = this.leases.find((l) => l.client === ev.actor && !this._closed(l.item));
        if (lease) this._endLease(lease, ev, "client");
      }
      if (ev.kind === "lost") {
        const g = this._group("marks", ev, "lost", null, "lost");
        el("line", { class: "tick-mark", x1: x - 8 * s, x2: x + 8 * s, y1: y, y2: y }, g);
        this._obstacle(x - 8 * s, y - 3, x + 8 * s, y + 3);
        this._label(g, said(ev).label, x + 12 * s, y + 5 * s, "start", "warn-label", { short: said(ev).short });
      }
      if (ev.kind === "crashed") {
        const pause = this.pauses.find((p) => p.client === ev.actor && !this._closed(p.item));
        if (pause) this._end(pause.item, ev.seq, t);
        const g = this._group("marks", ev, "crash", null, "crash");
        el("path", { class: "cross", d: `M${x - 10 * s},${y - 10 * s} L${x + 10 * s},${y + 10 * s} M${x + 10 * s},${y - 10 * s} L${x - 10 * s},${y + 10 * s}` }, g);
        this._obstacle(x - 11 * s, y - 11 * s, x + 11 * s, y + 11 * s);
        this._label(g, said(ev).label, x + 16 * s, y + 5 * s, "start", "crash-label");
        this.crashed.set(ev.actor, { y, seq: ev.seq });
      }
    }

    // The belief bar is hatched while a lease backs it; past the lease's end it switches to the
    // warning hatch and says so, because that stretch is where the client is wrong.
    _refreshBelief(b) {
      const G = this.G;
      const endAt = this._endAt(b.item), leaseEndAt = this._endAt(b.lease.item);
      const end = endAt ? endAt.t : Math.max(b.t0, this.tNow);
      const leaseEnd = leaseEndAt ? leaseEndAt.t : Infinity;
      b.item.settled = !!endAt && !!leaseEndAt && this.limit === Infinity && b.lease.item.settled !== false;
      const sig = `${end}|${leaseEnd}|${!endAt}`;
      if (b.item.drawn === sig) return;
      b.item.drawn = sig;
      this._span(b.rect, b.t0, Math.min(end, leaseEnd));
      b.g.classList.toggle("open", !endAt);
      const tiny = !(this._y(end) - this._y(leaseEnd) >= 2); // a release's sub-ms lag is not a gap
      if (b.gap) b.gap.style.display = tiny ? "none" : "";
      if (b.gapLabel) b.gapLabel.style.display = tiny || this._y(end) - this._y(leaseEnd) < G.gapLabelPx ? "none" : "";
      if (tiny) return;
      const seq = b.lease.endSeq;
      if (!b.gap) {
        b.gap = this._group("bars", { seq }, "belief-gap",
          `${b.client}: ${String(b.lease.gapWords || "").replace("\n", " ")} (${leaseEnd.toFixed(1)} ms)`, "gap");
        b.gapRect = el("rect", { class: "bar", x: b.x + G.beliefX, width: G.beliefW, fill: this._url("gap") }, b.gap);
        // The empty, dashed lease slot beside it says "no lease here" in shape, not only colour.
        b.ghost = el("rect", { class: "ghost", x: b.x + G.leaseX, width: G.leaseW }, b.gap);
      }
      this._span(b.gapRect, leaseEnd, end);
      this._span(b.ghost, leaseEnd, end);
      if (!b.gapLabel && this._y(end) - this._y(leaseEnd) >= G.gapLabelPx && b.lease.gapWords) {
        const lg = this._group("labels", { seq }, "belief-gap-label", b.gap.firstChild.textContent);
        b.gapLabel = this._label(lg, b.lease.gapWords, b.x + G.barLabelX, this._y(leaseEnd) + 15 * this.scale, "end", "gap-label");
      }
    }

    _paused(ev) {
      const G = this.G;
      const x = this._x(ev.actor), t0 = tOf(ev);
      const g = this._group("bg", ev, "pause", null, "pause");
      const rect = el("rect", { x: x + G.bandLeft, width: G.bandRight - G.bandLeft, fill: this._url("pause") }, g);
      const pause = { client: ev.actor, t0, rect, g, x };
      pause.item = this._dynamic({ update: (it) => this._bar(it, pause, rect, g), node: g });
      this.pauses.push(pause);
      const lg = this._group("labels", ev, "pause-label");
      this._label(lg, said(ev).label, x + 10 * this.scale, this._y(t0) + 18 * this.scale, "start", "pause-text");
    }

    _resumed(ev) {
      const pause = this.pauses.find((p) => p.client === ev.actor && !this._closed(p.item));
      if (!pause) return;
      this._end(pause.item, ev.seq, tOf(ev));
      const lg = this._group("labels", ev, "resume-label");
      this._label(lg, said(ev).label, pause.x + 10 * this.scale, this._y(tOf(ev)) - 6 * this.scale, "start", "muted");
    }

    // Every step gets its number in the margin (1, 2, 3 … narrated or not) and the narrator's
    // short words for it; the tooltip and the page's story panel hold the whole narration.
    _step(ev) {
      const s = this.scale;
      const g = this._group("labels", ev, "narration" + (ev.say ? " said" : ""), said(ev).text || describe(ev), "step");
      g.dataset.step = ev.index;
      const y = this._y(tOf(ev)), x = this.narrX;
      const tick = el("path", { class: "say-tick" }, g);
      const badge = el("circle", { class: "step-badge", cx: x + 10 * s, cy: y, r: 10 * s }, g);
      const digits = el("text", { class: "step-badge-text", x: x + 10 * s, y: y + 4 * s, "text-anchor": "middle" }, g);
      digits.textContent = Number.isInteger(ev.index) ? String(ev.index + 1) : "?";
      const font = this.measure.font(g.getAttribute("class"), "label say-short");
      const words = this.measure.clip(said(ev).label || "", font, this.narrW - 34 * s) || "\u00a0";
      // The badge goes with its words: both move together to the first free line.
      const follow = (found) => {
        const dy = found.dy;
        badge.setAttribute("cy", y + dy);
        digits.setAttribute("y", y + dy + 4 * s);
        tick.setAttribute("d", dy > 4 ? `M${x - 14 * s},${y} L${x - 8 * s},${y} L${x - 2 * s},${y + dy}` : "");
      };
      this._label(g, words, x + 26 * s, y + 4 * s, "start", "say-short", { padLeft: 26 * s, onPlace: follow });
    }

    _clockJumped(ev) {
      this._clockState(ev.actor, { offset: ev.offset_ms }, ev);
      if (this._role(ev.actor) === "client") return this._clientClock(ev, said(ev).label, "clock-jump");
      const s = this.scale;
      const x = this._x(ev.actor), y = this._y(tOf(ev));
      const g = this._group("marks", ev, "clock-jump", null, "clock");
      const text = said(ev).label;
      const font = this.measure.font("clock-jump", "label clock-badge-text");
      const w = this.measure.width(text, font) + 16 * s, left = x - 10 * s - w; // left of the lifeline: its marks go right
      el("line", { class: "clock-link", x1: left + w, x2: x, y1: y, y2: y }, g);
      el("rect", { class: "clock-badge", x: left, y: y - 11 * s, width: w, height: 22 * s, rx: 11 * s }, g);
      el("text", { class: "label clock-badge-text", x: left + w / 2, y: y + 5 * s, "text-anchor": "middle" }, g).textContent = text;
      this._obstacle(left, y - 11 * s, x, y + 11 * s);
    }

    // ---- faults on links, nodes and clocks -----------------------------------------------

    // A client's SIGKILL ends its belief and lifeline; a server's kill -9 breaks its lifeline
    // until it restarts.
    _crashed(ev) {
      const role = this._role(ev.actor);
      if (role === "node" || role === "storage") this._nodeDown(ev);
      else this._beliefEnd(ev);
    }

    _nodeDown(ev) {
      const x = this._x(ev.actor), t0 = tOf(ev), y = this._y(t0), s = this.scale;
      if (this.downs.some((d) => d.node === ev.actor && !this._closed(d.item))) return;
      const g = this._group("marks", ev, "node-down", said(ev).text, "down");
      const gap = el("rect", { class: "down-gap", x: x - 5 * s, width: 10 * s }, g);
      const line = el("line", { class: "down-line", x1: x, x2: x }, g);
      el("path", { class: "down-break", d: `M${x - 11 * s},${y + 4 * s} L${x + 11 * s},${y - 4 * s} M${x - 11 * s},${y + 10 * s} L${x + 11 * s},${y + 2 * s}` }, g);
      this._obstacle(x - 12 * s, y - 6 * s, x + 12 * s, y + 12 * s);
      this._label(g, said(ev).label, x + 14 * s, y + 6 * s, "start", "down-label");
      const down = { node: ev.actor, t0, g, parts: [gap, line] };
      down.item = this._dynamic({ update: (it) => this._spanFault(it, down), node: g });
      this.downs.push(down);
    }

    _restarted(ev) {
      const x = this._x(ev.actor), t = tOf(ev), y = this._y(t), s = this.scale;
      const down = this.downs.find((d) => d.node === ev.actor && !this._closed(d.item));
      if (down) this._end(down.item, ev.seq, t);
      const kept = ev.persistence === "fsync";
      const g = this._group("marks", ev, "node-restarted" + (kept ? " kept" : " empty"), null, "restarted");
      el("path", { class: "restart-mark", d: `M${x - 7 * s},${y + 5 * s} L${x},${y - 6 * s} L${x + 7 * s},${y + 5 * s} z` }, g);
      this._obstacle(x - 8 * s, y - 7 * s, x + 8 * s, y + 6 * s);
      this._label(g, said(ev).label, x + 14 * s, y + 6 * s, "start", kept ? "restart-label" : "restart-label empty");
    }

    // One `link` event per client↔node link: a cut (blackhole, reset) or a delay lasts until
    // the next event of the same link; `pass` heals it. A cut is a dotted band on the client's
    // lifeline and on the node's, where the link's two ends are: nothing in between is shaded.
    _link(ev) {
      const client = ev.actor, node = ev.node, t = tOf(ev), s = this.scale, G = this.G;
      if (!this.cols.has(client) || !this.cols.has(node)) return;
      const open = this.links.find((l) => l.client === client && l.node === node && !this._closed(l.item));
      if (open) this._end(open.item, ev.seq, t);
      const cx = this._x(client), nx = this._x(node), dir = nx >= cx ? 1 : -1, y = this._y(t);
      if (ev.mode === "pass") {
        const g = this._group("marks", ev, "link-healed", null, "healed");
        const line = el("line", { class: "heal-line", x1: cx + dir * 4, x2: nx - dir * 4, y1: y, y2: y }, g);
        el("circle", { class: "heal-dot", cx: nx - dir * 10 * s, cy: y, r: 4 * s }, g);
        this._obstacleLine(line, cx + dir * 4, y, nx - dir * 4, y);
        this._linkNote(ev, "heal", cx, y, dir, "heal-label");
        return;
      }
      const cut = ev.mode === "blackhole" || ev.mode === "reset";
      const g = this._group("bg", ev, cut ? `cut-link ${ev.mode}` : "delayed-link-span", said(ev).text, cut ? "cut" : "delay");
      const parts = [];
      if (cut) {
        const w = G.cutW;
        parts.push(el("rect", { class: "strip", x: dir > 0 ? cx + 3 * s : cx - 3 * s - w, width: w, fill: this._url("cut") }, g));
        parts.push(el("rect", { class: "strip", x: dir > 0 ? nx - 3 * s - w : nx + 3 * s, width: w, fill: this._url("cut") }, g));
      }
      const edgeX = nx - dir * 10 * s;
      parts.push(el("line", { class: "edge", x1: edgeX, x2: edgeX }, g));
      const link = { client, node, t0: t, g, parts, delay: !cut };
      link.item = this._dynamic({ update: (it) => this._spanFault(it, link), node: g });
      this.links.push(link);
      const mark = this._group("marks", ev, cut ? "cut-mark" : "delay-mark");
      if (cut) { // a zig-zag at each end of the link: the lifelines between are not touched
        for (const [a, b] of [[cx + dir * 3 * s, cx + dir * 27 * s], [nx - dir * 27 * s, nx - dir * 3 * s]]) {
          const pts = [];
          for (let xx = Math.min(a, b), i = 0; xx <= Math.max(a, b) + 0.1; xx += 6 * s, i++) pts.push(`${xx.toFixed(1)},${(y + (i % 2 ? 4 : -4) * s).toFixed(1)}`);
          const zig = el("polyline", { class: "zigzag", points: pts.join(" ") }, mark);
          this._obstacleLine(zig, Math.min(a, b), y, Math.max(a, b), y);
        }
        this._linkNote(ev, "cut " + ev.mode, cx, y, dir, "cut-label");
      } else {
        const line = el("line", { class: "delay-line", x1: cx + dir * 4, x2: nx - dir * 4, y1: y, y2: y }, mark);
        this._obstacleLine(line, cx + dir * 4, y, nx - dir * 4, y);
        this._linkNote(ev, `delay ${ev.ms}|${ev.jitter_ms}`, cx, y, dir, "delay-label");
      }
    }

    // A horizontal line labels keep 4 px clear of (a cut's zig-zag, the run's end).
    _obstacleLine(node, x1, y1, x2, y2) {
      return this.placer.block({ kind: "box", x1: Math.min(x1, x2), x2: Math.max(x1, x2), y1: Math.min(y1, y2) - 4, y2: Math.max(y1, y2) + 4 });
    }

    // The narrator names every link of one click in each link event's label: draw it once.
    _linkNote(ev, verb, cx, y, dir, cls) {
      const t = tOf(ev), text = said(ev).label || "";
      const same = this.linkNotes.find((n) => n.client === ev.actor && n.verb === verb && Math.abs(n.t - t) <= MERGE_MS);
      if (same && same.text === text) return same.node;
      const lg = this._group("labels", ev, cls.replace("-label", "-link-label") + " link-label");
      const node = this._label(lg, text, cx + dir * 10 * this.scale, y + 18 * this.scale, dir > 0 ? "start" : "end", cls);
      this.linkNotes.push({ client: ev.actor, verb, t, text, node });
      return node;
    }

    _spanFault(item, f) {
      const end = this._endAt(item);
      const t1 = end ? end.t : Math.max(f.t0, this.tNow);
      item.settled = !!end && this.limit === Infinity;
      const sig = `${t1}|${!end}`;
      if (item.drawn === sig) return;
      item.drawn = sig;
      const y0 = this._y(f.t0), y1 = this._y(t1);
      f.g.classList.toggle("open", !end);
      for (const shape of f.parts) {
        if (shape.tagName === "line") { shape.setAttribute("y1", y0); shape.setAttribute("y2", y1); }
        else this._span(shape, f.t0, t1);
      }
      this._extend(f.g, y0, y1);
    }

    // A client's clock: a badge where it changed, left of its bars, wherever there is room.
    _clientClock(ev, text, cls) {
      const x = this._x(ev.actor), y = this._y(tOf(ev)), s = this.scale;
      const g = this._group("marks", ev, cls + " client-clock", null, "clock");
      const right = x + this.G.barLabelX + 4 * s;
      const link = el("path", { class: "clock-link", d: `M${x},${y} L${right},${y}` }, g);
      const badge = el("rect", { class: "clock-badge", y: y - 11 * s, height: 22 * s, rx: 11 * s }, g);
      const node = this._label(g, text, right - 8 * s, y + 5 * s, "end", "clock-badge-text", { padX: 8 * s });
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

    _clockRate(ev) {
      this._clockState(ev.actor, { rate: ev.rate }, ev);
      this._clientClock(ev, said(ev).label, "clock-rate");
    }

    // In each header, instead of its role: the lifeline's clock at the moment shown.
    _clockState(name, change, ev) {
      const list = this.headerWords.get(name) || [];
      const last = list.length ? Object.assign({}, list[list.length - 1].state) : { offset: 0, rate: 1 };
      for (const key in change) if (Number.isFinite(change[key])) last[key] = change[key];
      list.push({ seq: ev.seq, state: last });
      this.headerWords.set(name, list);
    }

    _headerClock(col) {
      if (!col.roleText) return;
      let state = { offset: 0, rate: 1 };
      for (const entry of this.headerWords.get(col.name) || []) if (!(entry.seq > this.limit)) state = entry.state;
      const parts = [];
      if (state.offset) parts.push(`clock ${signedDuration(state.offset)}`);
      if (state.rate !== 1) parts.push(`${parts.length ? "" : "clock "}runs \u00d7${state.rate}`);
      const text = parts.length ? parts.join(" \u00b7 ") : { client: "client", node: "lock node", storage: "storage" }[col.role];
      if (col.roleText.textContent !== text) col.roleText.textContent = text;
      col.roleText.classList.toggle("clock-state", parts.length > 0);
    }

    // A client's note: a small mark with the narrator's words (a Redlock round's shortfall).
    _noteMark(ev) {
      if (!this.cols.has(ev.actor)) return;
      const x = this._x(ev.actor), y = this._y(tOf(ev)), s = this.scale;
      const g = this._group("marks", ev, "note-mark", null, "note");
      el("rect", { x: x - 4 * s, y: y - 4 * s, width: 8 * s, height: 8 * s, transform: `rotate(45 ${x} ${y})` }, g);
      this._obstacle(x - 6 * s, y - 6 * s, x + 6 * s, y + 6 * s);
      this._label(g, said(ev).label, x + 10 * s, y + 15 * s, "start", "note-label", { short: said(ev).short });
    }

    // A watch fires: ZooKeeper tells the waiter, an arrow from the server it watched through.
    _woken(ev) {
      if (!this.cols.has(ev.actor)) return;
      const s = this.scale;
      const server = this.watches.get(ev.actor) || Array.from(this.cols.values()).find((c) => c.role === "node")?.name;
      if (!server) return;
      const sx = this._x(server), cx = this._x(ev.actor), dir = cx >= sx ? 1 : -1;
      const y = Math.max(this._y(tOf(ev)), (this.lastAt.get(server) || 0) + 6 * s);
      const g = this._group("arrows", ev, "notify", null, "watch");
      const line = el("line", { class: "arrow", x1: sx + dir * 2, y1: y - 6 * s, x2: cx - dir * 3, y2: y, "marker-end": this._url("notify") }, g);
      this._segment(line, sx + dir * 2, y - 6 * s, cx - dir * 3, y);
      el("path", { class: "bolt", d: `M${sx + dir * 6 * s},${y - 16 * s} l${dir * 4 * s},${6 * s} l${-dir * 3 * s},0 l${dir * 4 * s},${6 * s}` }, g);
      this.lastAt.set(server, y);
      const lg = this._group("labels", ev, "notify-label");
      this._label(lg, said(ev).label, sx - dir * 10 * s, y - 10 * s, dir > 0 ? "start" : "end", "notify-text",
        { short: said(ev).short, alt: [{ x: cx - dir * 14 * s, y: y + 16 * s, anchor: dir > 0 ? "end" : "start" }] });
    }

    _acquireFailed(ev) {
      const x = this._x(ev.actor), y = this._y(tOf(ev)), s = this.scale;
      this.rounds.delete(ev.actor);
      const g = this._group("marks", ev, "acquire-failed", null, "gave-up");
      el("circle", { class: "no-entry", cx: x, cy: y + 6 * s, r: 6 * s }, g);
      el("line", { class: "no-entry-bar", x1: x - 4 * s, x2: x + 4 * s, y1: y + 6 * s, y2: y + 6 * s }, g);
      this._obstacle(x - 7 * s, y - 1, x + 7 * s, y + 13 * s);
      this._label(g, said(ev).label, x + 12 * s, y + 20 * s, "start", "muted");
    }

    _ending(ev) {
      const y = this._y(tOf(ev));
      const g = this._group("marks", ev, "ending", null, "ending");
      this._label(g, said(ev).label, this.G.axisX + 8 * this.scale, y + 16 * this.scale, "start", "muted");
    }

    _runFailed(ev) {
      const y = this._y(tOf(ev));
      const g = this._group("marks", ev, "run-failed", null, "failed");
      el("line", { class: "fail-line", x1: this.G.axisX, x2: this.width - 8, y1: y, y2: y }, g);
      this._label(g, said(ev).label, this.G.axisX + 8 * this.scale, y + 18 * this.scale, "start", "fail-label");
      this._finish(null, tOf(ev), ev);
    }

    _runFinished(ev) { this.finishEvent = ev; this._finish(ev.verdict, tOf(ev), ev); }

    // ---- rounds of an acquire, folded --------------------------------------------------------

    // The narrator numbers each acquire's rounds (`said.round`); from the second refused round
    // on, they fold into one band ("rounds 2–23 refused") that a click opens.
    _roundOf(ev) {
      const r = ev && said(ev).round;
      const who = ev && (ev.kind === "expired" || ev.kind === "deleted" ? ev.holder : ev.actor);
      if (!r || !who) return null;
      let rounds = this.rounds.get(who);
      if (!rounds || r < rounds.last) { // a new acquire numbers its rounds from 1 again
        rounds = { list: new Map(), fold: null, last: 0 };
        this.rounds.set(who, rounds);
      }
      rounds.last = r;
      let round = rounds.list.get(r);
      if (!round) {
        round = { n: r, groups: [], labels: [], segs: [], t0: tOf(ev), t1: tOf(ev), closeSeq: null, fold: null };
        rounds.list.set(r, round);
      }
      round.t1 = Math.max(round.t1, tOf(ev));
      return round;
    }

    // The event that settles a refused round (said.fold): fold that round and say so on the band.
    _fold(ev) {
      const words = said(ev).fold;
      if (!words) return;
      const rounds = this.rounds.get(ev.actor);
      const round = rounds && rounds.list.get(said(ev).round);
      if (!round) return;
      let fold = rounds.fold;
      if (!fold) {
        fold = rounds.fold = { id: `${ev.actor}-${ev.seq}`, client: ev.actor, rounds: [], versions: [], state: null };
        this._foldBand(fold, ev, round);
        this.folds.push(fold);
      }
      fold.rounds.push(round);
      fold.lastClose = ev.seq;
      round.closeSeq = ev.seq;
      round.fold = fold;
      fold.versions.push({ seq: ev.seq, text: words, t1: round.t1 });
      for (const g of round.groups) this.foldOfSeq.set(Number(g.getAttribute("data-seq")), round);
      this._foldState(fold, true);
    }

    _foldBand(fold, ev, round) {
      const s = this.scale;
      const x = this._x(fold.client);
      const nodes = Array.from(this.cols.values()).filter((c) => c.role === "node");
      const far = nodes.length ? Math.max(...nodes.map((c) => c.x)) : x + this.colW;
      const at = { seq: ev.seq, kind: "fold", actor: ev.actor };
      const g = this._group("bg", at, "fold-band", said(ev).text, "fold");
      fold.rect = el("rect", { class: "band", x: x + 4 * s, width: far - x - 8 * s, rx: 6 * s }, g);
      fold.band = g;
      fold.y0 = this._y(round.t0) - 4 * s;
      fold.rect.setAttribute("y", fold.y0);
      const lg = this._group("labels", at, "fold-label", "Show or hide the folded rounds");
      lg.setAttribute("role", "button");
      lg.setAttribute("tabindex", "0");
      lg.setAttribute("aria-expanded", "false");
      const act = () => this.toggleFold(fold.id);
      lg.addEventListener("click", act);
      lg.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); act(); } });
      fold.labelGroup = lg;
      fold.label = this._label(lg, "\u25b8 " + said(ev).fold, x + 12 * s, fold.y0 + 16 * s, "start", "fold-text");
    }

    // Folded, unfolded, or not folded yet at the moment shown (a replay inside round 5).
    _foldState(fold, force) {
      let version = null;
      for (const v of fold.versions) if (!(v.seq > this.limit)) version = v;
      const open = this.openFolds.has(fold.id);
      const sig = `${version ? version.seq : "-"}|${open}|${this.limit >= fold.lastClose}`;
      if (!force && fold.sig === sig) return;
      fold.sig = sig;
      fold.state = version ? sig : null;
      for (const round of fold.rounds) {
        const folded = !(round.closeSeq > this.limit);
        for (const g of round.groups) {
          g.classList.toggle("folded", folded);
          g.classList.toggle("unfolded", folded && open);
        }
        if (!round.labelsGone) { // their words leave room for others; the tooltips keep them
          for (const lab of round.labels) { this.placer.unplace(lab); lab.node.setAttribute("display", "none"); }
          for (const seg of round.segs) this.space.remove(seg);
          round.labelsGone = true;
        }
      }
      if (!version) return;
      const y1 = this._y(version.t1) + 6 * this.scale;
      fold.rect.setAttribute("height", Math.max(20 * this.scale, y1 - fold.y0));
      this._extend(fold.band, fold.y0, y1);
      const text = (open ? "\u25be " : "\u25b8 ") + version.text;
      const lab = fold.label && fold.label.label;
      if (lab && lab.lines[0] !== text) {
        lab.lines = [text];
        lab.shown = null;
        this.placer.place(lab);
      }
      fold.labelGroup.setAttribute("aria-expanded", String(open));
      fold.band.classList.toggle("open", open);
    }

    // ---- end of run ----------------------------------------------------------------------

    _finish(verdict, endMs, ev) {
      const t = Number.isFinite(endMs) ? endMs : this.now;
      ev = ev || { kind: "run_finished", actor: "lab", t_ms: t, verdict, seq: Infinity };
      this.now = Math.max(this.now, t);
      const close = (item, t0) => { if (!this._closed(item)) this._end(item, ev.seq, Math.max(t0, t)); };
      for (const l of this.leases) if (!this._closed(l.item)) { l.by = "end"; close(l.item, l.t0); }
      for (const b of this.beliefs) close(b.item, b.t0);
      for (const p of this.pauses) close(p.item, p.t0);
      for (const f of this.links.concat(this.downs)) close(f.item, f.t0);
      for (const c of this.calls.values()) if (!this._closed(c.pending)) this._end(c.pending, ev.seq, t, { yMid: c.y + this.G.pendingPx });
      this.finished = true;
      this._barsAsObstacles();
      const y = this._y(t), G = this.G;
      const g = this._group("grid", ev, "run-end finish", null, "run-end");
      const line = el("line", { x1: G.axisX, x2: this.narrX - 16, y1: y, y2: y }, g);
      this._obstacleLine(line, G.axisX, y, this.narrX - 16, y);
      this._label(g, said(ev).label || `${secs(t, 2)}`, G.axisX + 8 * this.scale, y + 18 * this.scale, "start", "muted");
      const words = lines(said(ev).mark);
      ((verdict && verdict.overlaps) || []).forEach((o, i) => this._overlap(ev, o, words[i]));
      for (const w of (verdict && verdict.writes) || []) if (w.stale && w.accepted) this._staleWrite(ev, w);
    }

    // At the end the bars have their final lengths: labels keep off them from now on.
    _barsAsObstacles() {
      const G = this.G;
      const last = (item) => item.ends.length ? item.ends[item.ends.length - 1].t : this.now;
      for (const l of this.leases) {
        const b = this.beliefs.find((x) => x.lease === l);
        const t1 = Math.max(last(l.item), b ? last(b.item) : 0);
        this._obstacle(l.x + G.beliefX - 1, this._y(l.t0), l.x + G.leaseX + G.leaseW + 1, this._y(t1));
      }
    }

    // Two clients believed they held the lock at once: cross-hatch the whole width, with words.
    _overlap(ev, o, words) {
      const y0 = this._y(o.start_ms), y1 = this._y(Math.max(o.start_ms, o.end_ms)), G = this.G;
      const right = this.narrX - 16 * this.scale; // the margin's step badges stay clear
      const g = this._group("bg", ev, "overlap finish", `${words || ""}: ${o.start_ms} ms to ${o.end_ms} ms`, "overlap");
      el("rect", { class: "band", x: G.axisX, width: right - G.axisX, y: y0, height: y1 - y0, fill: this._url("overlap") }, g);
      this._extend(g, y0, y1);
      for (const yy of [y0, y1]) el("line", { class: "edge", x1: G.axisX, x2: right, y1: yy, y2: yy }, g);
      if (!words) return;
      const lg = this._group("labels", ev, "overlap-label finish", words);
      const font = this.measure.font("overlap-label finish", "label overlap-text");
      this._label(lg, this.measure.wrap(words, font, this.narrW - 8 * this.scale), this.narrX + 4 * this.scale, y0 + 16 * this.scale, "start", "overlap-text");
    }

    // A stale write the narrator did not see as damage (an event without words): flag it at the end.
    _staleWrite(ev, w) {
      const at = this.writes.get(w.seq);
      if (!at || at.damage) return;
      at.g.classList.add("damaged-write");
      at.g.setAttribute("data-mark", "damaged-write");
      at.damage = true;
    }
  }

  window.LockDiagram = LockDiagram;
})();

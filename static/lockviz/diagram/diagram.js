// The live sequence diagram of one lock run.
//
// Renders the events of docs/events.md into an <svg> as a vertical sequence diagram where time
// flows down in proportion: lifelines for clients, lock nodes and storage, request/reply arrows,
// and for each grant a lease bar (what the server granted) beside a belief bar (what the client
// thinks). Where the belief outlives the lease the client acts on a lock it no longer holds; that
// gap is the lesson, so it gets its own colour, hatch and label.
//
// Every word comes from the server's narrator with the event, as `said`: `label` on its arrow or
// mark, `mark` for a second mark, `round`/`fold` for retries folded into one band. The diagram
// draws; it does not phrase.
//
// Drawing is incremental so a streaming run never jumps: columns are fixed up front (every
// lifeline is drawn from the start), each event draws its own elements, and labels take the
// nearest free spot. A replay draws the whole run once and then shows it up to a moment
// (showUpTo): only what depends on the moment is redrawn (moments.js, surface.js). The parts:
// layout.js (where things go), frame.js (headers, axis, size), pen.js (drawing primitives),
// handlers/ (one function per kind of event), rounds.js (folded retries), end.js (the end).
//
// API: new LockDiagram(svg, {clients, nodes, storage, durationMs, pxPerMs, columnWidth,
// narrationWidth, backend, onHeader, fit, lane, breakMs, fitToEnd}); add(event), addAll(events), reset(),
// finish(verdict, endMs?), highlight(seq), showUpTo(seq), setHeaderAction(fn), relayout(),
// yOf(seq), nowY(), toggleFold(id), markTime(tMs, text), reachEnd(endMs); width, height, px. `fit` (an element)
// makes the columns share its width; `lane` ({width, scale}) draws a compare lane beside
// another, compact (layout.js LANE), `width` px wide at `scale`. markTime draws a line across
// the diagram at a moment, with its words from the server (where a fork parts from its
// original), kept through redraws. `fitToEnd`: the diagram ends at the run's end (a session
// without a schedule, drawn for a guess at its length).

import { finish } from "./end.js";
import { Frame } from "./frame.js";
import { CLIENT_KINDS, HANDLERS, HOLDER_KINDS, SERVER_KINDS, freshState } from "./handlers/index.js";
import { Measure, Placer } from "./labels.js";
import { Layout, MIN_TEXT_SCALE, columns, fitScale } from "./layout.js";
import { Moments } from "./moments.js";
import { Pen } from "./pen.js";
import { Rounds } from "./rounds.js";
import { Space } from "./space.js";
import { Surface } from "./surface.js";
import { SVG_NS, bySeq, said, tOf } from "./svg.js";

let instances = 0;

export class LockDiagram {
  constructor(svg, options) {
    if (!svg || svg.namespaceURI !== SVG_NS) throw new TypeError("LockDiagram needs an <svg> element");
    this.svg = svg;
    this.view = svg.ownerDocument.defaultView; // the window it is drawn in
    this.options = Object.assign({}, options || {});
    this.ids = "lv" + ++instances + "-"; // marker/pattern ids are document-global
    svg.classList.add("lock-diagram");
    if (!svg.hasAttribute("role")) svg.setAttribute("role", "group");
    this.openFolds = new Set();
    this.timeMarks = [];
    this.endMs = 0; // where the whole run ends, once a page knows (reachEnd): its axis's end
    this.scrollAhead = 0;
    this.surface = new Surface(this);
    this.reset();
  }

  get width() {
    return this.layout.width;
  }

  get height() {
    return this.frame.height;
  }

  get px() {
    return this.layout.px;
  }

  /** Draw one event; returns false for a seq already seen, so a resume never draws twice. */
  add(ev) {
    if (!ev || typeof ev !== "object") return false;
    if (ev.seq != null && this.seen.has(ev.seq)) return false;
    if (ev.seq != null) this.seen.add(ev.seq);
    this.events.push(ev);
    const relayout = ev.kind === "run_started" ? this._adoptRun(ev) : this._discover(ev);
    if (relayout) {
      this._rerender();
      return true;
    }
    this._place(ev);
    return true;
  }

  addAll(events) {
    const list = Array.from(events || []);
    let n = 0;
    this.surface.virtualise(this.events.length + list.length); // before drawing: nothing laid out in vain
    this.batch = true; // one resize and one refresh at the end, not one per event
    try {
      for (const ev of list) if (this.add(ev)) n++;
    } finally {
      this.batch = false;
    }
    this.frame.resize(false);
    this._show();
    return n;
  }

  /** Forget every event (replays reuse the diagram); constructor options stay. */
  reset() {
    Object.assign(this, {
      events: [],
      seen: new Set(),
      limit: Infinity,
      current: null,
      run: {},
      found: { clients: [], nodes: [] },
      extentMs: 0,
      manualFinish: null,
    });
    this._rerender();
  }

  /** Lay the diagram out again (the page's size or the presenter view changed). */
  relayout() {
    this._rerender();
  }

  /** End of run: close open bars at endMs (default: latest event), shade overlaps, flag stale writes. */
  finish(verdict, endMs) {
    if (this.state.finishEvent) return; // run_finished drew it, with its seq and time
    this.manualFinish = { verdict, endMs };
    finish(this, verdict, endMs, null);
    this._show();
  }

  /** Mark the elements of one event as current (replay cursor); null clears. */
  highlight(seq) {
    this.current = seq;
    for (const n of this.marked) n.classList.remove("current");
    this.marked = [];
    if (seq == null) {
      this.surface.pin([]);
      return [];
    }
    let found = (this.pen.bySeq.get(seq) || []).filter((n) => n.isConnected);
    const round = this.rounds.foldOfSeq.get(seq);
    if (round && !(round.closeSeq > this.limit) && !this.openFolds.has(round.fold.id)) found = [round.fold.band]; // folded away: the band stands for it
    found.forEach((n) => n.classList.add("current"));
    this.marked = found;
    this.surface.pin(found); // the cursor's marks are laid out wherever the page has scrolled
    return found;
  }

  /** Make the lifeline headers buttons that call fn(name, role, element); null makes them plain again. */
  setHeaderAction(fn) {
    this.options.onHeader = fn || null;
    for (const col of this.layout.cols.values()) this.frame.headerAction(col);
  }

  /** A dashed line across the diagram at run time tMs, with `text` (e.g. where a fork parts). */
  markTime(tMs, text) {
    const mark = { tMs: Number(tMs) || 0, text: String(text || "") };
    this.timeMarks = this.timeMarks.concat([mark]);
    this.frame.timeMark(mark);
  }

  /** The run ends at `endMs`: the axis reaches as far as on a page holding all its events. */
  reachEnd(endMs) {
    this.endMs = Math.max(0, Number(endMs) || 0);
    this.frame.reach();
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
    return ev ? this.layout.y(tOf(ev)) : null;
  }

  /** Where "now" is drawn (px from the top of the svg, in its own units). */
  nowY() {
    return this.layout.y(this.moments.tNow);
  }

  /** Open or close a folded band of refused rounds. */
  toggleFold(id) {
    if (this.openFolds.has(id)) this.openFolds.delete(id);
    else this.openFolds.add(id);
    this.rounds.toggle(id);
  }

  // run_started fills in what the constructor did not say; relayout only if it changed something.
  _adoptRun(ev) {
    this.run = ev;
    const cols = columns(this.options, ev, this.found);
    return (
      cols.join() !== Array.from(this.layout.cols.keys()).join() || Boolean(!this.options.durationMs && ev.duration_ms)
    );
  }

  // An actor nobody announced still gets a column (appended, so this is the one case that relayouts).
  _discover(ev) {
    const known = (n) => this.layout.cols.has(n);
    const fresh = [];
    if (CLIENT_KINDS.has(ev.kind) && !known(ev.actor)) fresh.push(["clients", ev.actor]);
    if (SERVER_KINDS.has(ev.kind) && !known(ev.actor)) fresh.push(["nodes", ev.actor]);
    const server = ev.kind === "request" ? ev.to : ev.kind === "reply" ? ev.from : null;
    if (server && !known(server)) fresh.push(["nodes", server]);
    if (HOLDER_KINDS.has(ev.kind) && ev.holder && !known(ev.holder)) fresh.push(["clients", ev.holder]);
    const seen = new Set();
    fresh.forEach(([role, name]) => {
      if (!seen.has(name)) {
        seen.add(name);
        this.found[role].push(name);
      }
    });
    return fresh.length > 0;
  }

  // Draw everything again, from the events, for the page's size and scale now.
  _rerender() {
    const svg = this.svg;
    svg.textContent = "";
    this.surface.clear();
    this.state = freshState();
    this.marked = [];
    this.space = new Space();
    this.measure = new Measure(svg);
    // The page's scale, made smaller (never below MIN_TEXT_SCALE) when the columns would not
    // fit the width they share; the diagram's own CSS sizes follow it (--diagram-scale).
    svg.style.removeProperty("--diagram-scale");
    const pageScale = parseFloat(this.view.getComputedStyle(svg).getPropertyValue("--diagram-scale")) || 1;
    // A compare lane beside another: its page chose the width and one scale for all its lanes.
    const lane = this.options.lane;
    const fit = this.options.fit;
    const fitWidth = lane ? lane.width : (fit && fit.clientWidth) || 0;
    const n = columns(this.options, this.run, this.found).length;
    const scale = lane ? lane.scale : fitScale(n, pageScale, fitWidth, Math.min(pageScale, MIN_TEXT_SCALE));
    if (scale !== pageScale) svg.style.setProperty("--diagram-scale", String(scale));
    this.layout = new Layout(this.options, this.run, this.found, { scale, fitWidth, lane: Boolean(lane) });
    this.placer = new Placer(this.space, this.measure, this.layout.G.labelSearchPx);
    this.placer.onPlaced = (label, box) => this.surface.extend(label.node, box.y1, box.y2);
    this.moments = new Moments(this);
    this.pen = new Pen(this);
    this.rounds = new Rounds(this);
    this.frame = new Frame(this);
    this.frame.draw();
    this.batch = true;
    try {
      for (const e of this.events.slice().sort(bySeq)) this._place(e);
      if (this.manualFinish) finish(this, this.manualFinish.verdict, this.manualFinish.endMs, null);
    } finally {
      this.batch = false;
    }
    this.frame.resize(false);
    this._show();
    if (this.current != null) this.highlight(this.current);
  }

  // One event in its place: after a break if the run was quiet long before it, then drawn.
  _place(ev) {
    const quiet = this.layout.breakBefore(ev, this.options.breakMs);
    if (quiet) this.frame.drawBreak(quiet, ev);
    this._draw(ev);
    this.frame.grow(tOf(ev));
  }

  _draw(ev) {
    const state = this.state;
    if (ev.kind !== "run_finished") state.now = Math.max(state.now, tOf(ev));
    const handler = HANDLERS[ev.kind];
    this.drawing = ev;
    try {
      if (handler) handler(this, ev);
      if (said(ev).fold) this.rounds.fold(ev);
    } catch (err) {
      // an odd event (an old export, a new kind's cousin) must not stop the drawing
      console.warn("lockviz: could not draw event", ev.seq, ev.kind, err);
    }
    this.drawing = null;
    if (!this.batch) this._show();
  }

  // Show the run up to this.limit: chunks, then everything that depends on the moment.
  _show() {
    if (this.batch) return;
    const { moments, surface } = this;
    moments.tNow = moments.timeAt(this.limit, this.state.now);
    surface.virtualise();
    if (surface.virtual) surface.window();
    if (this.limit !== moments.shownLimit || surface.virtual) surface.showAll();
    moments.redraw();
    this.rounds.show();
    this.frame.show();
  }
}

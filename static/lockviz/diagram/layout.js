// Where things go: the lifelines' columns (lanes → x) and the time axis (time → y), with the
// long quiet stretches drawn short. Pure: numbers in, numbers out, no DOM (tests/js/diagram/layout.test.mjs).

import { tOf, uniq } from "./svg.js";

export const DEFAULTS = { pxPerMs: 0.12, columnWidth: 220, narrationWidth: 230, durationMs: 4000, storage: "storage" };

// Geometry in px at scale 1. Bars and their labels sit LEFT of a client's lifeline, so arrows,
// which leave to the right towards the servers, never cross them.
export const BASE = {
  axisX: 64,
  firstCol: 250,
  serverRight: 196,
  top: 84,
  bottom: 60,
  headerTop: 10,
  headerH: 46,
  leaseX: -14,
  leaseW: 10,
  beliefX: -25,
  beliefW: 8,
  barLabelX: -32,
  bandLeft: -84, // pause band about a client's lifeline, within its column (bars.js)
  bandRight: 112,
  minPair: 8,
  fastPx: 22,
  pendingPx: 6,
  gapLabelPx: 12,
  labelSearchPx: 120,
  cutW: 12,
  breakPx: 56,
};

/** The storage's lifelines: the storage, and a replicated storage's other replicas (run_started's
 * `replicas`), in order. */
export function storages(options, run) {
  const storage = options.storage || run.storage || DEFAULTS.storage;
  return uniq([storage].concat(options.replicas || run.replicas || []));
}

/** The lifelines in order: clients, lock nodes, the storage (and its replicas). `options` (what
 * the page said) wins over `run` (the run_started event); `found` holds actors nobody announced. */
export function columns(options, run, found) {
  const stores = storages(options, run);
  const clients = uniq((options.clients || run.clients || []).concat(found.clients));
  const nodes = uniq((options.nodes || run.nodes || []).concat(found.nodes)).filter(
    (n) => !stores.includes(n) && !clients.includes(n),
  );
  return clients.concat(nodes, stores);
}

// The narrowest a fitted layout goes, in px at scale 1 (Layout's limits when it shares a width).
const WIDE = { col: 110, narr: 130, serverRight: 150 };
// A lane of the compare page, drawn beside another: its step captions are in each step's
// tooltip, so the margin keeps only the step numbers; the space left of the first client and
// right of the storage shrinks to what their labels need. Text stays its own size.
export const LANE = { col: 100, narr: 30, serverRight: 120, firstCol: 170 };

// The smallest text in the diagram is 13 units (app.css): at this scale it is 12 px on screen.
export const MIN_TEXT_SCALE = 12 / 13;

/** The largest scale ≤ `scale` at which `n` columns fit `fitWidth` px (the columns, margins
 * and narration at their narrowest), never below `floor`: a run with many lifelines (Redlock's
 * five nodes) is drawn a little smaller rather than cut at the edge of a projector. `lane`:
 * at a compare lane's narrowest (LANE). */
export function fitScale(n, scale, fitWidth, floor = 0, lane = false) {
  if (!fitWidth || n < 2) return scale;
  const min = lane ? LANE : { ...WIDE, firstCol: BASE.firstCol };
  const perScale = min.firstCol + min.serverRight + min.narr + 12 + (n - 1) * min.col;
  return Math.max(floor, Math.min(scale, (fitWidth - 16) / perScale));
}

export class Layout {
  /** `scale`: the page's --diagram-scale; `fitWidth`: the px the columns share (0: their own
   * width); `lane`: a compare lane's compact layout (LANE), for a lane beside another. */
  constructor(options, run, found, { scale = 1, fitWidth = 0, lane = false } = {}) {
    const o = options;
    this.scale = scale;
    this.lane = lane;
    this.G = Object.fromEntries(Object.entries(BASE).map(([k, v]) => [k, v * scale]));
    this.px = (o.pxPerMs || DEFAULTS.pxPerMs) * scale;
    this.storage = o.storage || run.storage || DEFAULTS.storage;
    this.durationMs = o.durationMs || run.duration_ms || DEFAULTS.durationMs;
    this.backend = o.backend || run.backend;
    const clients = uniq((o.clients || run.clients || []).concat(found.clients));
    const stores = storages(o, run);
    const cols = columns(o, run, found).map((n) => [
      n,
      stores.includes(n) ? "storage" : clients.includes(n) ? "client" : "node",
    ]);
    let colW = (o.columnWidth || DEFAULTS.columnWidth) * scale;
    this.narrW = (o.narrationWidth || DEFAULTS.narrationWidth) * scale;
    const min = lane ? LANE : WIDE;
    if (lane) {
      this.narrW = LANE.narr * scale;
      this.G.firstCol = LANE.firstCol * scale;
      this.G.serverRight = LANE.serverRight * scale;
    }
    if (fitWidth && cols.length > 1) {
      // Share the page's width: columns first, then the margins give way, within limits.
      const room = fitWidth - 4,
        minCol = min.col * scale,
        gaps = cols.length - 1;
      const fixed = () => this.G.firstCol + this.G.serverRight + this.narrW + 12;
      const over = fixed() + gaps * minCol - room;
      if (over > 0) this.narrW = Math.max(min.narr * scale, this.narrW - over);
      const still = fixed() + gaps * minCol - room;
      if (still > 0) this.G.serverRight = Math.max(min.serverRight * scale, this.G.serverRight - still);
      colW = Math.max(minCol, Math.min(colW, (room - fixed()) / gaps));
    }
    this.colW = colW;
    this.cols = new Map(cols.map(([name, role], i) => [name, { name, role, x: this.G.firstCol + i * colW }]));
    this.narrX = this.G.firstCol + (cols.length - 1) * colW + this.G.serverRight;
    this.width = Math.round(this.narrX + this.narrW + 12);
    this.breaks = []; // {t0, t1, keep}: run time t0..t1 drawn `keep` ms tall
    this.lastT = 0;
  }

  /** Time to px. A break (a long stretch with nothing happening) is drawn G.breakPx tall. */
  y(t) {
    let drawn = Math.max(0, t);
    for (const b of this.breaks) {
      if (t <= b.t0) break;
      const inside = Math.min(t, b.t1) - b.t0;
      drawn -= inside - inside * (b.keep / (b.t1 - b.t0));
    }
    return this.G.top + drawn * this.px;
  }

  x(name) {
    return this.cols.get(name) ? this.cols.get(name).x : this.G.firstCol;
  }

  role(name) {
    return this.cols.get(name) ? this.cols.get(name).role : null;
  }

  /** The next event is at `ev`'s time: a quiet stretch before it longer than breakMs (free play
   * left idle) becomes a break, returned to be drawn; otherwise null. */
  breakBefore(ev, breakMs) {
    const t = tOf(ev);
    const limit = breakMs || Math.max(4000, this.durationMs);
    let found = null;
    if (t - this.lastT > limit && this.lastT > 0) {
      const b = { t0: this.lastT + 300, t1: t - 300, keep: this.G.breakPx / this.px };
      if (b.t1 - b.t0 > b.keep) {
        this.breaks.push(b);
        found = b;
      }
    }
    this.lastT = Math.max(this.lastT, t);
    return found;
  }
}

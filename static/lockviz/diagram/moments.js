// What depends on the moment shown. A thing drawn over time (a bar, a band, a pending request)
// is an item: `ends` lists the {seq, t} of the events that end it, in order; shown at a moment,
// it is open until the first end at or before that moment. A move of the cursor redraws only the
// items it passes and those open at either end of the move, so stepping and scrubbing a replay
// cost the same at 20 events or 20,000; an item started or ended since the last redraw is redrawn
// too, moved or not (a class's page is told the position first, then given the events up to it).

import { bySeq, tOf } from "./svg.js";

export class Moments {
  /** `diagram`: its events, the moment shown (limit), the event being drawn and its surface. */
  constructor(diagram) {
    this.d = diagram;
    this.dyn = []; // every item
    this.open = new Set(); // items to redraw when the whole run is shown
    this.itemsAt = new Map(); // seq → the items that start or end there
    this.openNow = []; // items open at the moment last shown
    this.touched = new Set(); // items started or ended since the last redraw
    this.shownLimit = undefined;
    this.timeIndex = null;
    this.tNow = 0; // the run time of the moment shown
  }

  /** Start an item where the event being drawn is; `item.update(item)` draws it at a moment. */
  dynamic(item) {
    const drawing = this.d.drawing;
    item.ends = item.ends || [];
    item.drawn = null;
    item.seq0 = drawing && drawing.seq != null ? drawing.seq : -Infinity;
    item.chunk = item.node && item.node.closest ? item.node.closest("g.chunk") : null;
    this.dyn.push(item);
    this.touch(item, item.seq0);
    return item;
  }

  /** The event `seq` (at run time t) ends the item; `extra` goes with the end. */
  end(item, seq, t, extra) {
    item.ends.push(Object.assign({ seq: seq ?? Infinity, t }, extra || {}));
    this.touch(item, seq ?? Infinity); // redraw it once at its end
  }

  /** The event `seq` changes how `item` is drawn: redraw it now, and whenever the cursor passes
   * `seq`. */
  touch(item, seq) {
    this.open.add(item);
    this.touched.add(item);
    this.at(seq, item);
  }

  closed(item) {
    return item.ends.length > 0;
  }

  /** The end of an item as it was at the moment shown (null: still open then). */
  endAt(item) {
    let found = null;
    for (const e of item.ends) if (!(e.seq > this.d.limit)) found = e;
    return found;
  }

  at(seq, item) {
    if (!Number.isFinite(seq)) return;
    const list = this.itemsAt.get(seq);
    if (list) list.push(item);
    else this.itemsAt.set(seq, [item]);
  }

  // The items to redraw for a move of the cursor from `prev` to the moment shown.
  toRedraw(prev) {
    const limit = this.d.limit;
    if (limit === Infinity && prev === Infinity) return this.open;
    if (prev === undefined || !Number.isFinite(prev) || !Number.isFinite(limit)) return this.dyn;
    const lo = Math.min(prev, limit),
      hi = Math.max(prev, limit);
    if (hi - lo > 2048) return this.dyn;
    const items = new Set(this.openNow);
    for (let seq = lo + 1; seq <= hi; seq++) for (const item of this.itemsAt.get(seq) || []) items.add(item);
    return items;
  }

  /** Redraw what the move to the moment shown changed. */
  redraw() {
    const limit = this.d.limit;
    const items = Array.from(new Set([...this.toRedraw(this.shownLimit), ...this.touched]));
    this.touched.clear();
    this.shownLimit = limit;
    const openNow = [];
    for (const item of items) {
      if (item.seq0 <= limit && !this.endAt(item)) openNow.push(item);
      if (this.d.surface.later(item.chunk, "dirty", item)) continue; // redrawn when its chunk is shown
      item.update(item);
      if (limit === Infinity && item.ends.length && item.settled) this.open.delete(item);
    }
    this.openNow = openNow;
  }

  /** The run time reached by the event `limit` (the latest time so far: seq and time order can
   * differ by a fraction of a millisecond); `now` for the whole run. */
  timeAt(limit, now) {
    const events = this.d.events;
    if (limit === Infinity) return now;
    if (!this.timeIndex || this.timeIndex.n !== events.length) {
      const sorted = events.filter((e) => e.seq != null).sort(bySeq);
      let t = 0;
      const seqs = [],
        times = [];
      for (const e of sorted) {
        if (e.kind !== "run_finished") t = Math.max(t, tOf(e));
        seqs.push(e.seq);
        times.push(t);
      }
      this.timeIndex = { n: events.length, seqs, times };
    }
    const { seqs, times } = this.timeIndex;
    let lo = 0,
      hi = seqs.length - 1,
      found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (seqs[mid] <= limit) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? 0 : times[found];
  }
}

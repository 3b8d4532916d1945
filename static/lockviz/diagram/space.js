// What is already drawn where, for the labels to keep clear of (labels.js places them).
//
// Space keeps every box and arrow in rows of ROW px: asking "is this spot free?" looks at the
// rows the spot covers, never at everything drawn so far, so placing n labels costs O(n), not
// O(n²). Pure: boxes and segments in, answers out (tests/js/diagram/layout.test.mjs).

export const ROW = 48;

/** Liang–Barsky: does the segment (ax, ay)–(bx, by) enter the box? */
export function segmentHits(s, b) {
  let t0 = 0,
    t1 = 1;
  const dx = s.bx - s.ax,
    dy = s.by - s.ay;
  const p = [-dx, dx, -dy, dy];
  const q = [s.ax - b.x1, b.x2 - s.ax, s.ay - b.y1, b.y2 - s.ay];
  for (let i = 0; i < 4; i++) {
    if (p[i] === 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const r = q[i] / p[i];
    if (p[i] < 0) {
      if (r > t1) return false;
      if (r > t0) t0 = r;
    } else {
      if (r < t0) return false;
      if (r < t1) t1 = r;
    }
  }
  return t0 < t1;
}

const boxesMeet = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

function meets(item, box) {
  if (!boxesMeet(item, box)) return false;
  return item.kind === "seg" ? segmentHits(item, box) : true;
}

export class Space {
  constructor() {
    this.rows = new Map();
    this.dead = 0;
  }

  _rows(y1, y2) {
    const out = [];
    for (let r = Math.floor(y1 / ROW); r <= Math.floor(y2 / ROW); r++) out.push(r);
    return out;
  }

  /** item: {kind: "box"|"label"|"seg", x1, y1, x2, y2} (a seg also has ax, ay, bx, by; a box
   * may be a `bar`: a lease or belief bar, an obstacle once the run has ended). */
  add(item) {
    item.dead = false;
    item.rows = this._rows(item.y1, item.y2);
    for (const r of item.rows) {
      let row = this.rows.get(r);
      if (!row) this.rows.set(r, (row = []));
      row.push(item);
    }
    return item;
  }

  remove(item) {
    if (!item || item.dead) return;
    item.dead = true;
    if (++this.dead > 4096) this._compact();
  }

  _compact() {
    for (const [r, row] of this.rows)
      this.rows.set(
        r,
        row.filter((i) => !i.dead),
      );
    this.dead = 0;
  }

  /** The first live item the box meets (skipping `except`, and bars when `overBars`), or null. */
  hit(box, except, overBars) {
    for (const r of this._rows(box.y1, box.y2)) {
      const row = this.rows.get(r);
      if (!row) continue;
      for (const item of row)
        if (!item.dead && item !== except && !(overBars && item.bar) && meets(item, box)) return item;
    }
    return null;
  }

  /** Every live label the item meets (a bar: but those drawn over bars). */
  labelsMeeting(item) {
    const found = new Set();
    for (const r of item.rows || this._rows(item.y1, item.y2)) {
      for (const other of this.rows.get(r) || []) {
        if (other.dead || other.kind !== "label" || other === item || found.has(other)) continue;
        if (item.bar && other.label && other.label.overBars) continue;
        if (item.kind === "seg" ? meets(item, other) : boxesMeet(item, other)) found.add(other);
      }
    }
    return Array.from(found);
  }
}

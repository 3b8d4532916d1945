// Where the diagram's words go.
//
// A label is placed at the spot that names what it belongs to (beside its arrow or mark) or,
// when that spot is taken, at the nearest free one: a few pixels up or down, a second spot on
// the same line, further down (or a little up), then its short form. "Taken" means another
// label, a mark, or an arrow crossing it (space.js). Arrows that arrive later (a reply to an old
// request, the next event's arrow) push the labels they cross to a free spot again, so the final
// diagram has no label over another label or under an arrow.
//
// Measure reads a label's font from the page's CSS once per kind of label and measures text on a
// canvas, without asking the browser to lay out the SVG.

import { SVG_NS } from "./svg.js";

const NEAR = [0, -2, 2, -4, 4, -6, 6]; // still reads as its arrow's label
const PAD = 1.5; // between a label and anything else, px
const UP = 26; // how far a label may move up from its spot (above is earlier in time), px

/** Fonts by kind of label, read from the page's CSS; widths from a canvas. */
export class Measure {
  constructor(svg) {
    this.svg = svg;
    this.fonts = new Map();
    this.view = svg.ownerDocument.defaultView;
    this.ctx = svg.ownerDocument.createElement("canvas").getContext("2d");
  }

  font(groupCls, textCls) {
    const key = groupCls + "|" + textCls;
    let f = this.fonts.get(key);
    if (f) return f;
    const doc = this.svg.ownerDocument;
    const g = doc.createElementNS(SVG_NS, "g");
    g.setAttribute("class", groupCls);
    g.setAttribute("visibility", "hidden");
    const t = doc.createElementNS(SVG_NS, "text");
    t.setAttribute("class", textCls);
    g.appendChild(t);
    this.svg.appendChild(g);
    const cs = this.view.getComputedStyle(t);
    const size = parseFloat(cs.fontSize) || 14;
    const css = `${cs.fontStyle || "normal"} ${cs.fontWeight || 400} ${size}px ${cs.fontFamily || "sans-serif"}`;
    g.remove();
    this.ctx.font = css;
    const m = this.ctx.measureText("Hg");
    const ascent = m.fontBoundingBoxAscent || size * 0.93;
    const descent = m.fontBoundingBoxDescent || size * 0.24;
    f = { css, size, ascent, descent, line: size * 1.2 };
    this.fonts.set(key, f);
    return f;
  }

  width(text, font) {
    this.ctx.font = font.css;
    return this.ctx.measureText(text).width;
  }

  /** Words wrapped into lines of at most `width` px. */
  wrap(text, font, width) {
    const lines = [];
    let line = "";
    for (const word of String(text).split(/\s+/).filter(Boolean)) {
      const next = line ? line + " " + word : word;
      if (line && this.width(next, font) > width) {
        lines.push(line);
        line = word;
      } else line = next;
    }
    if (line) lines.push(line);
    return lines;
  }

  /** Cut to `width` px with an ellipsis. */
  clip(text, font, width) {
    if (this.width(text, font) <= width) return text;
    let lo = 0,
      hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.width(text.slice(0, mid).trimEnd() + "…", font) <= width) lo = mid;
      else hi = mid - 1;
    }
    return text.slice(0, lo).trimEnd() + "…";
  }
}

// Offsets from `from` to `to`: below only, or below and a little above (not far: above is
// earlier in time), nearest first.
function down(from, to, step) {
  const out = [];
  for (let dy = from; dy <= to; dy += step) out.push(dy);
  return out;
}

function around(from, to, step) {
  const out = [];
  for (let dy = from; dy <= to; dy += step) {
    out.push(dy);
    if (dy <= UP) out.push(-dy);
  }
  return out;
}

/*
 * Labels: {node (an SVG <text>), lines, font, spots: [{x, y, anchor}], far (may go further
 * down than its NEAR nudges), close (within `reach` of its spot or not at all: its words stay in
 * its event's tooltip), roam (may move within `reach` of any of its spots, not only the first),
 * short (lines for the short form), overBars (drawn over the bars, with a halo: the bars,
 * obstacles once the run has ended, neither push it nor take its room), keep (never left out,
 * see place), item (in the Space)}.
 */
export class Placer {
  constructor(space, measure, searchPx) {
    this.space = space;
    this.measure = measure;
    this.searchPx = searchPx;
    this.moved = 0;
    this.hidden = 0;
    this.kept = 0; // `keep` labels placed where no spot was free of everything
  }

  box(label, lines, spot, dy) {
    const w = Math.max(...lines.map((l) => this.measure.width(l, label.font)));
    const x1 = spot.anchor === "end" ? spot.x - w : spot.anchor === "middle" ? spot.x - w / 2 : spot.x;
    const top = spot.y - label.font.ascent + dy;
    const h = (lines.length - 1) * label.font.line + label.font.ascent + label.font.descent;
    const padX = label.padX || 0;
    return { x1: x1 - PAD - padX - (label.padLeft || 0), x2: x1 + w + PAD + padX, y1: top - PAD, y2: top + h + PAD };
  }

  // `spot` moved left or right just enough for the label's words to fit between its bounds.
  _inside(label, spot) {
    const b = this.box(label, label.lines, spot, 0);
    const right = Math.max(0, (label.minX ?? -Infinity) - b.x1);
    const left = Math.max(0, b.x2 - (label.maxX ?? Infinity));
    return { ...spot, x: spot.x + right - left };
  }

  _try(label, lines, spots, dys) {
    for (const spot of spots) {
      for (const dy of dys) {
        const b = this.box(label, lines, spot, dy);
        if (b.y1 < label.minY || b.x1 < (label.minX ?? -Infinity) || b.x2 > (label.maxX ?? Infinity)) continue;
        if (!this.space.hit(b, label.item, label.overBars)) return { spot, dy, box: b, lines };
      }
    }
    return null;
  }

  /** Put the label at its first free spot (see the file's comment), drawing it there. */
  place(label) {
    if (label.item) this.space.remove(label.item);
    const reach = Math.min(label.reach || this.searchPx, this.searchPx);
    const first = label.spots.slice(0, 1);
    const far = label.far !== false && !label.close;
    const near = far || label.close; // may move within `reach` of its spot
    const tiers = [
      [label.lines, label.spots, NEAR],
      [label.lines, label.roam ? label.spots : first, near ? around(8, reach, 2) : []],
    ];
    if (label.short)
      tiers.push(
        [label.short, label.spots, NEAR],
        [label.short, first, near ? around(8, label.close ? reach : this.searchPx, 2) : []],
      );
    if (far) tiers.push([label.short || label.lines, first, down(this.searchPx + 4, this.searchPx * 3, 4)]);
    let found = null;
    for (const [text, spots, dys] of tiers) if (!found && dys.length) found = this._try(label, text, spots, dys);
    // A label that carries the story (`keep`: a belief that outlived its lease) is not left out
    // for want of room beside the bars: with no spot free of everything, one free of words and
    // arrows will do, over the bars (with its halo), moved along its line into the diagram if its
    // spot is too near the edge (left of a compare lane's first client).
    if (!found && label.keep) {
      const over = { ...label, overBars: true };
      const inside = label.spots.map((spot) => this._inside(label, spot));
      tiers.push([label.lines, inside, NEAR], [label.lines, inside.slice(0, 1), near ? around(8, reach, 2) : []]);
      for (const [text, spots, dys] of tiers) if (!found && dys.length) found = this._try(over, text, spots, dys);
      if (found) this.kept++;
    }
    if (!found) {
      label.node.setAttribute("display", "none");
      label.node.classList.add("unplaced");
      label.item = null;
      this.hidden++;
      return false;
    }
    this._draw(label, found);
    label.item = this.space.add(Object.assign({ kind: "label", label }, found.box));
    return true;
  }

  _draw(label, found) {
    const { spot, dy, lines } = found;
    const node = label.node;
    node.removeAttribute("display");
    node.classList.remove("unplaced");
    if (label.shown !== lines && lines.length === 1) {
      node.textContent = lines[0]; // one line: no tspan, one layout object less
      label.shown = lines;
    } else if (label.shown !== lines) {
      node.textContent = "";
      lines.forEach((line, i) => {
        const span = node.ownerDocument.createElementNS(SVG_NS, "tspan");
        span.setAttribute("x", spot.x);
        if (i) span.setAttribute("dy", label.font.line);
        span.textContent = line;
        node.appendChild(span);
      });
      label.shown = lines;
    } else node.querySelectorAll("tspan").forEach((s) => s.setAttribute("x", spot.x));
    node.setAttribute("x", spot.x);
    node.setAttribute("y", spot.y);
    node.setAttribute("text-anchor", spot.anchor);
    if (dy) node.setAttribute("transform", `translate(0 ${dy})`);
    else node.removeAttribute("transform");
    label.at = found;
    if (label.onPlace) label.onPlace(found);
    if (this.onPlaced) this.onPlaced(label, found.box);
  }

  /** An obstacle (a mark's box, an arrow) arrives: labels it meets move to a free spot. */
  block(item) {
    this.space.add(item);
    for (const hit of this.space.labelsMeeting(item)) {
      this.moved++;
      this.place(hit.label);
    }
    return item;
  }

  unplace(label) {
    if (label.item) this.space.remove(label.item);
    label.item = null;
  }
}

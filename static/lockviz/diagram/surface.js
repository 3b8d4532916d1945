// Where the drawing goes: the svg's layers, each cut into chunks of CHUNK events. A replay shows
// or hides a chunk whole (the events after the moment shown, in the chunk that holds it, one by
// one); in a long run only the chunks near the screen are laid out and painted, and what changed
// in a chunk left out is redrawn when it comes back.

import { el } from "./svg.js";

export const CHUNK = 128; // events per chunk
const VIRTUAL_FROM = 2500; // from this many events, only chunks near the screen are laid out
export const END = "end"; // the chunk of what finish() draws without a run_finished event
export const LAYERS = ["bg", "grid", "lifelines", "bars", "arrows", "marks", "labels"];

export const chunkOf = (seq) => (seq == null ? null : seq === Infinity ? END : Math.floor(seq / CHUNK));

export class Surface {
  /** `diagram`: its svg, options, events, the moment shown (limit) and its rounds. */
  constructor(diagram) {
    this.d = diagram;
    this.virtual = false; // once a run is long, it stays so
    this.clear();
  }

  /** A new drawing (the diagram is laid out again): no layers, no chunks yet. */
  clear() {
    Object.assign(this, { layers: {}, chunks: {}, pinned: [], win: [-Infinity, Infinity] });
  }

  addLayers(svg) {
    for (const name of LAYERS) this.layers[name] = el("g", { class: "layer-" + name }, svg);
  }

  /** The chunk of a layer that holds events [k*CHUNK, (k+1)*CHUNK); the layer itself for no seq. */
  chunk(layer, seq) {
    const key = chunkOf(seq);
    const parent = this.layers[layer];
    if (key == null) return parent;
    const chunks = this.chunks[layer] || (this.chunks[layer] = new Map());
    let g = chunks.get(key);
    if (g) return g;
    g = el("g", { class: "chunk", "data-chunk": key }, null, parent.ownerDocument);
    g.y0 = g.y1 = null;
    if (this.virtual) {
      g.style.display = "none"; // until show() places it
      g.shownAs = "off";
    }
    const next = Array.from(chunks.entries())
      .filter(([k]) => key !== END && (k === END || k > key))
      .sort(([a], [b]) => (a === END) - (b === END) || a - b)[0];
    parent.insertBefore(g, next ? next[1] : null);
    chunks.set(key, g);
    if (!this.virtual) this.showChunk(key, g); // a long run's chunk waits for show()
    return g;
  }

  showAll() {
    for (const layer of Object.keys(this.chunks)) for (const [key, g] of this.chunks[layer]) this.showChunk(key, g);
  }

  // A chunk is shown when its events are at or before the moment shown (those after it, in the
  // chunk that holds the moment, are hidden one by one) and, in a long run, when it is near
  // the screen: only what is near the screen is laid out and painted.
  showChunk(key, g) {
    const limit = this.d.limit;
    g.seqState =
      key === END
        ? limit === Infinity
          ? "all"
          : "none"
        : (key + 1) * CHUNK - 1 <= limit
          ? "all"
          : key * CHUNK > limit
            ? "none"
            : "some";
    this.apply(g);
  }

  apply(g) {
    const limit = this.d.limit;
    const on = g.seqState !== "none" && (!this.virtual || g.pinned || this.near(g));
    const state = on ? g.seqState : "off";
    if (state === g.shownAs && (state !== "some" || g.limitShown === limit)) return;
    if (state === "some" || g.shownAs === "some") {
      for (const child of g.children) {
        const want = state === "some" && Number(child.getAttribute("data-seq")) > limit ? "none" : "";
        if (child.style.display !== want) child.style.display = want;
      }
    }
    const display = on ? "" : "none";
    if (on && g.dirty && g.dirty.size) {
      // what changed while it was left out
      for (const item of g.dirty) item.update(item);
      g.dirty.clear();
    }
    if (on && g.dirtyFolds && g.dirtyFolds.size) {
      for (const fold of g.dirtyFolds) this.d.rounds.state(fold);
      g.dirtyFolds.clear();
    }
    if (g.style.display !== display) g.style.display = display;
    g.shownAs = state;
    g.limitShown = limit;
  }

  /** In a long run, a change to a chunk left out waits until it is shown: whether it waits.
   * `list`: "dirty" (items to update) or "dirtyFolds". */
  later(chunk, list, thing) {
    if (!this.virtual || !chunk || chunk.shownAs !== "off") return false;
    (chunk[list] || (chunk[list] = new Set())).add(thing);
    return true;
  }

  near(g) {
    return g.y0 == null || (g.y1 >= this.win[0] && g.y0 <= this.win[1]);
  }

  /** What a chunk covers (px), so that a long run can leave out what is far from the screen. */
  extend(node, y0, y1) {
    const g = node && node.closest ? node.closest("g.chunk") : null;
    if (!g || !Number.isFinite(y0) || !Number.isFinite(y1)) return;
    g.y0 = g.y0 == null ? Math.min(y0, y1) : Math.min(g.y0, y0, y1);
    g.y1 = g.y1 == null ? Math.max(y0, y1) : Math.max(g.y1, y0, y1);
  }

  /** The chunks holding these nodes (the replay cursor's) are laid out wherever the page has
   * scrolled; the ones pinned before are not any more. */
  pin(nodes) {
    for (const g of this.pinned) {
      g.pinned = false;
      this.apply(g);
    }
    this.pinned = [];
    if (!this.virtual) return;
    for (const n of nodes) {
      const g = n.closest("g.chunk");
      if (g && !g.pinned) {
        g.pinned = true;
        this.pinned.push(g);
        this.apply(g);
      }
    }
  }

  // The part of the diagram near the screen (a quarter of a screen above and below), in its own
  // units; scrolling shows more before the frame is painted.
  window() {
    const d = this.d;
    const r = d.svg.getBoundingClientRect();
    const scale = r.height > 0 && d.height > 0 ? r.height / d.height : 1;
    const top = (d.scrollAhead - r.top) / scale,
      screen = d.view.innerHeight / scale;
    this.win = [top - screen / 4, top + 1.25 * screen];
  }

  /** From VIRTUAL_FROM events on (`count`, or the diagram's), only chunks near the screen. */
  virtualise(count) {
    const d = this.d;
    if (this.virtual || (count ?? d.events.length) < VIRTUAL_FROM || d.options.virtual === false) return;
    this.virtual = true;
    this.win = [-Infinity, Infinity];
    let queued = false;
    const onScroll = () => {
      if (queued) return;
      queued = true;
      d.view.requestAnimationFrame(() => {
        queued = false;
        this.refreshWindow();
      });
    };
    d.view.addEventListener("scroll", onScroll, { passive: true });
    d.view.addEventListener("resize", onScroll, { passive: true });
  }

  refreshWindow() {
    if (!this.virtual) return;
    this.window();
    for (const layer of Object.keys(this.chunks)) for (const g of this.chunks[layer].values()) this.apply(g);
  }
}

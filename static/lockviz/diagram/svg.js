// The diagram's smallest pieces: an SVG element, and an event's time and words as the drawing
// reads them. No state: every other part of the diagram draws with these.

export const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with these attributes (null ones left out), appended to `parent` if given;
 * without a parent, `doc` makes it. */
export function el(tag, attrs, parent, doc) {
  const node = (doc || parent.ownerDocument).createElementNS(SVG_NS, tag);
  for (const key in attrs) if (attrs[key] != null) node.setAttribute(key, attrs[key]);
  if (parent) parent.appendChild(node);
  return node;
}

/** An attribute set only when it changes: an unchanged long line is not repainted. */
export function set(node, attr, value) {
  const cache = node.attrs || (node.attrs = {});
  if (cache[attr] === value) return;
  cache[attr] = value;
  node.setAttribute(attr, value);
}

export const tOf = (ev) => (Number.isFinite(ev.t_ms) ? Math.max(0, ev.t_ms) : 0);
export const secs = (ms, digits) => (ms / 1000).toFixed(digits) + " s";
export const uniq = (list) => Array.from(new Set(list));
export const bySeq = (a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity);
/** The narrator's words for the event (docs/events.md, `said`). */
export const said = (ev) => ev.said || {};
export const lines = (text) =>
  String(text || "")
    .split("\n")
    .filter(Boolean);

/** "+1.5 s", "−200 ms": a clock's offset as its header shows it. */
export function signedDuration(ms) {
  const sign = ms < 0 ? "\u2212" : "+";
  const abs = Math.abs(ms);
  return sign + (abs >= 1000 ? +(abs / 1000).toFixed(1) + " s" : abs + " ms");
}

/** The tooltip: the narrator's sentence and every field of the event. */
export function describe(ev) {
  const head = `#${ev.seq ?? "?"} ${ev.kind} \u00b7 ${ev.actor} \u00b7 t = ${tOf(ev).toFixed(1)} ms`;
  const text = said(ev).text ? [said(ev).text] : [];
  const rest = Object.keys(ev)
    .filter((k) => !["seq", "t_ms", "actor", "kind", "said"].includes(k))
    .map((k) => `${k}: ${typeof ev[k] === "object" ? JSON.stringify(ev[k]) : ev[k]}`);
  return [head].concat(text, rest).join("\n");
}

// The sequence diagram as a slide: a standalone SVG, or a PNG drawn from it.
//
// Links with data-export="svg" or "png" (and data-name, the file name without extension)
// download the diagram at the moment shown, on a 1920×1080 slide with the page's title, the
// run's settings and, once the page shows it, the verdict. The diagram is drawn again for the
// slide, with a time scale that makes it as wide as the slide allows (a run is tall and narrow
// on screen; drawn as it is, it filled a third of a wide slide). The SVG carries its own styles
// (the diagram rules of app.css, copied into a <style>), so it looks the same anywhere.
// Text the diagram wraps in HTML (foreignObject) becomes SVG text: slide tools and a canvas
// drawing the PNG do not all render HTML inside SVG.
//
// startExports({diagram(), moment()}) wires the links: diagram() is the page's LockDiagram,
// moment() the replay's {seq, clock} (null elsewhere), which names the file and the slide.

import { LockDiagram } from "../diagram/diagram.js";
import { SVG_NS, el } from "../diagram/svg.js";
import { eventsDurationMs, scaleFor } from "./extent.js";
import { pageData } from "../page-data.js";

const SLIDE = { width: 1920, height: 1080, margin: 48 };

// The diagram's rules from the page's style sheets; ":root" for the colour variables.
function diagramCss() {
  const rules = [];
  for (const sheet of Array.from(document.styleSheets)) {
    let list;
    try {
      list = sheet.cssRules;
    } catch {
      continue; // another origin's sheet
    }
    for (const rule of Array.from(list || [])) {
      const sel = rule.selectorText || "";
      if (sel === ":root" || sel.includes("lock-diagram"))
        rules.push(rule.cssText.replace(/svg\.lock-diagram/g, ".lock-diagram"));
    }
  }
  return rules.join("\n");
}

// Words of one line each, about `chars` long.
function wrap(text, chars) {
  const lines = [];
  let line = "";
  for (const word of String(text).split(/\s+/).filter(Boolean)) {
    if (line && (line + " " + word).length > chars) {
      lines.push(line);
      line = word;
    } else line = line ? line + " " + word : word;
  }
  if (line) lines.push(line);
  return lines;
}

function textBlock(parent, lines, x, y, size, attrs) {
  const t = el("text", Object.assign({ x, y, "font-size": size }, attrs || {}), parent);
  lines.forEach((line, i) => {
    el("tspan", { x, dy: i ? size * 1.25 : null }, t).textContent = line;
  });
  return t;
}

// foreignObject notes → SVG text with the same colour and weight.
function flattenNotes(original, clone) {
  const from = Array.from(original.querySelectorAll("foreignObject"));
  Array.from(clone.querySelectorAll("foreignObject")).forEach((fo, i) => {
    const div = from[i] && from[i].firstElementChild;
    const style = div ? getComputedStyle(div) : null;
    const size = style ? parseFloat(style.fontSize) || 14 : 14;
    const width = Number(fo.getAttribute("width")) || 250;
    const lines = wrap(fo.textContent, Math.max(10, Math.floor(width / (size * 0.55))));
    const look = style ? `fill: ${style.color}; font-weight: ${style.fontWeight}` : "";
    const t = textBlock(
      fo.parentNode,
      lines,
      Number(fo.getAttribute("x")) + 4,
      Number(fo.getAttribute("y")) + size,
      size,
      { style: look },
    ); // inline: beats ".lock-diagram text"
    fo.parentNode.replaceChild(t, fo);
  });
}

function verdictLines() {
  const verdict = document.getElementById("verdict");
  if (!verdict || verdict.closest("[aria-hidden='true']")) return null;
  const headline = verdict.querySelector(".headline");
  if (!headline) return null;
  const summary = headline.nextElementSibling;
  return {
    headline: headline.textContent.trim().replace(/\s+/g, " "),
    summary: summary ? summary.textContent.trim().replace(/\s+/g, " ") : "",
  };
}

function subtitle(moment) {
  const s = pageData().scenario || {};
  const run = document.querySelector("[data-export][data-name]");
  const id = run ? run.dataset.name.replace(/^lockviz-run-/, "") : "";
  const parts = [
    id ? `run ${id}` : null,
    `${s.backend || "?"}${s.variant ? ` (${s.variant})` : ""}`,
    `fencing ${s.fencing === false ? "off" : "on"}`,
    `lease ${s.ttl_ms} ms`,
  ];
  if (moment) parts.push(`replay at event #${moment.seq}, t = ${(moment.clock / 1000).toFixed(2)} s`);
  return parts.filter(Boolean).join(" · ");
}

// The page's diagram, drawn again off screen so that its shape fits the slide's box.
function fitted(source, box) {
  const holder = document.createElement("div");
  holder.style.cssText = "position:absolute;left:-20000px;top:0;visibility:hidden";
  const svg = el("svg", { class: "lock-diagram", style: "--diagram-scale:1" }, holder);
  document.body.appendChild(holder);
  const events = source.events.slice();
  const endMs = eventsDurationMs(events);
  const options = Object.assign({}, source.options, {
    fit: null,
    onHeader: null,
    durationMs: endMs,
    breakMs: source.options.breakMs,
  });
  const probe = new LockDiagram(svg, Object.assign({}, options, { pxPerMs: 0.1 }));
  const width = probe.width;
  const wanted = (width * box.height) / box.width; // the height that fills the box at its width
  options.pxPerMs = scaleFor(wanted - 150, endMs, 0.04, 0.6);
  const diagram = new LockDiagram(svg, options);
  diagram.addAll(events);
  diagram.showUpTo(source.limit);
  return { svg, done: () => holder.remove() };
}

/** The slide as SVG text: `svg` (drawn again from `source`, a LockDiagram, if given) at `moment`. */
export function slide(svg, source, moment) {
  const W = SLIDE.width,
    H = SLIDE.height,
    M = SLIDE.margin;
  const out = el("svg", { xmlns: SVG_NS, width: W, height: H, viewBox: `0 0 ${W} ${H}` }, null, document);
  el("style", {}, out).textContent = diagramCss() + "\n.slide-text { font-family: var(--font); }";
  el("rect", { width: W, height: H, fill: "#fff" }, out);
  const title = document.querySelector("h1");
  textBlock(out, [title ? title.textContent.trim() : "lockviz run"], M, M + 36, 40, {
    class: "slide-text",
    fill: "#1b1f24",
    "font-weight": 700,
  });
  textBlock(out, [subtitle(moment)], M, M + 80, 24, { class: "slide-text", fill: "#4d5761" });
  let bottom = H - M;
  const v = verdictLines();
  if (v) {
    const lines = wrap(v.summary, 130).slice(0, 2);
    bottom -= 36 + lines.length * 30 + 8;
    textBlock(out, [v.headline], M, bottom + 32, 30, { class: "slide-text", fill: "#1b1f24", "font-weight": 700 });
    textBlock(out, lines, M, bottom + 70, 24, { class: "slide-text", fill: "#1b1f24" });
  }
  // The drawn part of the diagram, scaled to fit what is left of the slide.
  const pad = 8,
    top = M + 104;
  const redrawn = source && source.events ? fitted(source, { width: W - 2 * M, height: bottom - top - 12 }) : null;
  if (redrawn) svg = redrawn.svg;
  const box = svg.getBBox();
  const inner = el(
    "svg",
    {
      x: M,
      y: top,
      width: W - 2 * M,
      height: bottom - top - 12,
      viewBox: `${box.x - pad} ${box.y - pad} ${box.width + 2 * pad} ${box.height + 2 * pad}`,
      preserveAspectRatio: "xMidYMid meet",
    },
    out,
  );
  const g = el("g", { class: "lock-diagram", "font-size": 14 }, inner);
  const clone = svg.cloneNode(true);
  clone.querySelectorAll(".current").forEach((n) => n.classList.remove("current")); // no replay cursor on a slide
  flattenNotes(svg, clone);
  while (clone.firstChild) g.appendChild(clone.firstChild);
  g.style.fontFamily = "var(--font)";
  if (redrawn) redrawn.done();
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(out);
}

export function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 2000);
}

export function png(svgText, done) {
  const url = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
  const img = new Image();
  img.onload = () => {
    const canvas = document.createElement("canvas");
    canvas.width = SLIDE.width;
    canvas.height = SLIDE.height;
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    URL.revokeObjectURL(url);
    canvas.toBlob((blob) => done(blob, null), "image/png");
  };
  img.onerror = () => {
    URL.revokeObjectURL(url);
    done(null, "the browser could not draw the SVG");
  };
  img.src = url;
}

function status(text) {
  const node = document.getElementById("export-status");
  if (node) node.textContent = text;
}

let started = false;

export function startExports({ diagram, moment = () => null }) {
  if (started) return;
  started = true;
  document.addEventListener("click", (e) => {
    const link = e.target.closest("[data-export]");
    if (!link) return;
    e.preventDefault();
    const svg = document.getElementById("diagram");
    if (!svg) return status("No diagram on this page to export.");
    const at = moment();
    const name = (link.dataset.name || "lockviz-diagram") + (at ? `-seq-${at.seq}` : "");
    const text = slide(svg, diagram(), at);
    if (link.dataset.export === "svg") {
      download(new Blob([text], { type: "image/svg+xml" }), name + ".svg");
      status("SVG saved.");
    } else {
      status("Drawing the PNG…");
      png(text, (blob, error) => {
        if (!blob) return status(`No PNG: ${error || "the canvas refused"}.`);
        download(blob, name + ".png");
        status("PNG saved.");
      });
    }
  });
}

// What a diagram draws, to compare two drawings of one run (tests/browser/test_class_marks.py):
// a line for every visible mark of an event (its group's classes) with the run time each of its
// bars, bands and lines spans (the svg's heights read back through the diagram's own time axis,
// so two screens of different sizes compare), and the words of every visible text (as it was
// given them: a label wrapped otherwise, placed in its short form or nudged aside says the
// same). Time marks across the diagram (where a fork parts) too. Sorted, a list with repeats;
// `diagram` is a LockDiagram.
// `captions` false: without the steps' captions in the margin (a compare lane beside another
// shows only their numbers, the words in each step's tooltip).
window.lockvizMarks = function (diagram, captions = true) {
  const svg = diagram.svg;
  const layout = diagram.layout;
  const visible = window.lockvizVisible(svg); // visible.js
  // y (in the svg's units) → run time, by bisection on the diagram's own axis (breaks included).
  const msOf = (y) => {
    let lo = -1000,
      hi = 1e7;
    for (let i = 0; i < 80; i++) {
      const mid = (lo + hi) / 2;
      if (layout.y(mid) < y) lo = mid;
      else hi = mid;
    }
    return Math.round(lo);
  };
  const spans = (g) =>
    Array.from(g.children)
      .filter((c) => c.tagName === "rect" || c.tagName === "line")
      .map((c) => {
        if (c.tagName === "line") return `line ${msOf(+c.getAttribute("y1"))}→${msOf(+c.getAttribute("y2"))}`;
        const y = +c.getAttribute("y"),
          h = +c.getAttribute("height");
        return `rect ${msOf(y)}→${msOf(y + h)}${h > 0 ? "" : " (no height)"}`;
      });
  // A label's words as it was given them, whatever the lines it wrapped to; a quick reply said on
  // its request's line ("SET NX PX 2000 → OK · token 1") where the column is wide enough is the
  // same two labels as on a narrow screen, where each has a line of its own.
  const said = (t) =>
    (t.label ? t.label.lines.join(" ") : t.textContent)
      .split(/ [\u2192\u2190] /)
      .map((w) => w.replace(/\s+/g, " ").trim())
      .filter(Boolean);
  const out = [];
  // Each event's marks: its groups that draw a shape (a bar, a band, an arrow, a badge…).
  for (const g of svg.querySelectorAll("g[data-seq]")) {
    if (!visible(g)) continue;
    // A belief gap still open ends at the page's own "now": two screens read a moment apart
    // differ there (10 ms drawn on one, under 2 px and hidden on the other), not in the run.
    if (g.classList.contains("belief-gap") && g.classList.contains("open")) continue;
    if (!Array.from(g.children).some((c) => !["text", "title"].includes(c.tagName))) continue;
    const cls = (g.getAttribute("class") || "")
      .split(/\s+/)
      .filter((c) => c && c !== "current")
      .sort()
      .join(".");
    out.push([`#${g.dataset.seq} ${cls}`, ...spans(g)].join(" | "));
  }
  // Every word drawn.
  for (const t of svg.querySelectorAll("text")) {
    if (!visible(t) || t.closest("defs") || (!captions && t.closest("g.narration"))) continue;
    for (const words of said(t)) out.push(`“${words}”`);
  }
  for (const g of svg.querySelectorAll("g.time-mark")) if (visible(g)) out.push(["time-mark", ...spans(g)].join(" | "));
  return out.sort();
};

// The overlap check of tests/browser/test_diagram.py: every visible label's box against every
// other label's and against every visible arrow (a line segment), in screen pixels, with half a
// pixel of tolerance. Returns {labels, arrows, hidden, found: [[what, label, other], ...]}.
window.lockvizOverlaps = function (svg, tol) {
  tol = tol ?? 0.5;
  const cache = new Map();
  const vis = (n) => {
    if (!n || n === svg) return true;
    if (cache.has(n)) return cache.get(n);
    const cs = getComputedStyle(n);
    const v = cs.display !== "none" && cs.visibility !== "hidden" && vis(n.parentElement);
    cache.set(n, v);
    return v;
  };
  const labels = Array.from(svg.querySelectorAll("text.label"))
    .filter(vis)
    .map((n) => ({ n, r: n.getBoundingClientRect() }))
    .filter((l) => l.r.width > 0);
  const arrows = Array.from(svg.querySelectorAll("line.arrow"))
    .filter(vis)
    .map((n) => {
      const m = n.getScreenCTM();
      const p = (x, y) => {
        const q = new DOMPoint(x, y).matrixTransform(m);
        return [q.x, q.y];
      };
      const [ax, ay] = p(+n.getAttribute("x1"), +n.getAttribute("y1"));
      const [bx, by] = p(+n.getAttribute("x2"), +n.getAttribute("y2"));
      return { n, ax, ay, bx, by };
    });
  const meet = (a, b) =>
    a.left + tol < b.right && b.left + tol < a.right && a.top + tol < b.bottom && b.top + tol < a.bottom;
  function segHits(s, r) {
    const b = { x1: r.left + tol, x2: r.right - tol, y1: r.top + tol, y2: r.bottom - tol };
    let t0 = 0,
      t1 = 1;
    const dx = s.bx - s.ax,
      dy = s.by - s.ay;
    const p = [-dx, dx, -dy, dy],
      q = [s.ax - b.x1, b.x2 - s.ax, s.ay - b.y1, b.y2 - s.ay];
    for (let i = 0; i < 4; i++) {
      if (p[i] === 0) {
        if (q[i] < 0) return false;
        continue;
      }
      const k = q[i] / p[i];
      if (p[i] < 0) {
        if (k > t1) return false;
        if (k > t0) t0 = k;
      } else {
        if (k < t0) return false;
        if (k < t1) t1 = k;
      }
    }
    return t0 < t1;
  }
  const found = [];
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++)
      if (meet(labels[i].r, labels[j].r)) found.push(["label", labels[i].n.textContent, labels[j].n.textContent]);
    for (const a of arrows)
      if (segHits(a, labels[i].r))
        found.push(["arrow", labels[i].n.textContent, a.n.closest("[data-seq]")?.getAttribute("data-seq")]);
  }
  return {
    labels: labels.length,
    arrows: arrows.length,
    hidden: svg.querySelectorAll("text.label.unplaced").length,
    found,
  };
};

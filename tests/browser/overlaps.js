// The overlap check of tests/browser/test_diagram.py: every visible label's box against every
// other label's and against every visible arrow (a line segment), in screen pixels, with half a
// pixel of tolerance. Returns {labels, arrows, hidden, found: [[what, label, other], ...]}.
window.lockvizOverlaps = function (svg, tol) {
  tol = tol ?? 0.5;
  const vis = window.lockvizVisible(svg); // visible.js
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
  // An arrow crosses a label if an end of it is inside the label's box or it crosses one of the
  // box's edges: worked out otherwise than the diagram's own placer does (space.js), so that the
  // check does not share its mistakes.
  const side = (a, b, c) => Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
  const crosses = (p, q, r, s) => side(p, q, r) !== side(p, q, s) && side(r, s, p) !== side(r, s, q);
  function segHits(s, r) {
    const [x1, x2, y1, y2] = [r.left + tol, r.right - tol, r.top + tol, r.bottom - tol];
    if (x1 >= x2 || y1 >= y2) return false;
    const inside = (x, y) => x > x1 && x < x2 && y > y1 && y < y2;
    if (inside(s.ax, s.ay) || inside(s.bx, s.by)) return true;
    const corners = [
      [x1, y1],
      [x2, y1],
      [x2, y2],
      [x1, y2],
    ];
    return corners.some((c, i) => crosses([s.ax, s.ay], [s.bx, s.by], c, corners[(i + 1) % 4]));
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

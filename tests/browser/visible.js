// Whether a node of an svg is drawn: neither it nor a parent below the svg is `display: none` or
// `visibility: hidden`. One reading's answers are kept (a diagram asks of each parent many
// times). Read by marks.js and overlaps.js, loaded before them.
window.lockvizVisible = function (svg) {
  const cache = new Map();
  const visible = (n) => {
    if (!n || n === svg) return true;
    if (cache.has(n)) return cache.get(n);
    const cs = getComputedStyle(n);
    const v = cs.display !== "none" && cs.visibility !== "hidden" && visible(n.parentElement);
    cache.set(n, v);
    return v;
  };
  return visible;
};

// Presenter view: the run, lesson and replay pages for a projector (and for a class following
// on their own screens). The header, the description, the server line and the fault bar fold
// into toggles; the verdict sits above the diagram; the diagram is drawn at 1:1 with labels of
// at least 18 px (app.css: --diagram-scale), its columns sharing the page's width; while a run
// streams, the page follows its latest moment. The choice is kept in this browser
// (localStorage) and toggled by the header button or the "z" key.
//
// window.lockvizPresenter = {on, adopt(diagram, fitElement), follow(diagram, finished)};
// window.lockvizMoments(diagram): links to a moment (the verdict's "see it at the storage") show
// that moment in the diagram when the page has it, instead of opening the replay.
(function () {
  "use strict";
  const root = document.documentElement;
  const button = document.getElementById("presenter-toggle");
  const adopted = [];
  let following = true;
  let relayoutTimer = null;

  function apply(on, quiet) {
    root.classList.toggle("presenter", on);
    if (button) button.setAttribute("aria-pressed", String(on));
    try { localStorage.setItem("lockviz-presenter", on ? "1" : ""); } catch (e) { /* private mode */ }
    if (!quiet) relayout();
  }

  // The diagrams are laid out for the view's scale and width: lay them out again.
  function relayout() {
    for (const { diagram, fit } of adopted) {
      diagram.options.fit = root.classList.contains("presenter") ? fit : null;
      diagram.relayout();
    }
  }

  let stored = "";
  try { stored = localStorage.getItem("lockviz-presenter") || ""; } catch (e) { /* private mode */ }
  apply(stored === "1", true);
  if (button) button.addEventListener("click", () => apply(!root.classList.contains("presenter")));
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
    if (event.key === "z" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      apply(!root.classList.contains("presenter"));
    }
  });
  window.addEventListener("resize", () => {
    if (!root.classList.contains("presenter") || !adopted.length) return;
    clearTimeout(relayoutTimer);
    relayoutTimer = setTimeout(relayout, 200);
  });

  // Folded parts: a toggle per part; a page without that part has no toggle.
  function wireFolds() {
    document.querySelectorAll(".pfold-toggle").forEach((toggle) => {
      const target = document.getElementById(toggle.getAttribute("aria-controls"));
      toggle.hidden = !target;
      if (!target || toggle.wired) return;
      toggle.wired = true;
      target.classList.add("pfold");
      toggle.addEventListener("click", () => {
        const shown = !target.classList.contains("shown");
        target.classList.toggle("shown", shown);
        toggle.setAttribute("aria-expanded", String(shown));
      });
    });
    const follow = document.getElementById("follow-now");
    if (follow && !follow.wired) {
      follow.wired = true;
      follow.addEventListener("click", () => {
        following = !following;
        follow.setAttribute("aria-pressed", String(following));
      });
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wireFolds);
  else wireFolds();

  // While a run streams in the presenter view, keep its latest moment on screen.
  let pending = false;
  function follow(diagram, finished) {
    if (!root.classList.contains("presenter") || !following || pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const now = diagram.svg.querySelector("line.now");
      if (!now) return;
      const r = (finished ? diagram.svg : now).getBoundingClientRect();
      const y = finished ? r.bottom : r.top;
      if (y > window.innerHeight - 80) window.scrollBy({ top: y - window.innerHeight * 0.6 });
    });
  }

  window.lockvizPresenter = {
    get on() { return root.classList.contains("presenter"); },
    adopt(diagram, fit) {
      adopted.push({ diagram, fit });
      if (root.classList.contains("presenter") && diagram.options.fit !== fit) relayout();
    },
    follow,
  };

  window.lockvizMoments = function (diagram) {
    document.addEventListener("click", (e) => {
      const link = e.target.closest && e.target.closest("a.moment-link[data-seq]");
      if (!link) return;
      const seq = Number(link.dataset.seq);
      const found = diagram.highlight(seq);
      if (!found.length) return; // not drawn here: the link opens the replay at that moment
      e.preventDefault();
      found[0].scrollIntoView({ block: "center", behavior: "smooth" });
    });
  };
})();

// Presenter view: the run, lesson and replay pages for a projector (and for a class following
// on their own screens). The header, the description, the server line and the fault bar fold
// into toggles; the verdict sits above the diagram; the diagram is drawn at 1:1 with labels of
// at least 18 px (app.css: --diagram-scale), its columns sharing the page's width; while a run
// streams, the page follows its latest moment. The choice is kept in this browser
// (localStorage) and toggled by the header button or the "z" key.
//
// startPresenter() wires the page (site.js calls it once); then presenter.on says whether the
// view is on, presenter.adopt(diagram, fitElement) lays a diagram out again when it changes, and
// presenter.follow(diagram, finished) keeps a streaming run's latest moment on screen.

const root = document.documentElement;
const adopted = [];
let following = true;
let relayoutTimer = null;
let started = false;
let pending = false;

function isOn() {
  return root.classList.contains("presenter");
}

function apply(on, quiet) {
  root.classList.toggle("presenter", on);
  const button = document.getElementById("presenter-toggle");
  if (button) button.setAttribute("aria-pressed", String(on));
  // The verdict's slot keeps its height in this view and scrolls a longer verdict (page.css):
  // a keyboard can reach it to scroll.
  document.querySelectorAll(".verdict-slot").forEach((slot) => {
    for (const [name, value] of [
      ["tabindex", "0"],
      ["role", "region"],
      ["aria-label", "Verdict"],
    ]) {
      if (on) slot.setAttribute(name, value);
      else slot.removeAttribute(name);
    }
  });
  try {
    localStorage.setItem("lockviz-presenter", on ? "1" : "");
  } catch {
    /* private mode */
  }
  if (!quiet) relayout();
}

// The diagrams are laid out for the view's scale and width: lay them out again.
function relayout() {
  for (const { diagram, fit } of adopted) {
    diagram.options.fit = isOn() ? fit : null;
    diagram.relayout();
  }
}

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

/** The view as this browser last chose it, and its button, key and folds. */
export function startPresenter() {
  if (started) return;
  started = true;
  let stored = "";
  try {
    stored = localStorage.getItem("lockviz-presenter") || "";
  } catch {
    /* private mode */
  }
  apply(stored === "1", true);
  const button = document.getElementById("presenter-toggle");
  if (button) button.addEventListener("click", () => apply(!isOn()));
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
    if (event.key === "z" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) apply(!isOn());
  });
  window.addEventListener("resize", () => {
    if (!isOn() || !adopted.length) return;
    clearTimeout(relayoutTimer);
    relayoutTimer = setTimeout(relayout, 200);
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wireFolds);
  else wireFolds();
}

// While a run streams in the presenter view, keep its latest moment on screen.
function follow(diagram, finished) {
  if (!isOn() || !following || pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    const now = diagram.svg.querySelector("line.now");
    if (!now) return;
    const r = (finished ? diagram.svg : now).getBoundingClientRect();
    const y = finished ? r.bottom : r.top;
    if (finished) {
      // The diagram's end at the bottom of the screen, so the diagram fills it (its top kept
      // under the verdict when the whole diagram is shorter than the screen).
      const by = Math.max(y - (window.innerHeight - 12), r.top - 140);
      if (Math.abs(by) > 8) window.scrollBy({ top: by });
    } else if (y > window.innerHeight - 80) window.scrollBy({ top: y - window.innerHeight * 0.6 });
  });
}

export const presenter = {
  get on() {
    return isOn();
  },
  /** The diagram is laid out again, sharing `fit`'s width, whenever the view changes. */
  adopt(diagram, fit) {
    adopted.push({ diagram, fit });
    if (isOn() && diagram.options.fit !== fit) relayout();
  },
  follow,
};

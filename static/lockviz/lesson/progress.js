// Course progress, kept in this browser (localStorage "lockviz-lessons": {slug: "started" |
// "done"}) and on the server (lockviz/exercises/progress.py: the learner's, on any device where
// the app knows them, and their class's presenter sees it). A lesson page marks its lesson
// started when its telling begins and done when it reaches the end (mark: here, and posted to
// the page's `progress_url`); the course index shows ✔ done / ◐ started per lesson (this
// browser's, with the server's in the page's data), the count per module, and a done lesson's
// take-away, hidden before: it tells the lesson's outcome (showIndex).

import { csrfToken } from "../page-data.js";

const KEY = "lockviz-lessons";

/** This browser's progress, with `kept` (the server's: {slug: state}) where it says more. */
export function get(kept = {}) {
  let all = {};
  try {
    all = JSON.parse(localStorage.getItem(KEY)) || {};
  } catch {
    all = {};
  }
  for (const [slug, state] of Object.entries(kept || {})) {
    if (all[slug] !== "done") all[slug] = state;
  }
  return all;
}

export function mark(slug, state, url) {
  const all = get();
  if (url) {
    const form = new FormData();
    form.append("state", state);
    fetch(url, { method: "POST", body: form, headers: { "X-CSRFToken": csrfToken() } }).catch(() => {});
  }
  if (all[slug] === "done" && state !== "done") return; // done stays done
  all[slug] = state;
  try {
    localStorage.setItem(KEY, JSON.stringify(all));
  } catch {
    /* private mode */
  }
}

/** The course index (templates/lockviz/lessons.html) as far as this browser has come. */
export function showIndex(kept = {}) {
  const lessons = document.querySelectorAll(".course .lesson[data-slug]");
  if (!lessons.length) return;
  const all = get(kept);
  const modules = new Map();
  lessons.forEach((li) => {
    const state = all[li.dataset.slug];
    li.dataset.progress = state || "new";
    const mark = li.querySelector(".mark");
    if (mark) mark.textContent = state === "done" ? "✔ done" : state === "started" ? "◐ started" : "";
    const takeaway = li.querySelector(".takeaway");
    if (takeaway) takeaway.hidden = state !== "done";
    const module = li.closest("[data-module]").dataset.module;
    const count = modules.get(module) || { done: 0, all: 0 };
    count.all += 1;
    if (state === "done") count.done += 1;
    modules.set(module, count);
  });
  let done = 0;
  for (const [module, count] of modules) {
    done += count.done;
    document.querySelectorAll(`.module-done[data-module="${module}"]`).forEach((el) => {
      el.textContent = count.done ? `${count.done} of ${count.all} done${count.done === count.all ? " ✔" : ""}` : "";
    });
  }
  const total = document.getElementById("progress-all");
  if (total) total.textContent = done ? `You have done ${done} of ${lessons.length} lessons in this browser.` : "";
}

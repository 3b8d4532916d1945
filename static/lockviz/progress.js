// Course progress, kept in this browser (localStorage "lockviz-lessons": {slug: "started" |
// "done"}). A lesson page marks its lesson started when its telling begins and done when it
// reaches the end (mark); the course index shows ✔ done / ◐ started per lesson, the count per
// module, and a done lesson's take-away, hidden before: it tells the lesson's outcome (showIndex).

const KEY = "lockviz-lessons";

export function get() {
  try {
    return JSON.parse(localStorage.getItem(KEY)) || {};
  } catch {
    return {};
  }
}

export function mark(slug, state) {
  const all = get();
  if (all[slug] === "done" && state !== "done") return; // done stays done
  all[slug] = state;
  try {
    localStorage.setItem(KEY, JSON.stringify(all));
  } catch {
    /* private mode */
  }
}

/** The course index (templates/lockviz/lessons.html) as far as this browser has come. */
export function showIndex() {
  const lessons = document.querySelectorAll(".course .lesson[data-slug]");
  if (!lessons.length) return;
  const all = get();
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

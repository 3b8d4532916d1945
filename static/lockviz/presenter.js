// Presenter view: larger type and a full-width diagram for a projector. The choice is kept in
// this browser (localStorage) and toggled by the header button or the "z" key.
(function () {
  "use strict";
  const root = document.documentElement;
  const button = document.getElementById("presenter-toggle");
  function apply(on) {
    root.classList.toggle("presenter", on);
    if (button) button.setAttribute("aria-pressed", String(on));
    try { localStorage.setItem("lockviz-presenter", on ? "1" : ""); } catch (e) { /* private mode */ }
  }
  let stored = "";
  try { stored = localStorage.getItem("lockviz-presenter") || ""; } catch (e) { /* private mode */ }
  apply(stored === "1");
  if (button) button.addEventListener("click", () => apply(!root.classList.contains("presenter")));
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
    if (event.key === "z" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      apply(!root.classList.contains("presenter"));
    }
  });
})();

// Doing things to a live run by clicking: the fault controls of the run page and the free-play
// page (templates/lockviz/_play_controls.html).
//
// Every control is a small htmx form posting to /runs/<id>/do; the answer ("done: …" or the
// problems, each naming its field) is swapped into #fault-result, and its X-Fault header says
// "done" or "refused". On the run page the controls are menus that open from the diagram's
// lifeline headers or the toolbar above it (Escape closes, focus returns where it was); on the
// free-play page they are panels always on show, and a header takes you to its panel.
//
// faultControls(root) -> {show(name), toggle(name, anchor), setLive(on, ended), live}; a page
// without controls (someone watching another's run) uses NO_CONTROLS.

/** Someone watching another's session has no controls, but the same live diagram. */
export const NO_CONTROLS = { show() {}, toggle() {}, setLive() {}, live: false };

export function faultControls(root) {
  const layout = root.dataset.layout;
  const toolbar = root.querySelector(".fault-toolbar");
  let live = false;
  let open = null; // {panel, anchor}

  const panelOf = (name) =>
    root.querySelector(`.fault-panel[data-actor="${CSS.escape(name)}"]`) ||
    document.querySelector(`.fault-panel[data-actor="${CSS.escape(name)}"]`);
  const fields = () =>
    document.querySelectorAll(
      ".fault-panel button, .fault-panel input, .fault-panel select, .fault-toolbar .menu-button",
    );

  if (layout === "menus") {
    // Popovers are placed in page coordinates: out of any positioned or scrolling box.
    root.querySelectorAll(".fault-panel").forEach((panel) => {
      panel.classList.add("fault-menu");
      document.body.appendChild(panel);
    });
    toolbar.addEventListener("click", (e) => {
      const button = e.target.closest(".menu-button");
      if (button) toggle(button.dataset.opens, button);
    });
  }

  function toggle(name, anchor) {
    if (open && open.anchor === anchor) return close(true);
    show(name, anchor);
  }

  function show(name, anchor) {
    const panel = panelOf(name);
    if (!panel || !live) return;
    if (layout !== "menus") {
      // panels: take the learner to the actor's buttons
      panel.scrollIntoView({ block: "nearest", behavior: "smooth" });
      panel.classList.remove("flash");
      void panel.offsetWidth; // restart the animation
      panel.classList.add("flash");
      const first = panel.querySelector("button:not(:disabled)");
      if (first) first.focus({ preventScroll: true });
      return;
    }
    close(false);
    panel.hidden = false;
    place(panel, anchor);
    open = { panel, anchor };
    mark(anchor, true);
    const first = panel.querySelector("button:not(:disabled)");
    if (first) first.focus();
  }

  function place(panel, anchor) {
    const r = anchor.getBoundingClientRect();
    const width = panel.offsetWidth;
    const left = Math.max(8, Math.min(r.left, document.documentElement.clientWidth - width - 8));
    panel.style.left = `${left + window.scrollX}px`;
    panel.style.top = `${r.bottom + window.scrollY + 6}px`;
  }

  function mark(anchor, on) {
    if (!anchor) return;
    if (anchor.hasAttribute("aria-expanded") || anchor.classList.contains("menu-button")) {
      anchor.setAttribute("aria-expanded", on ? "true" : "false");
    }
    anchor.classList.toggle("menu-open", on);
  }

  function close(refocus) {
    if (!open) return;
    const { panel, anchor } = open;
    open = null;
    panel.hidden = true;
    mark(anchor, false);
    if (refocus && anchor && anchor.isConnected) anchor.focus();
  }

  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && open) {
      e.preventDefault();
      close(true);
    }
  });
  document.addEventListener("pointerdown", (e) => {
    if (open && !open.panel.contains(e.target) && !open.anchor.contains(e.target)) close(false);
  });
  window.addEventListener("resize", () => {
    if (open) place(open.panel, open.anchor);
  });

  // A click done closes its menu; a refusal keeps it open, to fix the field it names.
  document.body.addEventListener("htmx:afterRequest", (e) => {
    const form = e.target.closest && e.target.closest(".fault-panel");
    if (!form || !e.detail.xhr) return;
    if (e.detail.xhr.getResponseHeader("X-Fault") === "done" && layout === "menus") close(true);
  });

  // Not live: before the lab has started the run (buttons wait, disabled) or after it ended
  // (the toolbar says so instead, keeping its height so that nothing below moves).
  function say(text) {
    const area = root.querySelector("#fault-result");
    if (!area) return;
    const p = document.createElement("p");
    p.className = "fault-result ended";
    p.textContent = text;
    area.replaceChildren(p);
  }

  function setLive(on, ended) {
    live = on;
    fields().forEach((f) => {
      f.disabled = !on;
    });
    root.classList.toggle("live", on);
    if (on) root.classList.add("was-live"); // its end keeps the space its messages had (play.css)
    if (ended && toolbar && !root.classList.contains("ended")) {
      toolbar.style.minHeight = `${toolbar.offsetHeight}px`;
      root.classList.add("ended");
    }
    const note = root.querySelector(".fault-ended");
    if (note) note.hidden = !ended;
    if (ended && layout === "panels")
      say("The session has ended: its verdict is above. Save it as a scenario, or run it again live.");
    if (!on) close(false);
  }

  setLive(false);
  return {
    show,
    toggle,
    setLive,
    get live() {
      return live;
    },
  };
}

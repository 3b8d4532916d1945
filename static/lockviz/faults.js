// Doing things to a live run by clicking: the fault controls of the run page and the free-play
// page (templates/lockviz/_play_controls.html), the free-play session's live diagram, and the
// free-play setup form.
//
// Every control is a small htmx form posting to /runs/<id>/do; the answer ("done: …" or the
// problems, each naming its field) is swapped into #fault-result, and its X-Fault header says
// "done" or "refused". On the run page the controls are menus that open from the diagram's
// lifeline headers or the toolbar above it (Escape closes, focus returns where it was); on the
// free-play page they are panels always on show, and a header takes you to its panel.
(function () {
  "use strict";

  const ENDED = new Set(["finished", "failed"]);

  // ---- the controls: menus or panels ----------------------------------------------------

  function Controls(root) {
    const layout = root.dataset.layout;
    const toolbar = root.querySelector(".fault-toolbar");
    let live = false;
    let open = null; // {panel, anchor}

    const panelOf = (name) => root.querySelector(`.fault-panel[data-actor="${CSS.escape(name)}"]`)
      || document.querySelector(`.fault-panel[data-actor="${CSS.escape(name)}"]`);
    const fields = () => document.querySelectorAll(
      ".fault-panel button, .fault-panel input, .fault-panel select, .fault-toolbar .menu-button");

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
      if (layout !== "menus") { // panels: take the learner to the actor's buttons
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
      if (e.key === "Escape" && open) { e.preventDefault(); close(true); }
    });
    document.addEventListener("pointerdown", (e) => {
      if (open && !open.panel.contains(e.target) && !open.anchor.contains(e.target)) close(false);
    });
    window.addEventListener("resize", () => { if (open) place(open.panel, open.anchor); });

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
      fields().forEach((f) => { f.disabled = !on; });
      root.classList.toggle("live", on);
      if (ended && toolbar && !root.classList.contains("ended")) {
        toolbar.style.minHeight = `${toolbar.offsetHeight}px`;
        root.classList.add("ended");
      }
      const note = root.querySelector(".fault-ended");
      if (note) note.hidden = !ended;
      if (ended && layout === "panels") say("The session has ended: its verdict is above. Save it as a scenario, or run it again live.");
      if (!on) close(false);
    }

    setLive(false);
    return { show, toggle, setLive, get live() { return live; } };
  }

  // ---- the run page: menus while the run is running ------------------------------------

  function initRunPage(controls) {
    const statusEl = document.getElementById("run-status");
    const run = window.lockvizRun;
    if (!statusEl || !run) return;
    const onHeader = (name, role, element) => controls.toggle(name, element);
    // Live once the lab has started the run (its run_started event), until it ends.
    const started = () => run.diagram.events.some((e) => e.kind === "run_started");
    let was = null;
    const update = () => {
      const status = statusEl.dataset.status;
      const on = status === "running" && started();
      const state = on ? "live" : ENDED.has(status) ? "ended" : "waiting";
      if (state === was) return;
      const headersChange = on || was === "live";
      was = state;
      controls.setLive(on, state === "ended");
      if (headersChange) run.diagram.setHeaderAction(on ? onHeader : null);
    };
    new MutationObserver(update).observe(statusEl, { attributes: true, attributeFilter: ["data-status"] });
    const servers = document.getElementById("servers"); // run.js fills it in on run_started
    if (servers) new MutationObserver(update).observe(servers, { childList: true, characterData: true, subtree: true });
    update();
  }

  // ---- the free-play session: its own live diagram ---------------------------------------

  function initSession(controls, data) {
    const statusEl = document.getElementById("run-status");
    const finishButton = document.getElementById("finish-button");
    const follow = document.getElementById("follow");
    const svg = document.getElementById("diagram");
    // Five Redis nodes and five clients make eleven columns: narrower ones, and below ~70 % of
    // its size the diagram scrolls sideways instead of shrinking out of legibility.
    const columns = data.clients.length + data.nodes.length + 1;
    const presenter = window.lockvizPresenter;
    const diagram = new window.LockDiagram(svg, {
      clients: data.clients, nodes: data.nodes, storage: "storage", backend: data.backend,
      // A session has no schedule: a quiet spell of more than 6 s (left idle) is drawn short.
      durationMs: 6000, pxPerMs: 0.2, narrationWidth: 210, breakMs: 6000,
      columnWidth: columns <= 5 ? 175 : columns <= 8 ? 150 : 130,
      onHeader: controls === NO_CONTROLS ? null : (name) => controls.show(name),
      fit: presenter && presenter.on ? svg.parentElement : null,
    });
    if (presenter) presenter.adopt(diagram, svg.parentElement);
    svg.style.minWidth = `${Math.round(Number(svg.getAttribute("width")) * 0.7)}px`;

    let started = false, current = data.status;
    function setStatus(status, position) {
      current = status;
      statusEl.dataset.status = status;
      statusEl.textContent = status === "queued" && position
        ? `waiting for the lab (place ${position} in the queue)`
        : status === "running" ? (started ? "running: your move" : "starting the servers…") : status;
      const on = status === "running" && started;
      if (status !== "reconnecting") {
        controls.setLive(on, ENDED.has(status));
        if (finishButton) finishButton.disabled = !on;
      }
    }

    function keepNowInView() {
      if (!follow || !follow.checked) return;
      const now = svg.querySelector("line.now");
      if (!now || now.style.display === "none") return;
      const r = now.getBoundingClientRect();
      if (r.bottom > window.innerHeight - 60) window.scrollBy({ top: r.bottom - window.innerHeight + 200 });
    }

    window.lockvizStream(data.ws, 0, {
      onEvent(ev) {
        diagram.add(ev);
        if (ev.kind === "run_started") { started = true; setStatus(current); }
        keepNowInView();
      },
      onStatus(status, position) { if (!ENDED.has(status)) setStatus(status, position); },
      onDone(status) {
        setStatus(status);
        document.body.dispatchEvent(new Event("verdict-ready"));
      },
      onError(message) { console.warn("lockviz:", message); },
    });
    window.lockvizPlay = { diagram };
  }

  // ---- the setup form: Redlock cannot fence ---------------------------------------------

  function initSetup(form) {
    if (form.dataset.wired) return;
    form.dataset.wired = "yes";
    const fencing = form.querySelector("#play-fencing");
    const notes = form.querySelectorAll(".no-fencing-note");
    let wanted = fencing.checked;
    const sync = () => {
      const chosen = form.querySelector("input[name=backend]:checked");
      const name = chosen ? chosen.value : "";
      let forced = false;
      notes.forEach((note) => {
        const on = note.dataset.backend === name;
        note.hidden = !on;
        forced = forced || on;
      });
      if (forced && !fencing.disabled) wanted = fencing.checked;
      fencing.disabled = forced;
      fencing.checked = forced ? false : wanted;
    };
    form.addEventListener("change", (e) => { if (e.target.name === "backend") sync(); });
    sync();
  }

  // Someone watching another's session has no controls, but the same live diagram.
  const NO_CONTROLS = { show() {}, toggle() {}, setLive() {}, live: false };

  function init() {
    const setup = document.getElementById("play-form");
    if (setup) initSetup(setup);
    const root = document.getElementById("fault-controls");
    const controls = root ? Controls(root) : NO_CONTROLS;
    const data = document.getElementById("play-data");
    if (data) initSession(controls, JSON.parse(data.textContent));
    else if (root) initRunPage(controls);
  }

  // The setup form comes back from htmx after a refusal: wire the new one.
  document.addEventListener("htmx:afterSettle", () => {
    const setup = document.getElementById("play-form");
    if (setup) initSetup(setup);
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

// The run page: stream the run's events over the WebSocket into the sequence diagram, through
// runstream.js (reconnects, gaps and resumes: nothing lost, nothing twice). In the presenter
// view the diagram takes the page's width at a size a room can read, and follows the latest
// moment while the run streams (presenter.js).
(function () {
  "use strict";
  const script = document.currentScript;
  const wsPath = script.dataset.ws;
  const scenario = JSON.parse(document.getElementById("scenario-data").textContent);
  const nodes = JSON.parse(document.getElementById("nodes-data").textContent);
  const statusEl = document.getElementById("run-status");
  const serversEl = document.getElementById("servers");
  const svg = document.getElementById("diagram");
  const durationMs = durationOf(scenario);
  const presenter = window.lockvizPresenter;
  const diagram = new window.LockDiagram(svg, {
    clients: scenario.clients,
    nodes, // every lifeline from the start: nothing moves when the servers' first events arrive
    storage: "storage",
    backend: scenario.backend,
    durationMs,
    // Fit the whole run in about one screen, within readable bounds (a long run is taller:
    // a screen of it stays readable, and only what is near the screen is laid out).
    pxPerMs: Math.min(0.4, Math.max(0.12, 820 / durationMs)),
    columnWidth: 160,
    narrationWidth: 205,
    fit: presenter && presenter.on ? svg.parentElement : null,
  });
  const story = document.getElementById("story");
  let lastSeq = 0;
  let finished = false;

  function durationOf(s) {
    const ends = s.steps.map((st) => st.at_ms + (st.do === "pause" ? st.ms || 0 : 0));
    return Math.max(0, ...ends) + 800;
  }

  function setStatus(status, position) {
    statusEl.dataset.status = status;
    statusEl.textContent = status === "queued" && position
      ? `waiting for the lab (place ${position} in the queue)`
      : status === "reconnecting" ? "reconnecting…" : status;
  }

  function onEvent(event) {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    if (event.kind === "run_started" && event.servers) {
      serversEl.textContent = "Servers for this run: " + Object.entries(event.servers)
        .map(([name, addr]) => `${name} ${addr}`).join(" · ");
    }
    diagram.add(event);
    if (event.kind === "step" && story) {
      story.querySelectorAll("li.current").forEach((li) => li.classList.remove("current"));
      const li = story.querySelector(`li[data-step="${event.index}"]`);
      if (li) li.classList.add("reached", "current");
    }
    if (event.kind === "run_finished" || event.kind === "run_failed") {
      finished = true;
      setStatus(event.kind === "run_finished" ? "finished" : "failed");
    }
    if (presenter) presenter.follow(diagram, finished);
  }

  const stream = window.lockvizStream(wsPath, 0, {
    onEvent,
    onStatus(status, position) {
      // The status comes after the verdict is stored: only then is it there to fetch.
      if (["finished", "failed", "interrupted", "cancelled"].includes(status)) {
        document.body.dispatchEvent(new Event("verdict-ready"));
      }
      if (!finished) setStatus(status, position);
    },
    onError(message) { console.warn("lockviz:", message); },
  });

  if (presenter) presenter.adopt(diagram, svg.parentElement);
  window.lockvizMoments(diagram); // the verdict's links to a moment show it in place
  window.lockvizRun = { diagram, stream, get lastSeq() { return lastSeq; } };
})();

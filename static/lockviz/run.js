// The run page: stream the run's events over the WebSocket into the sequence diagram, through
// runstream.js (reconnects, gaps and resumes: nothing lost, nothing twice).
(function () {
  "use strict";
  const script = document.currentScript;
  const wsPath = script.dataset.ws;
  const scenario = JSON.parse(document.getElementById("scenario-data").textContent);
  const statusEl = document.getElementById("run-status");
  const serversEl = document.getElementById("servers");
  const durationMs = durationOf(scenario);
  const diagram = new window.LockDiagram(document.getElementById("diagram"), {
    clients: scenario.clients,
    durationMs,
    // Fit the whole run in about one screen, within readable bounds.
    pxPerMs: Math.min(0.25, Math.max(0.05, 820 / durationMs)),
    columnWidth: 160,
    narrationWidth: 205,
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
    if (event.kind === "step" && event.say && story) {
      story.querySelectorAll("li.current").forEach((li) => li.classList.remove("current"));
      const li = story.querySelector(`li[data-step="${event.index}"]`);
      if (li) li.classList.add("reached", "current");
    }
    if (event.kind === "run_finished" || event.kind === "run_failed") {
      finished = true;
      if (event.kind === "run_finished") diagram.finish(event.verdict);
      setStatus(event.kind === "run_finished" ? "finished" : "failed");
    }
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

  window.lockvizRun = { diagram, stream, get lastSeq() { return lastSeq; } };
})();

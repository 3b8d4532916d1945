// A lesson's walkthrough: wait for the live run to end, then tell it event by event.
//
// The diagram shows the run up to the cursor (LockDiagram.showUpTo) and the story panel beside
// it says what the current step is about. A step with an `ask` is a checkpoint: the cursor stops
// ON that step's own `step` event, before anything it caused is drawn, and asks. Answering jumps
// to the end of the step's outcome (the last event before the next step), so the learner sees
// what the real servers did next to whether they predicted it. Answers are kept per run in
// sessionStorage: going back shows the checkpoint again with the answer given.
//
// Nothing tells the outcome before it has happened: a checkpoint's step is drawn and told by its
// click and its question (data.hidden, from the narrator), and the scenario's description and
// take-away appear only after the last checkpoint is answered (or at the end, without one).
// Progress is kept in this browser (progress.js): started when the telling begins, done at the end.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const data = JSON.parse($("lesson-data").textContent);
  const scenario = data.scenario;
  const steps = scenario.steps;
  const ui = {
    live: $("live"), next: $("next"), back: $("back"), nextSay: $("next-say"), prevSay: $("prev-say"),
    position: $("position"), event: $("event"), stepNo: $("step-no"), say: $("say"),
    checkpoint: $("checkpoint"), question: $("question"), choices: $("choices"), actions: $("checkpoint-actions"),
    skip: $("skip"), pickFirst: $("pick-first"), result: $("result"), mark: $("mark"), explain: $("explain"),
    end: $("end"), after: $("after"),
  };
  const hidden = data.hidden || {};
  const progress = window.lockvizProgress;
  const presenter = window.lockvizPresenter;
  const durationMs = Math.max(...steps.map((s) => s.at_ms + Math.max(s.ms || 0, 0))) + 800;
  const svg = $("diagram");
  const diagram = new window.LockDiagram(svg, {
    clients: scenario.clients, nodes: data.nodes, storage: "storage", backend: scenario.backend, durationMs,
    pxPerMs: Math.min(0.4, Math.max(0.12, 760 / durationMs)), narrationWidth: 210,
    columnWidth: scenario.clients.length + data.nodes.length > 4 ? 130 : 170, // Redlock: 5 nodes
    fit: presenter && presenter.on ? svg.parentElement : null,
  });
  if (presenter) presenter.adopt(diagram, svg.parentElement);
  const FINAL = new Set(["run_finished", "run_failed"]);
  const storeKey = "lockviz-answers-" + data.run;
  const answers = load();
  let events = (data.events || []).slice();
  let status = data.status;
  let telling = false;
  let pos = 0;
  let liveHeight = 0;
  let shownAsk = null; // the step index whose question the form currently holds

  // ---- the live run ----------------------------------------------------------------------

  const started = () => events.find((e) => e.kind === "run_started");
  const failure = () => events.find((e) => e.kind === "run_failed");

  function servers() {
    const ev = started();
    if (!ev || !ev.servers) return "";
    return " on " + Object.entries(ev.servers).map(([name, addr]) => `${name} ${addr}`).join(", ");
  }

  function showLive(position) {
    const n = events.length;
    const when = new Date(data.created).toLocaleTimeString("en-GB");
    let text;
    if (status === "finished") text = `Ran live${servers()} at ${when}.`;
    else if (status === "failed") {
      const ev = failure();
      text = `The live run failed: ${(ev && ev.error) || data.error || "the lab stopped"}.`;
    } else if (status === "interrupted" || status === "cancelled") {
      text = `The live run was ${status}: ${data.error || "it never ended"}. Re-run it live to see the lesson.`;
    } else if (status === "queued") text = `Waiting for the lab${position ? ` (place ${position} in the queue)` : ""}…`;
    else if (status === "reconnecting") text = `Reconnecting to the live run… (${n} events so far)`;
    else text = `Running live${servers()}… (${n} event${n === 1 ? "" : "s"} so far)`;
    ui.live.textContent = text;
    ui.live.dataset.status = status;
    // Never shrink: "Running live on …" and "Ran live on …" wrap differently, and the diagram
    // below must not jump when the run ends.
    liveHeight = Math.max(liveHeight, ui.live.offsetHeight);
    ui.live.style.minHeight = liveHeight + "px";
  }

  function waitForRun() {
    const last = events.length ? events[events.length - 1].seq : 0;
    window.lockvizStream(data.ws, last, {
      onEvent(ev) { events.push(forDiagram(ev)); showLive(); },
      onStatus(s, position) { status = s; showLive(position); },
      onDone(s) {
        status = s;
        showLive();
        document.body.dispatchEvent(new Event("verdict-ready")); // the stored verdict is complete now
        begin();
      },
      onError(message) { ui.live.textContent = `The live run cannot be followed: ${message}.`; },
    });
  }

  // ---- the telling ---------------------------------------------------------------------

  function begin() {
    if (telling || !events.length) return;
    telling = true;
    events.sort((a, b) => a.seq - b.seq);
    diagram.showUpTo(0);
    diagram.addAll(events.map(forDiagram));
    pos = 0;
    if (progress) progress.mark(data.slug, "started");
    render();
  }

  // The last checkpoint's step, as an index into events (-1: the lesson asks nothing).
  function lastAsk() {
    for (let q = events.length - 1; q >= 0; q--) if (askAt(q)) return q;
    return -1;
  }

  // The description and the take-away tell the outcome: shown once it has happened.
  function showAfter(atEnd) {
    if (!ui.after.hidden) return;
    const last = lastAsk();
    const past = last < 0 ? atEnd : !!answers[events[last].index] && pos >= outcomeEnd(last);
    if (past) ui.after.hidden = false;
  }

  // A checkpoint's step as the narrator tells it before it is answered (the page data's events
  // come that way; live ones are made so here).
  function forDiagram(ev) {
    const words = ev.kind === "step" ? hidden[String(ev.index)] : null;
    if (!words) return ev;
    const told = Object.assign({}, ev, { said: words });
    delete told.say;
    return told;
  }

  const askAt = (p) => (events[p] && events[p].kind === "step" && steps[events[p].index]) ? steps[events[p].index].ask || null : null;
  const narrated = (p) => events[p].kind === "step" && !!(steps[events[p].index] && (steps[events[p].index].say || steps[events[p].index].ask));
  const blocked = (p) => !!askAt(p) && !answers[events[p].index];
  const last = () => events.length - 1;

  function stepBefore(p, test) {
    for (let q = p; q >= 0; q--) if (events[q].kind === "step" && (!test || test(q))) return q;
    return -1;
  }

  // The last event a step caused: everything up to the next step (or the end of the run).
  function outcomeEnd(p) {
    let q = p + 1;
    while (q < events.length && events[q].kind !== "step" && !FINAL.has(events[q].kind)) q++;
    return q - 1;
  }

  function go(target) {
    if (!telling) return;
    pos = Math.max(0, Math.min(last(), target));
    render();
  }

  function next(byKey) {
    if (blocked(pos)) return prompt(byKey);
    if (pos < last()) go(pos + 1);
  }

  function back() { if (pos > 0) go(pos - 1); }

  function nextSay(byKey) {
    if (blocked(pos)) return prompt(byKey);
    for (let q = pos + 1; q <= last(); q++) {
      if (narrated(q)) return go(blocked(q) ? q : Math.max(q, outcomeEnd(q)));
    }
    go(last());
  }

  function prevSay() {
    const current = stepBefore(pos, narrated);
    const previous = current > 0 ? stepBefore(current - 1, narrated) : -1;
    go(previous < 0 ? 0 : outcomeEnd(previous));
  }

  function focusChoices() {
    const first = ui.choices.querySelector("input:checked") || ui.choices.querySelector("input");
    if (first) first.focus();
  }

  // A key press only says what to do: moving focus into the radio group would turn the
  // learner's next arrow key into a different choice.
  function prompt(byKey) {
    ui.pickFirst.hidden = false;
    if (byKey !== true) focusChoices();
  }

  function pick(n) {
    const input = ui.choices.querySelectorAll("input")[n];
    if (!input || input.disabled) return;
    input.checked = true;
    input.focus();
    ui.pickFirst.hidden = true;
  }

  function answer(skipped) {
    const ask = askAt(pos);
    if (!ask || answers[events[pos].index]) return;
    const picked = ui.choices.querySelector("input:checked");
    if (!picked && !skipped) return prompt();
    answers[events[pos].index] = skipped ? { skipped: true } : { choice: Number(picked.value) };
    save();
    go(outcomeEnd(pos));
    if (ui.next.disabled) ui.back.focus({ preventScroll: true });
    else ui.next.focus({ preventScroll: true });
    ui.result.scrollIntoView({ block: "nearest" });
  }

  function render() {
    const ev = events[pos];
    diagram.showUpTo(ev.seq);
    const found = diagram.highlight(ev.seq);
    if (found.length) keepInView(found[0]);
    const stepP = stepBefore(pos);
    const stepCount = steps.length;
    ui.position.textContent = `Event ${pos + 1} of ${events.length}` +
      (stepP >= 0 ? ` · step ${events[stepP].index + 1} of ${stepCount}` : "") + ` · t = ${(ev.t_ms / 1000).toFixed(2)} s`;
    ui.event.textContent = describe(ev);
    renderNarration(stepP);
    renderCheckpoint(stepP);
    const atEnd = pos === last() && FINAL.has(ev.kind);
    if (atEnd && ui.end.hidden) requestAnimationFrame(() => ui.end.scrollIntoView({ block: "nearest" }));
    ui.end.hidden = !atEnd;
    showAfter(atEnd);
    if (atEnd && progress) progress.mark(data.slug, "done");
    ui.back.disabled = ui.prevSay.disabled = pos === 0;
    ui.next.disabled = ui.nextSay.disabled = pos === last();
    ui.next.setAttribute("aria-disabled", String(blocked(pos)));
    ui.nextSay.setAttribute("aria-disabled", String(blocked(pos)));
  }

  // The current event on screen: scrolled vertically only (never sideways, where the clients
  // are), clear of the telling's band at the bottom in the presenter view.
  function keepInView(node) {
    const box = node.getBoundingClientRect();
    const band = presenter && presenter.on ? $("telling").getBoundingClientRect().top : window.innerHeight;
    if (box.bottom > band - 20) window.scrollBy(0, box.bottom - band + 80);
    else if (box.top < 20) window.scrollBy(0, box.top - 80);
  }

  function renderNarration(stepP) {
    if (stepP < 0) {
      ui.stepNo.textContent = "Before the first step";
      ui.say.textContent = "The lab has started the servers and one process per client. Press Next ▶ (→) to go event by event, or Next narration (n) to jump from one narrated step to the next.";
      return;
    }
    const ev = events[stepP];
    const step = steps[ev.index] || {};
    ui.stepNo.textContent = `Step ${ev.index + 1} of ${steps.length} · ${(step.at_ms / 1000).toFixed(1)} s · ${ev.client || ev.node || ""} ${ev.do}`;
    if (step.ask && !answers[ev.index]) ui.say.textContent = "What will the servers do? Predict it below, then see.";
    else ui.say.textContent = step.say || "(This step has no narration: watch the diagram.)";
    ui.say.classList.toggle("quiet", !step.say || Boolean(step.ask && !answers[ev.index]));
  }

  function renderCheckpoint(stepP) {
    const ask = stepP >= 0 ? askAt(stepP) : null;
    ui.checkpoint.hidden = !ask;
    ui.pickFirst.hidden = true;
    if (!ask) { shownAsk = null; return; }
    const index = events[stepP].index;
    const given = answers[index];
    if (shownAsk !== index) {
      shownAsk = index;
      ui.question.textContent = ask.question;
      ui.choices.textContent = "";
      ask.choices.forEach((text, i) => {
        const label = document.createElement("label");
        label.className = "choice";
        const input = document.createElement("input");
        Object.assign(input, { type: "radio", name: `ask-${index}`, value: String(i) });
        const span = document.createElement("span");
        span.className = "text";
        span.textContent = text;
        label.append(input, span);
        ui.choices.appendChild(label);
      });
    }
    const inputs = Array.from(ui.choices.querySelectorAll("input"));
    inputs.forEach((input) => {
      const i = Number(input.value);
      input.disabled = !!given;
      if (given && !given.skipped) input.checked = i === given.choice;
      input.parentElement.classList.toggle("correct", !!given && ask.choices[i] === ask.answer);
      input.parentElement.classList.toggle("picked", !!given && given.choice === i);
    });
    ui.actions.hidden = !!given;
    ui.result.hidden = !given;
    if (!given) return;
    const right = !given.skipped && ask.choices[given.choice] === ask.answer;
    ui.result.dataset.outcome = given.skipped ? "skipped" : right ? "right" : "wrong";
    ui.mark.textContent = given.skipped ? `➜ What the real servers did: ${ask.answer}`
      : right ? `✔ Right: ${ask.answer}`
      : `✖ Not quite. What the real servers did: ${ask.answer}`;
    ui.explain.textContent = ask.explain || "";
  }

  // One line for the current event, in the narrator's words (the tooltip has every field).
  function describe(ev) {
    return `#${ev.seq} · ${(ev.said && ev.said.text) || `${ev.actor} ${ev.kind}`}`;
  }

  function load() {
    try { return JSON.parse(sessionStorage.getItem(storeKey)) || {}; } catch (e) { return {}; }
  }
  function save() {
    try { sessionStorage.setItem(storeKey, JSON.stringify(answers)); } catch (e) { /* private mode */ }
  }

  // ---- wiring ----------------------------------------------------------------------------

  ui.next.addEventListener("click", next);
  ui.back.addEventListener("click", back);
  ui.nextSay.addEventListener("click", nextSay);
  ui.prevSay.addEventListener("click", prevSay);
  ui.checkpoint.addEventListener("submit", (e) => { e.preventDefault(); answer(false); });
  ui.skip.addEventListener("click", () => answer(true));
  // The verdict's link to a moment (a stale write landing) goes to that event of the telling.
  document.addEventListener("click", (e) => {
    const link = e.target.closest && e.target.closest("a.moment-link[data-seq]");
    if (!link || !telling) return;
    const at = events.findIndex((ev) => ev.seq === Number(link.dataset.seq));
    if (at < 0) return;
    e.preventDefault();
    go(at);
  });
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || !telling) return;
    const t = e.target;
    const radio = t instanceof HTMLInputElement && t.type === "radio";
    if (!radio && t.closest && t.closest("input, textarea, select, [contenteditable]")) return;
    if (e.key === "Enter") {
      if (blocked(pos) && t !== ui.skip) { e.preventDefault(); answer(false); }
      return;
    }
    if (radio && e.key.startsWith("Arrow")) return; // the radio group's own keys
    if (/^[1-9]$/.test(e.key) && blocked(pos)) { e.preventDefault(); pick(Number(e.key) - 1); return; }
    const action = { ArrowRight: next, ArrowLeft: back, n: nextSay, p: prevSay }[e.key];
    if (action) { e.preventDefault(); action(true); }
  });

  [ui.next, ui.back, ui.nextSay, ui.prevSay].forEach((b) => { b.disabled = true; });
  showLive();
  if (["finished", "failed", "interrupted", "cancelled"].includes(status)) begin();
  else waitForRun();
  window.lockvizWalkthrough = { diagram, get pos() { return pos; }, get events() { return events; } };
})();

// The replay page: time travel through a stored run, without any backend.
//
// All events are in the page (json_script "replay-data"), each with its words (``said``, made
// by the server's narrator). The diagram draws them all once; the cursor is an index into them,
// and the diagram shows the run as it was after that event (showUpTo, which costs the same at
// any cursor, so stepping and scrubbing stay smooth at 20,000 events) and marks it (highlight).
// Playing moves a clock in proportion to the run's own time, scaled by the speed; the cursor
// follows the clock. The story's items are the script's steps, numbered as everywhere.
// The URL fragment #seq=N names the cursor, so a link opens the replay at that moment.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const events = data.events;
  const scenario = data.scenario || {};
  const N = events.length;
  const $ = (id) => document.getElementById(id);
  const ui = {
    play: $("rp-play"), speed: $("rp-speed"), time: $("rp-time"), clock: $("rp-clock"),
    seq: $("rp-seq"), when: $("rp-when"), actor: $("rp-actor"), kind: $("rp-kind"), desc: $("rp-desc"), storyLine: $("rp-story"),
    message: $("rp-message"), messageText: $("rp-message-text"), copied: $("rp-copied"), whatIf: $("rp-whatif"),
    verdict: $("rp-verdict"), verdictWait: $("rp-verdict-wait"), story: $("story"), bar: document.querySelector(".replay-bar"),
  };
  const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];
  const secs = (ms) => (ms / 1000).toFixed(2) + " s";
  const num = (v) => (Number.isFinite(v) ? v : 0);

  // t_ms is stamped where each event happened, so seq order and time order can differ by a
  // fraction of a millisecond; the replay clock uses the latest time reached so far.
  const reach = [];
  events.reduce((m, e) => { const t = Math.max(m, num(e.t_ms)); reach.push(t); return t; }, 0);
  const endT = N ? reach[N - 1] : 0;
  const narrations = events.map((e, i) => (e.kind === "step" ? i : -1)).filter((i) => i >= 0);
  const indexOf = new Map(events.map((e, i) => [String(e.seq), i]));
  const finishAt = events.findIndex((e) => e.kind === "run_finished" || e.kind === "run_failed");
  const durationMs = Math.max(scheduleMs(scenario) + 800, endT + 300);

  const presenter = window.lockvizPresenter;
  const svg = $("diagram");
  const diagram = new window.LockDiagram(svg, {
    clients: Array.isArray(scenario.clients) ? scenario.clients : undefined,
    nodes: Array.isArray(data.nodes) && data.nodes.length ? data.nodes : undefined,
    storage: "storage",
    backend: scenario.backend,
    durationMs,
    pxPerMs: Math.min(0.4, Math.max(0.12, 820 / durationMs)), // as on the run page
    columnWidth: 175,
    narrationWidth: 250,
    fit: presenter && presenter.on ? svg.parentElement : null,
  });
  diagram.addAll(events);
  if (presenter) presenter.adopt(diagram, svg.parentElement);

  let index = -1; // the cursor: events[0..index] have happened
  let clock = 0; // ms of run time the playback has reached
  let playing = false;
  let lastFrame = null;

  function scheduleMs(s) {
    const steps = Array.isArray(s.steps) ? s.steps : [];
    return steps.reduce((m, st) => Math.max(m, num(st.at_ms) + Math.max(num(st.ms), 0)), 0);
  }

  // ---- moving the cursor ---------------------------------------------------------------

  function go(i, options) {
    if (!N) return;
    const opts = options || {};
    i = Math.max(0, Math.min(N - 1, i));
    if (!opts.keepClock) clock = reach[i];
    if (i !== index || opts.force) {
      index = i;
      const ev = events[i];
      noFollow = !!opts.noScroll;
      show(i);
      const marked = diagram.highlight(ev.seq);
      describe(ev);
      if (ui.whatIf) ui.whatIf.href = `${ui.whatIf.dataset.base}?at=${ev.seq}`; // fork from here
      markStory();
      showVerdict(finishAt >= 0 && i >= finishAt);
      if (!opts.noScroll && !scrolled) reveal(marked);
      if (!opts.noHash) writeHash(true);
    }
    showClock();
  }

  // The moment shown, and the page scrolled so that the cursor is on screen below the controls:
  // the scroll is worked out first, from positions read before anything changed, so that a long
  // run lays out only the part that will be on screen (LockDiagram.showUpTo's second argument).
  let scrolled = false;
  function show(i) {
    const y = diagram.yOf(events[i].seq);
    let by = 0;
    if (y != null && !noFollow) {
      const r = svg.getBoundingClientRect();
      const at = r.top + y * (r.height / diagram.height || 1);
      const above = presenter && presenter.on ? ui.verdict.closest(".verdict-slot") : ui.bar;
      const top = above.getBoundingClientRect().bottom + 16;
      if (at > window.innerHeight - 40) by = at - window.innerHeight + 160;
      else if (at < top) by = at - top - 80;
    }
    diagram.showUpTo(events[i].seq, by);
    if (by) window.scrollBy(0, by);
    scrolled = by !== 0;
  }
  let noFollow = false;

  function describe(ev) {
    const text = ev.said && ev.said.text;
    ui.seq.textContent = `#${ev.seq}`;
    ui.when.textContent = `at ${secs(num(ev.t_ms))} (event ${index + 1} of ${N})`;
    ui.actor.textContent = String(ev.actor);
    ui.kind.textContent = String(ev.kind);
    ui.desc.textContent = text || String(ev.kind);
    const told = narrations.filter((i) => i <= index).pop(); // the step this event belongs to
    ui.storyLine.textContent = told == null ? "—" : (events[told].said && events[told].said.text) || "";
  }

  function showClock() {
    ui.time.value = String(clock);
    ui.clock.textContent = `${secs(clock)} / ${secs(endT)}`;
    ui.time.setAttribute("aria-valuetext", `${secs(clock)} of ${secs(endT)}, event ${index + 1} of ${N}`);
  }

  function markStory() {
    if (!ui.story) return;
    const current = narrations.filter((i) => i <= index).pop();
    ui.story.querySelectorAll("li").forEach((li) => {
      const i = li.dataset.seq ? indexOf.get(li.dataset.seq) : undefined;
      li.classList.toggle("reached", i != null && i <= index);
      li.classList.toggle("current", i != null && i === current);
    });
  }

  function showVerdict(reached) {
    ui.verdict.setAttribute("aria-hidden", reached ? "false" : "true");
    ui.verdict.classList.toggle("shown", reached);
    ui.verdictWait.classList.toggle("shown", !reached);
  }

  // Keep the current event in view below the sticky controls, scrolling only when it is not.
  function reveal(marked) {
    const target = marked && marked[0];
    if (!target) return;
    const box = target.getBoundingClientRect();
    const above = presenter && presenter.on ? ui.verdict.closest(".verdict-slot") : ui.bar;
    const top = above.getBoundingClientRect().bottom + 16;
    if (box.bottom > window.innerHeight - 16) window.scrollBy(0, box.bottom - window.innerHeight + 120);
    else if (box.top < top) window.scrollBy(0, box.top - top - 60);
  }

  // The address follows the cursor a moment after it stops: replaceState costs several ms on a
  // long run's page (and browsers rate-limit it), too much to pay on every step of a scrub.
  let hashTimer = null;
  function writeHash(later) {
    clearTimeout(hashTimer);
    const write = () => { if (index >= 0) history.replaceState(null, "", `#seq=${events[index].seq}`); };
    if (later) hashTimer = setTimeout(write, 300);
    else write();
  }

  // ---- playing -------------------------------------------------------------------------

  function play() {
    if (!N) return;
    if (index >= N - 1) go(0);
    playing = true;
    lastFrame = null;
    ui.play.innerHTML = "";
    ui.play.append(icon("❚❚"), " pause");
    requestAnimationFrame(frame);
  }

  function pause() {
    const was = playing;
    playing = false;
    ui.play.innerHTML = "";
    ui.play.append(icon("▶"), " play");
    if (was && index >= 0) writeHash(false);
  }

  function icon(text) {
    const span = document.createElement("span");
    span.setAttribute("aria-hidden", "true");
    span.textContent = text;
    return span;
  }

  function frame(now) {
    if (!playing) return;
    const dt = lastFrame == null ? 0 : Math.min(now - lastFrame, 250); // a hidden tab does not leap
    lastFrame = now;
    clock = Math.min(endT, clock + dt * speed());
    let j = index;
    while (j + 1 < N && reach[j + 1] <= clock) j++;
    go(j, { keepClock: true });
    if (j >= N - 1) { pause(); return; }
    requestAnimationFrame(frame);
  }

  function speed() { return Number(ui.speed.value) || 1; }

  function nudgeSpeed(delta) {
    const at = SPEEDS.indexOf(speed());
    const next = SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, (at < 0 ? 2 : at) + delta))];
    ui.speed.value = String(next);
  }

  // ---- the controls --------------------------------------------------------------------

  function step(delta) { pause(); go(index + delta); }
  function narration(dir) {
    pause();
    const found = dir < 0 ? narrations.filter((i) => i < index).pop() : narrations.find((i) => i > index);
    if (found != null) go(found);
    else if (dir < 0) go(0);
  }

  function scrub() {
    clock = Math.max(0, Math.min(endT, Number(ui.time.value) || 0));
    let lo = 0, hi = N - 1; // the last event the clock has reached
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (reach[mid] <= clock) lo = mid; else hi = mid - 1; }
    go(lo, { keepClock: true });
  }

  function jumpTo(seq) {
    const i = indexOf.get(String(seq));
    if (i != null) { pause(); go(i); }
  }

  $("rp-start").addEventListener("click", () => { pause(); go(0); });
  $("rp-end").addEventListener("click", () => { pause(); go(N - 1); });
  $("rp-back").addEventListener("click", () => step(-1));
  $("rp-fwd").addEventListener("click", () => step(1));
  $("rp-prev-say").addEventListener("click", () => narration(-1));
  $("rp-next-say").addEventListener("click", () => narration(1));
  ui.play.addEventListener("click", () => (playing ? pause() : play()));
  ui.time.addEventListener("input", scrub);
  $("rp-copy").addEventListener("click", copyLink);
  $("rp-message-close").addEventListener("click", () => { ui.message.hidden = true; });
  if (ui.story) {
    ui.story.addEventListener("click", (e) => {
      const button = e.target.closest("button[data-seq]");
      if (button) jumpTo(Number(button.dataset.seq));
    });
  }

  const TYPING = new Set(["TEXTAREA", "SELECT"]);
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    const typing = TYPING.has(t.tagName) || (t.tagName === "INPUT" && t.type !== "range");
    if (typing) return;
    const onRange = t === ui.time; // the slider moves itself with arrows, Home and End
    const keys = {
      " ": () => (playing ? pause() : play()),
      ArrowLeft: () => (e.shiftKey ? narration(-1) : step(-1)),
      ArrowRight: () => (e.shiftKey ? narration(1) : step(1)),
      Home: () => { pause(); go(0); },
      End: () => { pause(); go(N - 1); },
      "[": () => nudgeSpeed(-1),
      "]": () => nudgeSpeed(1),
    };
    const action = keys[e.key];
    if (!action || (onRange && e.key !== " " && e.key !== "[" && e.key !== "]" && !e.shiftKey)) return;
    e.preventDefault(); // Space on a focused button would also click it
    action();
  });
  document.addEventListener("keyup", (e) => { if (e.key === " " && e.target.tagName === "BUTTON") e.preventDefault(); });

  function copyLink() {
    if (index >= 0) writeHash(false);
    const url = location.href;
    const done = (ok) => {
      ui.copied.textContent = ok ? "Link copied." : `Copy this link: ${url}`;
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(url).then(() => done(true), () => done(false));
    } else done(false);
  }

  // ---- deep links ----------------------------------------------------------------------

  // null for no fragment, else {index} or {error}: a bad link opens the start and says why.
  function fromHash() {
    const raw = location.hash.slice(1);
    if (!raw) return null;
    let shown = raw;
    try { shown = decodeURIComponent(raw); } catch (err) { /* keep it as typed */ }
    if (shown.length > 40) shown = shown.slice(0, 39) + "…";
    const m = /^seq=(\d{1,9})$/.exec(raw);
    if (!m) return { error: `The link ends in “#${shown}”, which is not a moment of this replay (links end in #seq= and an event number, like #seq=${N ? events[Math.min(N - 1, 16)].seq : 1}). Showing the start.` };
    const i = indexOf.get(String(Number(m[1])));
    if (i == null) {
      const range = N ? `#${events[0].seq} to #${events[N - 1].seq}` : "none";
      return { error: `This run has no event #${m[1]} (its events are ${range}). Showing the start.` };
    }
    return { index: i };
  }

  function openHash() {
    const found = fromHash();
    pause();
    if (found && found.error) {
      ui.messageText.textContent = found.error;
      ui.message.hidden = false;
      go(0, { force: true, noScroll: true });
      return;
    }
    ui.message.hidden = true;
    go(found ? found.index : 0, { force: true, noScroll: !found, noHash: !found });
  }

  // The sticky verdict sits under the sticky controls: it needs their height.
  function barHeight() { document.querySelector(".replay-layout").style.setProperty("--bar-h", `${ui.bar.offsetHeight}px`); }
  window.addEventListener("resize", barHeight);
  barHeight();

  ui.time.max = String(Math.max(endT, 1));
  window.addEventListener("hashchange", openHash);
  window.lockvizReplay = { diagram, get index() { return index; }, get seq() { return index >= 0 ? events[index].seq : null; },
    get playing() { return playing; }, get clock() { return clock; }, go, play, pause };
  if (!N) {
    ui.desc.textContent = "This run has no events yet.";
    showVerdict(false);
  } else openHash();
})();

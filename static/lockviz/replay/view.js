// The replay: time travel through a stored run, without any backend. The replay page
// (pages/replay.js), the embed (pages/embed.js) and the one-file download (pages/offline.js)
// each find the run's events their own way and hand them here, with the page's data.
//
// All events are there before anything is drawn, each with its words (``said``, made by the
// server's narrator). The diagram draws them all once; the cursor is an index into them,
// and the diagram shows the run as it was after that event (showUpTo, which costs the same at
// any cursor, so stepping and scrubbing stay smooth at 20,000 events) and marks it (highlight).
// Playing moves a clock in proportion to the run's own time, scaled by the speed; the cursor
// follows the clock. The story's items are the script's steps, numbered as everywhere.
// The URL fragment #seq=N names the cursor, so a link opens the replay at that moment.
// replay/timeline.js knows the run's time line; this module moves the cursor and shows it.
//
// Over ~300 lines: the cursor and all that shows it (the diagram, the story, the steps, the
// scrubber, the verdict, the link) move together; what stands alone is beside it in replay/
// (the time line, the player, the keys).

import { elements } from "../dom.js";
import { LockDiagram } from "../diagram/diagram.js";
import { drawingOf } from "../run/drawing.js";
import { presenter } from "../room/presenter.js";
import { replayKeys } from "./keys.js";
import { Player } from "./player.js";
import { Timeline } from "./timeline.js";

/** Wire the page's replay (templates/lockviz/_replay.html) to `events`; `data` is the page's
 * data (scenario, nodes). Returns {diagram, index, seq, playing, clock, go, play, pause}
 * (the entry modules export it; the browser tests read it). */
export function startReplay(events, data) {
  const scenario = data.scenario || {};
  const line = new Timeline(events, scenario);
  const { n: N, reach, endT, indexOf, finishAt, durationMs } = line;
  const $ = (id) => document.getElementById(id);
  const ui = {
    ...elements({
      play: "rp-play",
      speed: "rp-speed",
      time: "rp-time",
      clock: "rp-clock",
      seq: "rp-seq",
      when: "rp-when",
      actor: "rp-actor",
      kind: "rp-kind",
      desc: "rp-desc",
      storyLine: "rp-story",
      message: "rp-message",
      messageText: "rp-message-text",
      copied: "rp-copied",
      whatIf: "rp-whatif",
      verdict: "rp-verdict",
      verdictWait: "rp-verdict-wait",
      story: "story",
    }),
    bar: document.querySelector(".replay-bar"),
  };
  const secs = (ms) => (ms / 1000).toFixed(2) + " s";
  const num = (v) => (Number.isFinite(v) ? v : 0);

  const svg = $("diagram");
  const diagram = new LockDiagram(svg, {
    ...drawingOf("replay", { scenario, nodes: data.nodes, durationMs }),
    fit: presenter.on ? svg.parentElement : null,
  });
  diagram.addAll(events);
  presenter.adopt(diagram, svg.parentElement);

  let index = -1; // the cursor: events[0..index] have happened
  let clock = 0; // ms of run time the playback has reached
  // ?to=<seq>: playing stops at that moment (a lecture plan's replay item), then goes on.
  const toSeq = Number(new URLSearchParams(location.search).get("to"));
  const stopAt = toSeq > 0 ? (indexOf.get(String(toSeq)) ?? null) : null;
  const player = new Player(ui.play, ui.speed, line, {
    get index() {
      return index;
    },
    get clock() {
      return clock;
    },
    set clock(value) {
      clock = value;
    },
    go,
    paused: () => index >= 0 && writeHash(false),
    stop: stopAt,
  });
  const pause = () => player.pause();

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
      const above = presenter.on ? ui.verdict.closest(".verdict-slot") : ui.bar;
      const top = above.getBoundingClientRect().bottom + 16;
      if (at > window.innerHeight - 40) by = at - window.innerHeight + 160;
      else if (at < top) by = at - top - (presenter.on ? 24 : 80); // a projector keeps its rows for the diagram
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
    const told = line.toldAt(index); // the step this event belongs to
    ui.storyLine.textContent = told == null ? "—" : (events[told].said && events[told].said.text) || "";
  }

  function showClock() {
    ui.time.value = String(clock);
    ui.clock.textContent = `${secs(clock)} / ${secs(endT)}`;
    ui.time.setAttribute("aria-valuetext", `${secs(clock)} of ${secs(endT)}, event ${index + 1} of ${N}`);
  }

  function markStory() {
    if (!ui.story) return;
    const current = line.toldAt(index);
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
    const above = presenter.on ? ui.verdict.closest(".verdict-slot") : ui.bar;
    const top = above.getBoundingClientRect().bottom + 16;
    if (box.bottom > window.innerHeight - 16) window.scrollBy(0, box.bottom - window.innerHeight + 120);
    else if (box.top < top) window.scrollBy(0, box.top - top - (presenter.on ? 12 : 60));
  }

  // The address follows the cursor a moment after it stops: replaceState costs several ms on a
  // long run's page (and browsers rate-limit it), too much to pay on every step of a scrub.
  let hashTimer = null;
  function writeHash(later) {
    clearTimeout(hashTimer);
    const write = () => {
      if (index >= 0) history.replaceState(null, "", `#seq=${events[index].seq}`);
    };
    if (later) hashTimer = setTimeout(write, 300);
    else write();
  }

  // ---- the controls --------------------------------------------------------------------

  function step(delta) {
    pause();
    go(index + delta);
  }
  function narration(dir) {
    pause();
    const found = line.narration(index, dir);
    if (found != null) go(found);
    else if (dir < 0) go(0);
  }

  function scrub() {
    clock = Math.max(0, Math.min(endT, Number(ui.time.value) || 0));
    go(line.atClock(clock), { keepClock: true });
  }

  function jumpTo(seq) {
    const i = indexOf.get(String(seq));
    if (i != null) {
      pause();
      go(i);
    }
  }

  function toStart() {
    pause();
    go(0);
  }
  function toEnd() {
    pause();
    go(N - 1);
  }

  $("rp-start").addEventListener("click", toStart);
  $("rp-end").addEventListener("click", toEnd);
  $("rp-back").addEventListener("click", () => step(-1));
  $("rp-fwd").addEventListener("click", () => step(1));
  $("rp-prev-say").addEventListener("click", () => narration(-1));
  $("rp-next-say").addEventListener("click", () => narration(1));
  ui.play.addEventListener("click", () => player.toggle());
  ui.time.addEventListener("input", scrub);
  $("rp-copy").addEventListener("click", copyLink);
  $("rp-message-close").addEventListener("click", () => {
    ui.message.hidden = true;
  });
  if (ui.story) {
    ui.story.addEventListener("click", (e) => {
      const button = e.target.closest("button[data-seq]");
      if (button) jumpTo(Number(button.dataset.seq));
    });
  }
  // The verdict's damage links name a moment of this run: go there here (in an embed or a
  // downloaded file, following the link would leave the replay).
  ui.verdict.addEventListener("click", (e) => {
    const link = e.target.closest("a.moment-link[data-seq]");
    if (!link) return;
    e.preventDefault();
    jumpTo(Number(link.dataset.seq));
    writeHash(false);
  });

  replayKeys(ui.time, {
    toggle: () => player.toggle(),
    step,
    narration,
    start: toStart,
    end: toEnd,
    speed: (delta) => player.nudge(delta),
  });

  function copyLink() {
    if (index >= 0) writeHash(false);
    const url = location.href;
    const done = (ok) => {
      ui.copied.textContent = ok ? "Link copied." : `Copy this link: ${url}`;
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(url).then(
        () => done(true),
        () => done(false),
      );
    } else done(false);
  }

  // ---- deep links ----------------------------------------------------------------------

  function openHash() {
    const found = line.fromHash(location.hash.slice(1));
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
  function barHeight() {
    document.querySelector(".replay-layout").style.setProperty("--bar-h", `${ui.bar.offsetHeight}px`);
  }
  window.addEventListener("resize", barHeight);
  barHeight();

  ui.time.max = String(Math.max(endT, 1));
  window.addEventListener("hashchange", openHash);
  if (!N) {
    ui.desc.textContent = "This run has no events yet.";
    showVerdict(false);
  } else openHash();

  return {
    diagram,
    get index() {
      return index;
    },
    get seq() {
      return index >= 0 ? events[index].seq : null;
    },
    get playing() {
      return player.playing;
    },
    get clock() {
      return clock;
    },
    go,
    play: () => player.play(),
    pause,
  };
}

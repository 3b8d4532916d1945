// How each kind of page draws a run: the diagram's sizes, in one place. A class's page
// (room/followed.js) draws the run the presenter shows with the options the presenter's page
// uses, so the same events give the same bars, bands and marks at the same moment (a fold, a
// break in a quiet stretch, a label's short form all follow from these numbers).
//
// drawingOf(kind, run) → LockDiagram's options; `kind` is the page's ("run", "lesson",
// "replay", "play", "lane"), `run` {scenario, nodes, durationMs}: durationMs is a
// replay's (its events' end: replay/timeline.js) or a compare lane's (the longest lane's
// schedule); the other pages take it from the scenario. Durations and scales: run/extent.js.

import { durationOf, scaleFor } from "./extent.js";

const KINDS = {
  // the run page (pages/run.js): a run as it streams, drawn for its schedule
  run: (s, nodes) => {
    const durationMs = durationOf(s);
    return { nodes, durationMs, pxPerMs: scaleFor(820, durationMs), columnWidth: 160, narrationWidth: 205 };
  },
  // a lesson (pages/lesson.js): its schedule as the run page's, a little shorter on screen,
  // Redlock's five nodes narrower
  lesson: (s, nodes) => {
    const durationMs = durationOf(s);
    const many = (s.clients || []).length + nodes.length > 4;
    return {
      nodes,
      durationMs,
      pxPerMs: scaleFor(760, durationMs),
      columnWidth: many ? 130 : 170,
      narrationWidth: 210,
    };
  },
  // a replay (replay/view.js): the events' own end
  replay: (s, nodes, durationMs) => ({
    nodes: nodes.length ? nodes : undefined,
    durationMs,
    pxPerMs: scaleFor(820, durationMs),
    columnWidth: 175,
    narrationWidth: 250,
  }),
  // free play (pages/play.js): a session has no schedule: a quiet spell of more than 6 s (left
  // idle) is drawn short, and its end is the diagram's end. Five Redis nodes and five clients
  // make eleven columns: narrower ones.
  play: (s, nodes) => {
    const columns = (s.clients || []).length + nodes.length + 1;
    return {
      nodes,
      durationMs: 6000,
      fitToEnd: true,
      pxPerMs: 0.2,
      narrationWidth: 210,
      breakMs: 6000,
      columnWidth: columns <= 5 ? 175 : columns <= 8 ? 150 : 130,
    };
  },
  // an exercise's attempt (pages/exercise.js): its schedule, beside the exercise's own form
  exercise: (s, nodes) => {
    const durationMs = durationOf(s);
    return { nodes, durationMs, pxPerMs: scaleFor(700, durationMs, 0.1, 0.3), columnWidth: 150, narrationWidth: 190 };
  },
  // a lane of the compare page (pages/compare.js): every lane on the longest lane's time axis
  lane: (s, nodes, durationMs) => ({
    nodes: nodes.length ? nodes : undefined,
    durationMs,
    pxPerMs: scaleFor(700, durationMs, 0.05, 0.2),
    columnWidth: 120,
    narrationWidth: 140,
  }),
};

/** An event as page `kind` draws it: a lesson draws a checkpoint's step by its click and its
 * question, never its narration, answered or not (pages/lesson.js); `hidden`: the narrator's
 * words for each checkpoint's step, by its index (lockviz.teaching.following.checkpoints). */
export function drawnEvent(kind, ev, hidden) {
  const words = kind === "lesson" && ev.kind === "step" && hidden ? hidden[String(ev.index)] : null;
  if (!words) return ev;
  const told = Object.assign({}, ev, { said: words });
  delete told.say;
  return told;
}

export function drawingOf(kind, { scenario, nodes, durationMs } = {}) {
  const s = scenario || {};
  const sized = (KINDS[kind] || KINDS.run)(s, Array.isArray(nodes) ? nodes : [], durationMs || 4000);
  const clients = Array.isArray(s.clients) && s.clients.length ? s.clients : undefined;
  return { clients, storage: "storage", backend: s.backend, ...sized };
}

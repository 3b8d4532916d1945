// The diagram a student's page draws for a run it follows: the one the presenter shows
// (pages/follow.js) and a fork's original beside it (room/beside.js), drawn as the presenter's page
// draws it (run/drawing.js), from the run's follow.json.

import { LockDiagram } from "../diagram/diagram.js";
import { drawingOf } from "../run/drawing.js";
import { Timeline } from "../replay/timeline.js";

// What a student's page knows of run `id`: {scenario, ws, drawn, …} (lockviz.teaching.following).
export function followed(id) {
  return fetch(`/runs/${id}/follow.json`).then((r) => r.json());
}

/** Which page the presenter draws the run on, by the room's state: a lesson, a replay, a fork
 * beside its original (the compare page's lanes), a free-play session or a run page. */
export function drawnOn(state, meta) {
  if (state.view === "lesson" || state.view === "replay") return state.view;
  if (state.beside) return "lane";
  return meta.drawn && meta.drawn.open_ended ? "play" : "run";
}

/** A diagram in `svg` for a followed run (`meta`, its follow.json) drawn as on page `kind`;
 * `forked`: the fork's drawn.fork when the run is a fork's original beside it. `options`
 * adds to the sizes (fit). */
export function followDiagram(svg, meta, kind, options = {}, forked = null) {
  const drawn = meta.drawn || {};
  const fork = forked || drawn.fork;
  const lane = kind === "lane" && fork; // the compare page's lanes: one axis, the parting marked
  let durationMs;
  if (kind === "replay") durationMs = new Timeline([{ t_ms: drawn.end_ms || 0 }], meta.scenario).durationMs;
  if (lane) durationMs = fork.duration_ms;
  const diagram = new LockDiagram(svg, {
    ...drawingOf(kind, { scenario: meta.scenario, nodes: drawn.nodes, durationMs }),
    ...options,
  });
  for (const mark of lane ? fork.marks : []) diagram.markTime(mark.t_ms, mark.label); // where a fork parts
  return diagram;
}

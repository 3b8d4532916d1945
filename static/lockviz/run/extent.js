// A run's extent: the one owner of three facts every page that draws a run reads.
//   - A run's end: the kinds of its last event (it played to its end: FINAL_KINDS, isFinal).
//   - How long its diagram is drawn: the schedule's length, where only a pause takes time (a
//     clock jump's or a delay's ms are sizes, not durations, as the server's
//     lockviz.scenarios.schema.Scenario.duration_ms says), plus TAIL_MS for what the last step
//     sets off; a replay also reaches its events' real end (replayDurationMs), side-by-side
//     runs share the longest one's (lanesDurationMs), a slide its events' (eventsDurationMs).
//   - Its scale: pixels per millisecond, to fit a run in about `px` within readable bounds.
// tests/js/run/extent.test.mjs fails if another module defines any of them again.

const num = (v) => (Number.isFinite(v) ? v : 0);

/** The kinds of a run's last event: the run played to its end (finished, or failed). */
export const FINAL_KINDS = new Set(["run_finished", "run_failed"]);

/** Whether `ev` is a run's last event. */
export const isFinal = (ev) => Boolean(ev) && FINAL_KINDS.has(ev.kind);

/** What the schedule's last step sets off, drawn past it. */
export const TAIL_MS = 800;
/** Drawn past a stored run's last event. */
export const AFTER_LAST_MS = 300;

/** How long the scenario's schedule runs: its last step, a pause's own length included. */
export function scheduleMs(scenario) {
  const steps = Array.isArray(scenario.steps) ? scenario.steps : [];
  const ends = steps.map((st) => num(st.at_ms) + (st.do === "pause" ? Math.max(num(st.ms), 0) : 0));
  return Math.max(0, ...ends);
}

/** How long a run's diagram is drawn from the start, from its scenario. */
export function durationOf(scenario) {
  return scheduleMs(scenario || {}) + TAIL_MS;
}

/** Side-by-side runs' (the compare page's lanes): the longest schedule (each lane's
 * `duration_ms`, the server's Scenario.duration_ms; 4,000 ms without one), and TAIL_MS. */
export function lanesDurationMs(lanes) {
  return Math.max(...lanes.map((lane) => lane.duration_ms || 4000)) + TAIL_MS;
}

/** Stored events', whatever their scenario (a slide of the diagram): to the last event, at
 * least 300 ms in, and AFTER_LAST_MS. */
export function eventsDurationMs(events) {
  return Math.max(300, ...events.map((e) => num(e.t_ms))) + AFTER_LAST_MS;
}

/** Where a run's events end: the latest event's time (what the server calls the run's
 * `end_ms`: the largest stored `t_ms`). */
export function endOf(events) {
  return Math.max(0, ...events.map((e) => num(e.t_ms)));
}

/** A stored run's: its schedule, or its events' end (`endT`) when they went on longer. */
export function replayDurationMs(scenario, endT) {
  return Math.max(durationOf(scenario), num(endT) + AFTER_LAST_MS);
}

/** Pixels per millisecond that fit `durationMs` in about `px`, within [lo, hi]: a long run is
 * taller, and a screen of it stays readable. */
export function scaleFor(px, durationMs, lo = 0.12, hi = 0.4) {
  return Math.min(hi, Math.max(lo, px / durationMs));
}

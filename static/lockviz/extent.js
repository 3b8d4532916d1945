// How long a live run's diagram is drawn from the start: its scenario's last step (a pause's
// own length included) and 800 ms for what it sets off. Used by the pages that draw a run as it
// streams (pages/run.js, follow-diagram.js); a replay knows its events' real end
// (replay-timeline.js).

export function durationOf(scenario) {
  const steps = Array.isArray(scenario.steps) ? scenario.steps : [];
  const ends = steps.map((st) => (st.at_ms || 0) + (st.do === "pause" ? st.ms || 0 : 0));
  return Math.max(0, ...ends) + 800;
}

// The diagram a student's page draws for a run it follows: the one the presenter shows
// (pages/follow.js) and a fork's original beside it (beside.js), sized alike from the run's
// follow.json.

import { LockDiagram } from "./diagram/diagram.js";
import { durationOf } from "./schedule.js";

// What a student's page knows of run `id`: {scenario, ws, …} (views: follow.json).
export function followed(id) {
  return fetch(`/runs/${id}/follow.json`).then((r) => r.json());
}

// A diagram in `svg` for a followed run's `scenario`; `options` adds to or overrides the sizes.
export function followDiagram(svg, scenario, options = {}) {
  const s = scenario || {};
  const durationMs = durationOf(s);
  return new LockDiagram(svg, {
    clients: s.clients,
    durationMs,
    backend: s.backend,
    pxPerMs: Math.min(0.4, Math.max(0.12, 820 / durationMs)),
    columnWidth: 160,
    narrationWidth: 205,
    ...options,
  });
}

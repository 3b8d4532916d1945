// A lesson's time axis on a student's page reaches as far as on the projector (pages/follow.js,
// pages/lesson.js, diagram/frame.js). The presenter's lesson page holds all of the run's events;
// a student's holds those up to the presenter's position. Grown event by event, an axis depends
// on the events held: on a loaded machine, where a run's last events came past its schedule, a
// student at the first checkpoint lacked the projector's last ticks ("5.5 s", "6.0 s", "6.5 s").
// Both now reach the run's end (LockDiagram.reachEnd, the room's `end_ms`).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import { LockDiagram } from "../../../static/lockviz/diagram/diagram.js";
import { drawingOf } from "../../../static/lockviz/run/drawing.js";
import { durationOf, endOf } from "../../../static/lockviz/run/extent.js";
import { fakeDocument } from "../fakedom.mjs";

const RUNS = JSON.parse(readFileSync(new URL("../fixtures/narrated-runs.json", import.meta.url), "utf8"));

/** The recorded run, its events from `fromSeq` on `lateMs` later (a machine that fell behind). */
function late(slug, fromSeq, lateMs) {
  const run = RUNS[slug];
  const events = run.events.map((ev) => (ev.seq >= fromSeq ? { ...ev, t_ms: ev.t_ms + lateMs } : ev));
  return { scenario: run.scenario, events };
}

function lesson(run, held, end) {
  const { svg } = fakeDocument();
  const d = new LockDiagram(svg, drawingOf("lesson", { scenario: run.scenario }));
  d.addAll(held);
  if (end != null) d.reachEnd(end);
  const ticks = [];
  const walk = (n) => {
    if ((n.getAttribute && n.getAttribute("class")) === "axis") ticks.push(n.textContent);
    (n.childNodes || []).forEach(walk);
  };
  walk(svg);
  return { extentMs: d.extentMs, ticks: ticks.join(" ") };
}

describe("a lesson's time axis", () => {
  for (const [slug, fromSeq, lateMs] of [
    ["gc-pause-unfenced", 22, 2500],
    ["gc-pause-unfenced", 26, 1200],
    ["zk-herd", 12, 1800],
  ]) {
    const run = late(slug, fromSeq, lateMs);
    const end = endOf(run.events);
    it(`is the projector's on a student's page (${slug}, ${lateMs} ms late from #${fromSeq})`, () => {
      assert.ok(end > durationOf(run.scenario), "the run must end past its schedule");
      const projector = lesson(run, run.events, end);
      for (const at of [3, fromSeq - 1, fromSeq, run.events.length]) {
        const student = lesson(run, run.events.slice(0, at), end);
        assert.equal(student.extentMs, projector.extentMs, `at #${at}`);
        assert.equal(student.ticks, projector.ticks, `at #${at}`);
      }
      // What it was: grown by the events each held, the two differed.
      assert.notEqual(lesson(run, run.events.slice(0, fromSeq - 1)).extentMs, lesson(run, run.events).extentMs);
    });
  }

  it("is the schedule's where the run ended within it", () => {
    const run = RUNS["gc-pause-unfenced"];
    const end = endOf(run.events);
    assert.ok(end <= durationOf(run.scenario));
    const held = run.events.slice(0, 5);
    assert.equal(lesson(run, held, end).extentMs, lesson(run, held).extentMs);
    assert.equal(lesson(run, run.events, end).extentMs, lesson(run, run.events).extentMs);
  });
});

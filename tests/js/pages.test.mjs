// The pure parts of the pages, without a browser: the replay's time line
// (static/lockviz/replay/timeline.js), a lesson's telling (static/lockviz/lesson/telling.js) and a
// streaming run's length (static/lockviz/run/extent.js).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { durationOf, scheduleMs } from "../../static/lockviz/run/extent.js";
import { Timeline } from "../../static/lockviz/replay/timeline.js";
import { Telling } from "../../static/lockviz/lesson/telling.js";

const ev = (seq, t_ms, kind = "note", extra = {}) => ({ seq, t_ms, actor: "lab", kind, ...extra });

describe("a streaming run's length", () => {
  it("is its last step, a pause's own length included, and 800 ms", () => {
    const steps = [
      { at_ms: 0, do: "acquire" },
      { at_ms: 900, do: "pause", ms: 500 },
      { at_ms: 1000, do: "jump", ms: 9000 },
    ];
    assert.equal(durationOf({ steps }), 2200);
    assert.equal(durationOf({ steps: [{ at_ms: 3000, do: "delay", ms: 5000 }] }), 3800);
  });

  it("is 800 ms for a scenario without steps, or with steps that are not a list", () => {
    assert.equal(durationOf({}), 800);
    assert.equal(durationOf({ steps: "none" }), 800);
  });
});

describe("the replay's time line", () => {
  const events = [
    ev(1, 0, "run_started"),
    ev(2, 3, "step", { index: 0 }),
    ev(3, 10.5),
    ev(4, 10.2), // stamped a fraction earlier than the event before it
    ev(5, 900, "step", { index: 1 }),
    ev(6, 1200, "run_finished"),
  ];
  const line = new Timeline(events, { steps: [{ at_ms: 0 }, { at_ms: 900, do: "pause", ms: 500 }] });

  it("keeps the latest time reached, and the run's length", () => {
    assert.deepEqual(line.reach, [0, 3, 10.5, 10.5, 900, 1200]);
    assert.equal(line.endT, 1200);
    assert.equal(scheduleMs({ steps: [{ at_ms: 0 }, { at_ms: 900, do: "pause", ms: 500 }] }), 1400);
    assert.equal(line.durationMs, 2200); // the schedule and 800 ms, or the run and 300
    assert.equal(line.finishAt, 5);
  });

  it("finds the last event a clock has reached", () => {
    assert.equal(line.atClock(0), 0);
    assert.equal(line.atClock(10.4), 1);
    assert.equal(line.atClock(10.5), 3);
    assert.equal(line.atClock(5000), 5);
  });

  it("knows the step each event belongs to, and the narrations around it", () => {
    assert.equal(line.toldAt(0), undefined);
    assert.equal(line.toldAt(3), 1);
    assert.equal(line.narration(3, -1), 1);
    assert.equal(line.narration(3, 1), 4);
    assert.equal(line.narration(4, 1), undefined);
  });

  it("opens a link at its moment, and says why a bad one opens the start", () => {
    assert.equal(line.fromHash(""), null);
    assert.deepEqual(line.fromHash("seq=5"), { index: 4 });
    assert.match(line.fromHash("seq=99").error, /no event #99 \(its events are #1 to #6\)/);
    assert.match(line.fromHash("moment%201").error, /“#moment 1”, which is not a moment/);
  });
});

describe("a lesson's telling", () => {
  const steps = [
    { at_ms: 0, say: "Alice takes the lock." },
    { at_ms: 100, ask: { question: "What now?", choices: ["a", "b"], answer: "b" } },
    { at_ms: 200 }, // no narration
    { at_ms: 300, say: "Bob writes." },
  ];
  const events = [
    ev(1, 0, "run_started"),
    ev(2, 1, "step", { index: 0 }),
    ev(3, 2, "request"),
    ev(4, 101, "step", { index: 1 }),
    ev(5, 102, "reply"),
    ev(6, 103, "expired"),
    ev(7, 201, "step", { index: 2 }),
    ev(8, 301, "step", { index: 3 }),
    ev(9, 302, "request"),
    ev(10, 400, "run_finished"),
  ];
  const telling = (answers = {}) => Object.assign(new Telling(steps, answers), { events });

  it("stops at a checkpoint until it is answered", () => {
    assert.equal(telling().askAt(3).question, "What now?");
    assert.ok(telling().blocked(3));
    assert.ok(!telling({ 1: { choice: 1 } }).blocked(3));
    assert.equal(telling().askAt(4), null);
  });

  it("tells a step's outcome up to the next step, and no further than the run's end", () => {
    assert.equal(telling().outcomeEnd(3), 5);
    assert.equal(telling().outcomeEnd(7), 8);
    assert.equal(telling().stepBefore(5), 3);
    assert.equal(telling().stepBefore(0), -1);
  });

  it("jumps between narrated steps, stopping on an unanswered question", () => {
    assert.equal(telling().nextSay(1), 3); // the checkpoint itself: it asks first
    assert.equal(telling({ 1: { skipped: true } }).nextSay(1), 5); // answered: its outcome
    assert.equal(telling().nextSay(3), 8); // step 2 says nothing: to step 3's outcome
    assert.equal(telling().nextSay(8), 9); // nothing narrated after: the end
    assert.equal(telling().prevSay(8), 5);
    assert.equal(telling().prevSay(2), 0);
  });

  it("keeps the outcome to itself until the last question is answered and passed", () => {
    assert.ok(!telling().pastLastAsk(9, true));
    assert.ok(!telling({ 1: { choice: 0 } }).pastLastAsk(4, false));
    assert.ok(telling({ 1: { choice: 0 } }).pastLastAsk(5, false));
  });

  it("shows the class a checkpoint's question, never the narration that answers it", () => {
    assert.equal(telling().classSees(3), "What now?");
    assert.equal(telling().classSees(2), "Alice takes the lock.");
    assert.equal(telling().classSees(6), ""); // past the question, before anything is said
    assert.equal(telling().classSees(9), "Bob writes.");
  });
});

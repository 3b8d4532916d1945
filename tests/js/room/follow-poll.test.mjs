// A revealed question on a student's screen folds away once the presenter moves on
// (static/lockviz/room/poll.js movedOn): for a lesson's checkpoint, not at the reveal's own
// jump to the checkpoint's outcome, only once the next step is shown.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { movedOn } from "../../../static/lockviz/room/poll.js";

const step = (seq, index) => ({ seq, kind: "step", index });
const events = [step(2, 0), { seq: 3, kind: "request" }, step(9, 2), { seq: 10, kind: "reply" }, step(14, 3)];

describe("a revealed poll folds away", () => {
  const checkpoint = { state: "revealed", run: "r1", step: 2 };
  const from = JSON.stringify(["r1", 9, "lesson"]);

  it("stays through the reveal's jump to the checkpoint's outcome", () => {
    assert.equal(movedOn(checkpoint, from, { run: "r1", at: 13, view: "lesson" }, events), false);
  });

  it("folds once the presenter shows the next step, or another run", () => {
    assert.equal(movedOn(checkpoint, from, { run: "r1", at: 14, view: "lesson" }, events), true);
    assert.equal(movedOn(checkpoint, from, { run: "r2", at: 0, view: "lesson" }, events), true);
  });

  it("a typed question folds at any change, an open one never", () => {
    const typed = { state: "revealed" };
    assert.equal(movedOn(typed, from, { run: "r1", at: 9, view: "lesson" }, events), false);
    assert.equal(movedOn(typed, from, { run: "r1", at: 10, view: "lesson" }, events), true);
    assert.equal(movedOn({ ...checkpoint, state: "open" }, from, { run: "r2" }, events), false);
  });
});

// A lecture plan's keys (room/plan-bar.js) and a plan's replay stopping at its to-moment
// (replay/player.js, the cursor's `stop`).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startPlanBar } from "../../../static/lockviz/room/plan-bar.js";
import { Player } from "../../../static/lockviz/replay/player.js";

function key(name, typing = false, extra = {}) {
  return {
    key: name,
    ...extra,
    target: { closest: () => (typing ? {} : null) },
    prevented: false,
    preventDefault() {
      this.prevented = true;
    },
  };
}

describe("the plan bar", () => {
  it("presses Next on PageDown and Previous on PageUp, never while typing or disabled", () => {
    const pressed = [];
    const button = (name, disabled = false) => ({ disabled, click: () => pressed.push(name) });
    const ids = { "plan-bar": {}, "plan-next": button("next"), "plan-previous": button("previous", true) };
    const listeners = [];
    startPlanBar({ getElementById: (id) => ids[id] || null, addEventListener: (_, f) => listeners.push(f) });
    const send = (event) => (listeners.forEach((f) => f(event)), event);
    assert.equal(send(key("PageDown")).prevented, true);
    assert.equal(send(key("PageUp")).prevented, true); // disabled: not pressed, no scrolling either
    send(key("PageDown", true)); // in a text field: the field's own
    send(key("PageDown", false, { ctrlKey: true }));
    send(key("n"));
    assert.deepEqual(pressed, ["next"]);
  });
});

describe("a replay's stop", () => {
  it("plays to the cursor's stop, then on to the end when played again", () => {
    globalThis.document = { createElement: () => ({ setAttribute() {} }) };
    globalThis.requestAnimationFrame = () => {};
    const line = { n: 10, endT: 900, reach: [...Array(10).keys()].map((i) => i * 100) };
    const cursor = {
      index: 2,
      clock: 200,
      stop: 5,
      go(i) {
        this.index = i;
      },
      paused() {},
    };
    const player = new Player({ append() {} }, { value: "1" }, line, cursor);
    player.play();
    for (let t = 0; t < 2000; t += 100) player.frame(t);
    assert.equal(cursor.index, 5);
    assert.equal(player.playing, false);
    player.play();
    for (let t = 3000; t < 5000; t += 100) player.frame(t);
    assert.equal(cursor.index, 9);
  });
});

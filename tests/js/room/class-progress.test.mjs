// A room's class view asks for its table again when the room's stream says progress moved or a
// member came or went (static/lockviz/room/class-progress.js), at most once per gap, whatever else
// the stream carries; it reconnects when the stream closes.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { followProgress } from "../../../static/lockviz/room/class-progress.js";

function fakeEnv() {
  const timers = [];
  const sockets = [];
  return {
    timers,
    sockets,
    location: { protocol: "http:", host: "lab.test" },
    setTimeout(fn, ms) {
      timers.push({ fn, ms });
      return timers.length;
    },
    WebSocket: class {
      constructor(url) {
        this.url = url;
        sockets.push(this);
      }
    },
  };
}

const box = () => {
  const seen = [];
  return { seen, dispatchEvent: (event) => seen.push(event.type) };
};

describe("the class view follows the room's stream", () => {
  it("asks again once per gap for progress and presence, never for other frames", () => {
    const env = fakeEnv();
    const b = box();
    followProgress(b, "/ws/rooms/ABC/", 400, env);
    const socket = env.sockets[0];
    assert.equal(socket.url, "ws://lab.test/ws/rooms/ABC/");
    for (const type of ["progress", "present", "progress", "tally", "state"]) {
      socket.onmessage({ data: JSON.stringify({ type }) });
    }
    socket.onmessage({ data: "not json" });
    assert.equal(env.timers.length, 1);
    assert.equal(env.timers[0].ms, 400);
    env.timers[0].fn();
    assert.deepEqual(b.seen, ["progress"]);
    socket.onmessage({ data: JSON.stringify({ type: "progress" }) });
    assert.equal(env.timers.length, 2); // a new gap after the last one fired
  });

  it("reconnects after a close, slowly when its address has its share of streams", () => {
    const env = fakeEnv();
    followProgress(box(), "/ws/rooms/ABC/", 400, env);
    env.sockets[0].onclose({ code: 4429 });
    assert.equal(env.timers.at(-1).ms, 30000);
    env.timers.at(-1).fn();
    assert.equal(env.sockets.length, 2);
    env.sockets[1].onclose({ code: 1006 });
    assert.equal(env.timers.at(-1).ms, 1000);
  });
});

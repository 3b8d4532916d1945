// A long run's events in chunks (static/lockviz/replay/event-chunks.js): the page's first chunk, then
// each one the last named, in order, until one names none.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { allEvents } from "../../../static/lockviz/replay/event-chunks.js";

const ev = (seq) => ({ seq, t_ms: seq, actor: "lab", kind: "note", said: { text: "" } });
const server = (chunks) => {
  const asked = [];
  const get = async (url) => {
    asked.push(url);
    const chunk = chunks[url];
    return chunk ? { ok: true, json: async () => chunk } : { ok: false, status: 404 };
  };
  return { asked, get };
};

describe("a long run's events", () => {
  it("are the page's first chunk, then each chunk named by the one before", async () => {
    const { asked, get } = server({
      "/runs/r/events.json?after=2": { events: [ev(3), ev(4)], more: "/runs/r/events.json?after=4" },
      "/runs/r/events.json?after=4": { events: [ev(5)], more: null },
    });
    const events = await allEvents([ev(1), ev(2)], "/runs/r/events.json?after=2", get);
    assert.deepEqual(
      events.map((e) => e.seq),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(asked, ["/runs/r/events.json?after=2", "/runs/r/events.json?after=4"]);
  });

  it("are the page's alone when it names no more, and a failed chunk says so", async () => {
    const { asked, get } = server({});
    assert.deepEqual(await allEvents([ev(1)], null, get), [ev(1)]);
    assert.deepEqual(asked, []);
    await assert.rejects(allEvents([ev(1)], "/runs/r/events.json?after=1", get), /did not load \(404\)/);
  });
});

// The one-file replay's events, carried in the page (static/lockviz/replay/inline-events.js): as JSON,
// or as gzip in base64 (what lockviz/runs/webpage.py writes for a long run), unpacked without a
// request by the platform's DecompressionStream.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";

import { inlineEvents } from "../../../static/lockviz/replay/inline-events.js";

const events = Array.from({ length: 3000 }, (_, i) => ({
  seq: i + 1,
  t_ms: i * 1.5,
  actor: "alice",
  kind: "note",
  said: { text: `step ${i} — “quoted” é` },
}));
const element = (text, encoding) => ({ textContent: text, dataset: encoding ? { encoding } : {} });

describe("events carried in the page", () => {
  it("are read from JSON", async () => {
    assert.deepEqual(await inlineEvents(element(JSON.stringify(events.slice(0, 5)))), events.slice(0, 5));
  });

  it("are unpacked from gzip in base64, every one, in order", async () => {
    const packed = gzipSync(Buffer.from(JSON.stringify(events), "utf-8")).toString("base64");
    const found = await inlineEvents(element(`\n${packed}\n`, "gzip+base64"));
    assert.equal(found.length, 3000);
    assert.deepEqual(found, events);
  });

  it("are none when the page has no element for them", async () => {
    assert.deepEqual(await inlineEvents(null), []);
  });
});

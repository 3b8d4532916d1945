// Marks where they belong (static/lockviz/diagram/handlers/): a paused client's band covers its
// own lifeline and bars, never the next client's, at every column width a page draws (a
// projector's fitted columns, a compare lane's). Recorded runs (fixtures/narrated-runs.json),
// drawn in a fake DOM (fakedom.mjs).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import { LockDiagram } from "../../static/lockviz/diagram/diagram.js";
import { fakeDocument } from "./fakedom.mjs";

const RUNS = JSON.parse(readFileSync(new URL("fixtures/narrated-runs.json", import.meta.url), "utf8"));

function groups(svg, cls) {
  const found = [];
  const walk = (n) => {
    if (n.getAttribute && (n.getAttribute("class") || "").split(" ").includes(cls)) found.push(n);
    (n.childNodes || []).forEach(walk);
  };
  walk(svg);
  return found;
}

const rectOf = (g) => g.childNodes.find((c) => c.tagName === "rect");
const span = (r) => [Number(r.getAttribute("x")), Number(r.getAttribute("x")) + Number(r.getAttribute("width"))];

describe("a paused client's band", () => {
  const run = RUNS["gc-pause-unfenced"];
  for (const columnWidth of [100, 110, 130, 160, 175, 220]) {
    it(`stays on alice's lifeline, clear of bob's bars, in ${columnWidth} px columns`, () => {
      const { svg } = fakeDocument();
      const d = new LockDiagram(svg, { clients: run.scenario.clients, backend: run.scenario.backend, columnWidth });
      d.addAll(run.events);
      const [pause] = groups(svg, "pause");
      assert.ok(pause, "no pause drawn");
      const [left, right] = span(rectOf(pause));
      const alice = d.layout.x("alice"),
        bob = d.layout.x("bob");
      const G = d.layout.G;
      assert.ok(left <= alice + G.beliefX && right >= alice, "alice's lifeline and bars are in it");
      const bobBars = groups(svg, "lease")
        .concat(groups(svg, "belief"))
        .map(rectOf)
        .filter((r) => Math.abs(Number(r.getAttribute("x")) - bob) < d.layout.colW / 2);
      assert.ok(bobBars.length >= 2, "bob's bars drawn");
      for (const r of bobBars) assert.ok(span(r)[0] >= right, `bob's bar at ${span(r)} under the band to ${right}`);
      assert.ok(right < bob, "bob's lifeline is not in it");
    });
  }
});

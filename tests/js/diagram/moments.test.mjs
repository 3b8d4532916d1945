// What depends on the moment shown (static/lockviz/diagram/moments.js) is drawn the same
// whichever comes first: the moment or the events up to it. A class's page is told the
// presenter's position first and given the events up to it after (pages/follow.js); the
// presenter's own page draws the events and then moves the cursor. Recorded runs as a page
// receives them (fixtures/narrated-runs.json), drawn in a fake DOM (fakedom.mjs).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import { LockDiagram } from "../../../static/lockviz/diagram/diagram.js";
import { fakeDocument, serialize } from "../fakedom.mjs";

const RUNS = JSON.parse(readFileSync(new URL("../fixtures/narrated-runs.json", import.meta.url), "utf8"));

function diagramOf(run) {
  const { svg } = fakeDocument();
  return new LockDiagram(svg, { clients: run.scenario.clients, backend: run.scenario.backend });
}

/** What is drawn, wherever a label found its free spot (the order labels are placed in differs
 * when an item is drawn early, so their places may too): each event's groups with the spans
 * of their bars and bands, and every label's words; sorted. */
function drawn(d) {
  const out = [];
  const walk = (n, hidden) => {
    if (!n.getAttribute) return;
    hidden = hidden || (n.style && n.style.display === "none");
    const seq = n.getAttribute("data-seq");
    if (n.tagName === "g" && seq != null) {
      const spans = n.childNodes
        .filter((c) => c.tagName === "rect")
        .map((r) => `${Number(r.getAttribute("y")).toFixed(1)}+${Number(r.getAttribute("height")).toFixed(1)}`);
      const words = n.childNodes
        .filter((c) => c.tagName === "text")
        .map((t) => serialize(t).replace(/ (x|y|dy|transform)="[^"]*"/g, ""));
      const cls = n.getAttribute("class").split(" ").sort().join(" ");
      out.push(`${seq} ${cls} ${hidden ? "hidden" : ""} ${spans.join(" ")} ${words.join(" ")}`);
    }
    n.childNodes.forEach((c) => walk(c, hidden));
  };
  walk(d.svg, false);
  return out.sort().join("\n");
}

/** Positions to stop at: a third, two thirds, and the last event but one. */
function positions(run) {
  const seqs = run.events.map((e) => e.seq);
  return [seqs[Math.floor(seqs.length / 3)], seqs[Math.floor((2 * seqs.length) / 3)], seqs[seqs.length - 2]];
}

describe("a diagram shown up to a moment", () => {
  for (const [name, run] of Object.entries(RUNS)) {
    it(`draws ${name} alike, told the moment before or after its events`, () => {
      for (const at of positions(run)) {
        const upTo = run.events.filter((e) => e.seq <= at);
        const presenter = diagramOf(run); // the events, then the cursor
        presenter.showUpTo(0);
        presenter.addAll(upTo);
        presenter.showUpTo(at);
        const follower = diagramOf(run); // the cursor, then the events one by one
        follower.showUpTo(at);
        for (const ev of upTo) follower.add(ev);
        assert.equal(drawn(follower), drawn(presenter), `${name} at #${at}`);
      }
    });
  }

  it("draws a lease bar for a grant that came while the moment stood still", () => {
    const run = RUNS["gc-pause-unfenced"];
    const at = run.events[run.events.length - 2].seq;
    const d = diagramOf(run);
    d.showUpTo(at);
    for (const ev of run.events.filter((e) => e.seq <= at)) d.add(ev);
    const heights = [];
    const walk = (n) => {
      const mark = n.getAttribute && n.getAttribute("data-mark");
      if (mark === "lease" || mark === "pause")
        heights.push(Number(n.childNodes.find((c) => c.tagName === "rect").getAttribute("height")));
      (n.childNodes || []).forEach(walk);
    };
    walk(d.svg);
    assert.ok(heights.length >= 3, heights);
    assert.ok(
      heights.every((h) => h > 0),
      heights,
    );
  });
});

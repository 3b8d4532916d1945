// Marks where they belong (static/lockviz/diagram/handlers/): a paused client's band covers its
// own lifeline and bars, never the next client's, at every column width a page draws (a
// projector's fitted columns, a compare lane's); the moment a fork parts says so, on every
// screen; so does a belief that outlived its lease. Recorded runs (fixtures/narrated-runs.json),
// drawn in a fake DOM (fakedom.mjs).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import { LockDiagram } from "../../../static/lockviz/diagram/diagram.js";
import { drawingOf } from "../../../static/lockviz/run/drawing.js";
import { fakeDocument } from "../fakedom.mjs";

const RUNS = JSON.parse(readFileSync(new URL("../fixtures/narrated-runs.json", import.meta.url), "utf8"));

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

describe("where a fork parts from its original", () => {
  // The line across the diagram at the moment a fork parts says so, on a student's full diagram
  // and on the projector's compact lane alike. Its words sit over the bars (with a halo): the
  // bars, obstacles for labels once the run has ended, leave them where they were (they were
  // pushed out then, with no near spot free, where the other screen's layout kept them: a
  // student lacked "what if…? parts from here" the projector drew); anywhere along the line will
  // do when its ends are taken (the grant's arrows and labels at the left, the step's caption at
  // the right), and they have no tooltip to keep them.
  const text = "what if…? parts from here (0.94 s)";
  const lanes = { full: null, compact: { width: 600, scale: 0.94 } };
  const label = (svg) => groups(svg, "time-mark-label")[0];
  const shown = (svg) => label(svg).getAttribute("display") !== "none";
  for (const slug of ["gc-pause-unfenced", "redlock-slow-network", "zk-herd", "storage-hole-sequencer"]) {
    const run = RUNS[slug];
    const moments = [...new Set(run.events.map((ev) => Math.round(ev.t_ms)))];
    const drawn = (lane, tMs, events) => {
      const { svg } = fakeDocument();
      const d = new LockDiagram(svg, { ...drawingOf("lane", { scenario: run.scenario, durationMs: 8000 }), lane });
      d.markTime(tMs, text);
      d.addAll(events);
      return svg;
    };
    // Up to the run's last moments: there its end line, its words and the requests still on
    // their way, drawn to the end, take the room.
    const early = moments.filter((tMs) => tMs < run.events.at(-2).t_ms - 100);
    for (const [kind, lane] of Object.entries(lanes)) {
      it(`is not left out as ${slug} ends, on a ${kind} lane`, () => {
        const lost = early.filter(
          (tMs) => shown(drawn(lane, tMs, run.events.slice(0, -1))) && !shown(drawn(lane, tMs, run.events)),
        );
        assert.equal(run.events.at(-1).kind, "run_finished");
        assert.deepEqual(lost, []);
      });
    }
    it(`is said at every moment of ${slug} on a student's full diagram`, () => {
      const left = moments.filter((tMs) => !shown(drawn(null, tMs, run.events)));
      assert.deepEqual(left, []);
    });
  }
});

describe("a belief that outlived its lease", () => {
  // "believes it holds (lease gone)" is the lesson of the run: it is said on a projector's fitted
  // columns and in a compare lane as on a student's full diagram. A free-play session on a loaded
  // machine (CI): the projector's narrow columns put it across the previous client's bars,
  // obstacles once the run has ended, and it was left out where the student's diagram said it.
  // (a gap too short to say so hides its label's group)
  const gapLabels = (svg) => groups(svg, "gap-label").filter((t) => t.parentNode.style.display !== "none");
  const screens = {
    "a student's full diagram": (kind) => drawingOf(kind, {}),
    "a projector's columns at 600 px": (kind) => ({ ...drawingOf(kind, {}), fit: { clientWidth: 600 } }),
    "a projector's columns at 820 px": (kind) => ({ ...drawingOf(kind, {}), fit: { clientWidth: 820 } }),
    "a compare lane": () => ({ ...drawingOf("lane", { durationMs: 8000 }), lane: { width: 560, scale: 0.93 } }),
  };
  for (const [slug, run] of Object.entries(RUNS)) {
    for (const kind of ["run", "play"]) {
      for (const [screen, options] of Object.entries(screens)) {
        it(`is said in ${slug} (${kind}) on ${screen}`, () => {
          const { svg } = fakeDocument();
          const base = options(kind);
          const d = new LockDiagram(svg, { ...base, clients: run.scenario.clients, backend: run.scenario.backend });
          d.addAll(run.events);
          const left = gapLabels(svg).filter((t) => t.getAttribute("display") === "none");
          assert.deepEqual(
            left.map((t) => t.textContent),
            [],
          );
        });
      }
    }
  }
  it("is drawn in the runs that have one", () => {
    const { svg } = fakeDocument();
    const run = RUNS["pg-ghost-holder-timeout"];
    const d = new LockDiagram(svg, {
      ...drawingOf("play", {}),
      clients: run.scenario.clients,
      fit: { clientWidth: 600 },
    });
    d.addAll(run.events);
    assert.ok(gapLabels(svg).length > 0, "no belief outlived its lease");
  });
});

describe("where a fork of a session left idle parts", () => {
  // A quiet stretch is drawn short (a break); the line across the moment a fork parts, after
  // it, moves up with the events around it (it stayed where the stretch would have ended: on
  // a compare lane of free-play-idle, 35 000 px below its moment, under everything).
  const run = RUNS["free-play-idle"];
  for (const [kind, lane] of Object.entries({ full: null, compact: { width: 600, scale: 0.94 } })) {
    it(`is drawn at its moment after the break, on a ${kind} lane`, () => {
      const { svg } = fakeDocument();
      const d = new LockDiagram(svg, { ...drawingOf("lane", { scenario: run.scenario, durationMs: 4000 }), lane });
      const tMs = run.events.at(-2).t_ms; // the session's end, after three minutes left idle
      d.markTime(tMs, "what if…? parts from here");
      d.addAll(run.events);
      assert.ok(
        d.layout.breaks.some((b) => b.t1 < tMs),
        "no break before the mark",
      );
      const [line] = groups(svg, "time-mark-line");
      assert.ok(Math.abs(Number(line.getAttribute("y1")) - d.layout.y(tMs)) < 0.5, line.getAttribute("y1"));
      assert.equal(groups(svg, "time-mark-line").length, 1);
      assert.equal(groups(svg, "time-mark-label").length, 1);
    });
  }
});

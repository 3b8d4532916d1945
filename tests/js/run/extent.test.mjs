// One owner for a run's extent (static/lockviz/run/extent.js): a run's end, how long its diagram is
// drawn, and its scale. Every other module imports them; a module that writes one of them again
// fails here, by name, before two pages drift apart (a lesson once drew redlock-clock-jump
// 16,600 ms long, counting its clock jump's 15 s as time, while the run page drew 3,300 ms).

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { describe, it } from "node:test";

import { drawingOf } from "../../../static/lockviz/run/drawing.js";
import {
  durationOf,
  eventsDurationMs,
  isFinal,
  lanesDurationMs,
  replayDurationMs,
  scaleFor,
  scheduleMs,
} from "../../../static/lockviz/run/extent.js";
import { Timeline } from "../../../static/lockviz/replay/timeline.js";

const here = (path) => new URL(path, import.meta.url);
const STATIC = here("../../../static/lockviz/");
const OWNER = "run/extent.js";

function modules(dir = STATIC, prefix = "") {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? modules(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`)
      : entry.name.endsWith(".js")
        ? [[`${prefix}${entry.name}`, readFileSync(new URL(entry.name, dir), "utf8")]]
        : [],
  );
}

// What defining each fact looks like in a module's text (comments aside).
const DEFINES = {
  "a run's end": /["']run_finished["'][^;\n]*["']run_failed["']|["']run_failed["'][^;\n]*["']run_finished["']/,
  "a schedule's duration": /\bat_ms\b[^;\n]*\bms\b|\+\s*(800|TAIL_MS|AFTER_LAST_MS)\b/,
  "the diagram's scale": /pxPerMs\s*[:=][^,;\n]*\/|\/\s*(durationMs|endMs)\b/,
};
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");

describe("a run's extent has one owner", () => {
  const all = modules();

  it("reads every module of the front end", () => {
    assert.ok(all.length > 40);
    assert.ok(all.some(([name]) => name === OWNER));
  });

  for (const [fact, pattern] of Object.entries(DEFINES)) {
    it(`${fact} is defined in ${OWNER} and nowhere else`, () => {
      const owners = all.filter(([, text]) => pattern.test(code(text))).map(([name]) => name);
      assert.deepEqual(owners, [OWNER]);
    });
  }

  // Each kind of page's sizes are chosen in run/drawing.js (one place, so the presenter's page
  // and a class's page draw the same); the slide (run/export.js) fits its own box.
  it("a page's scale is chosen in run/drawing.js, or for a slide in run/export.js", () => {
    const choosers = all.filter(([, text]) => /\bscaleFor\(/.test(code(text))).map(([name]) => name);
    assert.deepEqual(choosers.sort(), ["run/drawing.js", "run/export.js", OWNER].sort());
  });
});

describe("a run's extent", () => {
  const builtin = (slug) => JSON.parse(readFileSync(here(`../../../lockviz/scenarios/builtin/${slug}.json`), "utf8"));

  it("counts only a pause's ms as time: a clock jump and a delay are sizes", () => {
    const steps = [
      { at_ms: 0, do: "acquire" },
      { at_ms: 800, do: "clock_jump", ms: 15000 },
      { at_ms: 900, do: "pause", ms: 500 },
      { at_ms: 1000, do: "delay", ms: 9000 },
    ];
    assert.equal(scheduleMs({ steps }), 1400);
    assert.equal(durationOf({ steps }), 2200);
  });

  it("draws redlock-clock-jump as long on the lesson page as on the run page", () => {
    const scenario = builtin("redlock-clock-jump");
    const run = drawingOf("run", { scenario, nodes: scenario.nodes });
    const lesson = drawingOf("lesson", { scenario, nodes: scenario.nodes });
    assert.equal(run.durationMs, 3300); // its last step at 2,500 ms, and 800 ms after it
    assert.equal(lesson.durationMs, run.durationMs);
  });

  it("draws side-by-side runs on the longest one's schedule, and a slide to its last event", () => {
    assert.equal(lanesDurationMs([{ duration_ms: 2500 }, { duration_ms: 4100 }, {}]), 4900);
    assert.equal(eventsDurationMs([{ t_ms: 100 }, { t_ms: 2000 }, { t_ms: null }]), 2300);
    assert.equal(eventsDurationMs([{ t_ms: 10 }]), 600);
  });

  it("gives a stored run its schedule, or its events' end when they went on longer", () => {
    const scenario = builtin("redlock-clock-jump");
    assert.equal(replayDurationMs(scenario, 2000), 3300);
    assert.equal(replayDurationMs(scenario, 5000), 5300);
    assert.equal(new Timeline([{ seq: 1, t_ms: 2000, kind: "run_finished" }], scenario).durationMs, 3300);
  });

  it("ends with run_finished or run_failed, nothing else", () => {
    assert.ok(isFinal({ kind: "run_finished" }) && isFinal({ kind: "run_failed" }));
    assert.ok(!isFinal({ kind: "run_started" }) && !isFinal(undefined) && !isFinal(null));
  });

  it("scales a run to about a screen, within readable bounds", () => {
    assert.equal(scaleFor(820, 4100), 0.2);
    assert.equal(scaleFor(820, 100), 0.4);
    assert.equal(scaleFor(820, 100_000), 0.12);
    assert.equal(scaleFor(700, 100_000, 0.05, 0.2), 0.05);
  });
});

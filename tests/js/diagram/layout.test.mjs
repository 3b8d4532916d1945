// The diagram's layout without a browser: lanes → x, time → y (with the breaks of a quiet
// stretch), and the space labels keep clear of (static/lockviz/diagram/layout.js, space.js).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  BASE,
  DEFAULTS,
  LANE,
  Layout,
  MIN_TEXT_SCALE,
  columns,
  fitScale,
} from "../../../static/lockviz/diagram/layout.js";
import { Space, segmentHits } from "../../../static/lockviz/diagram/space.js";

const none = { clients: [], nodes: [] };

describe("a compare lane beside another", () => {
  // A fork beside its original at 1280×720: each lane gets about 600 px (607 in presenter view).
  const fork = { clients: ["alice", "bob"], nodes: ["redis-1"], columnWidth: 120, narrationWidth: 140 };

  it("fits a 600 px share with its text at least 12 px, where the full layout cannot", () => {
    assert.ok(fitScale(4, 1.3, 600, 0, true) >= MIN_TEXT_SCALE);
    assert.ok(fitScale(4, 1.3, 600) < MIN_TEXT_SCALE);
    assert.equal(fitScale(4, 1, 2000, 0, true), 1); // never larger than the page's own scale
  });

  it("is exactly as wide as its share, its step numbers in a narrow margin", () => {
    const scale = fitScale(4, 1.3, 600, 0, true);
    const L = new Layout(fork, {}, none, { scale, fitWidth: 600, lane: true });
    assert.ok(L.lane);
    assert.ok(L.width <= 600 && L.width >= 590, `width ${L.width}`);
    assert.equal(L.narrW, LANE.narr * scale);
    assert.equal(L.G.firstCol, LANE.firstCol * scale);
    assert.ok(L.colW >= LANE.col * scale);
    assert.equal(L.width, Math.round(L.narrX + L.narrW + 12));
  });

  it("leaves the run page's layout as it was", () => {
    const full = new Layout(fork, {}, none, { scale: 1.3, fitWidth: 1244 });
    assert.ok(!full.lane);
    assert.equal(full.G.firstCol, BASE.firstCol * 1.3);
    assert.ok(full.narrW >= 130 * 1.3);
  });

  it("takes three lanes or more at 1280 px as too narrow: they are stacked", () => {
    assert.ok(fitScale(4, 1.3, 400, 0, true) < MIN_TEXT_SCALE);
  });
});

describe("lanes", () => {
  it("are the clients, then the lock nodes, then the storage", () => {
    const cols = columns({ clients: ["alice", "bob"], nodes: ["redis-1", "redis-2"] }, {}, none);
    assert.deepEqual(cols, ["alice", "bob", "redis-1", "redis-2", "storage"]);
  });

  it("come from the run when the page does not say, and include actors nobody announced", () => {
    const run = { clients: ["alice"], nodes: ["zk-1"], storage: "store" };
    const cols = columns({}, run, { clients: ["carol"], nodes: ["zk-2", "alice"] });
    assert.deepEqual(cols, ["alice", "carol", "zk-1", "zk-2", "store"]);
  });

  it("end with a replicated storage's replicas, each a storage, whenever they were first seen", () => {
    const run = { clients: ["alice", "bob"], nodes: [], storage: "storage", replicas: ["storage", "storage-2"] };
    const seen = { clients: [], nodes: ["storage-2"] }; // a write to it came before anyone said
    assert.deepEqual(columns({}, run, seen), ["alice", "bob", "storage", "storage-2"]);
    const L = new Layout({}, run, seen);
    assert.deepEqual(
      ["storage", "storage-2"].map((n) => L.role(n)),
      ["storage", "storage"],
    );
  });

  it("name each actor once, and never the storage or a client as a lock node", () => {
    const cols = columns({ clients: ["a", "a"], nodes: ["n", "storage", "a", "n"] }, {}, none);
    assert.deepEqual(cols, ["a", "n", "storage"]);
  });

  it("are evenly spaced from the first column, with their roles", () => {
    const L = new Layout({ clients: ["alice", "bob"], nodes: ["redis-1"], columnWidth: 160 }, {}, none);
    assert.deepEqual(
      ["alice", "bob", "redis-1", "storage"].map((n) => L.x(n)),
      [BASE.firstCol, BASE.firstCol + 160, BASE.firstCol + 320, BASE.firstCol + 480],
    );
    assert.deepEqual(
      ["alice", "redis-1", "storage", "nobody"].map((n) => L.role(n)),
      ["client", "node", "storage", null],
    );
    assert.equal(L.x("nobody"), BASE.firstCol);
    assert.equal(L.width, Math.round(L.narrX + L.narrW + 12));
  });

  it("share a page's width: narrower columns, never below 110 px", () => {
    const options = { clients: ["a", "b", "c"], nodes: ["n1", "n2", "n3", "n4", "n5"] };
    const wide = new Layout(options, {}, none);
    const fitted = new Layout(options, {}, none, { fitWidth: 1200 });
    assert.ok(fitted.width < wide.width);
    assert.ok(fitted.colW >= 110 && fitted.colW < wide.colW);
    const tiny = new Layout(options, {}, none, { fitWidth: 300 });
    assert.equal(tiny.colW, 110);
  });

  it("grow with the page's scale", () => {
    const one = new Layout({ clients: ["a"] }, {}, none);
    const big = new Layout({ clients: ["a"] }, {}, none, { scale: 1.5 });
    assert.equal(big.G.firstCol, one.G.firstCol * 1.5);
    assert.equal(big.px, one.px * 1.5);
    assert.equal(big.y(1000), 1.5 * one.y(1000));
  });
});

describe("time", () => {
  it("flows down in proportion, from the top, never above it", () => {
    const L = new Layout({ pxPerMs: 0.2 }, {}, none);
    assert.equal(L.y(0), BASE.top);
    assert.equal(L.y(1000), BASE.top + 200);
    assert.equal(L.y(-50), BASE.top);
    assert.equal(new Layout({}, {}, none).px, DEFAULTS.pxPerMs);
  });

  it("takes the run's length from the page, else the run, else a default", () => {
    assert.equal(new Layout({ durationMs: 9000 }, { duration_ms: 2000 }, none).durationMs, 9000);
    assert.equal(new Layout({}, { duration_ms: 2000 }, none).durationMs, 2000);
    assert.equal(new Layout({}, {}, none).durationMs, DEFAULTS.durationMs);
  });

  it("draws a long quiet stretch short, and what follows it moves up by as much", () => {
    const L = new Layout({ pxPerMs: 0.2, durationMs: 6000 }, {}, none);
    assert.equal(L.breakBefore({ t_ms: 1000 }, 6000), null);
    assert.equal(L.breakBefore({ t_ms: 5000 }, 6000), null); // 4 s: not long enough
    const before = L.y(40000);
    const b = L.breakBefore({ t_ms: 40000 }, 6000); // 35 s of nothing
    assert.deepEqual([b.t0, b.t1], [5300, 39700]);
    assert.equal(L.y(b.t1) - L.y(b.t0), BASE.breakPx); // drawn breakPx tall
    assert.equal(L.y(3000), BASE.top + 600); // before it: unchanged
    assert.ok(Math.abs(before - L.y(40000) - (34400 * 0.2 - BASE.breakPx)) < 1e-6);
    assert.ok(L.y(20000) > L.y(b.t0) && L.y(20000) < L.y(b.t1)); // inside: in proportion
  });

  it("has no break before the first event, nor where the page's limit is not passed", () => {
    const L = new Layout({ durationMs: 6000 }, {}, none);
    assert.equal(L.breakBefore({ t_ms: 30000 }, 6000), null); // first event: nothing before it
    assert.equal(L.breakBefore({ t_ms: 35000 }, 6000), null); // 5 s later
    assert.notEqual(L.breakBefore({ t_ms: 60000 }), null); // default limit: max(4 s, duration)
  });
});

describe("space", () => {
  it("tells whether a segment enters a box", () => {
    const box = { x1: 10, y1: 10, x2: 20, y2: 20 };
    assert.ok(segmentHits({ ax: 0, ay: 0, bx: 30, by: 30 }, box));
    assert.ok(!segmentHits({ ax: 0, ay: 25, bx: 30, by: 25 }, box));
    assert.ok(!segmentHits({ ax: 0, ay: 0, bx: 5, by: 5 }, box));
    assert.ok(segmentHits({ ax: 15, ay: 0, bx: 15, by: 30 }, box));
  });

  it("finds what a box meets, skips what was removed, and knows labels from obstacles", () => {
    const space = new Space();
    const mark = space.add({ kind: "box", x1: 0, y1: 0, x2: 10, y2: 10 });
    const label = space.add({ kind: "label", x1: 100, y1: 100, x2: 150, y2: 112 });
    const arrow = space.add({ kind: "seg", ax: 0, ay: 200, bx: 300, by: 200, x1: 0, x2: 300, y1: 199, y2: 201 });
    assert.equal(space.hit({ x1: 5, y1: 5, x2: 8, y2: 8 }), mark);
    assert.equal(space.hit({ x1: 50, y1: 190, x2: 60, y2: 210 }), arrow);
    assert.equal(space.hit({ x1: 50, y1: 150, x2: 60, y2: 160 }), null);
    assert.equal(space.hit({ x1: 5, y1: 5, x2: 8, y2: 8 }, mark), null); // except itself
    space.remove(mark);
    assert.equal(space.hit({ x1: 5, y1: 5, x2: 8, y2: 8 }), null);
    const crossing = { kind: "seg", ax: 90, ay: 106, bx: 200, by: 106, x1: 90, x2: 200, y1: 105, y2: 107 };
    assert.deepEqual(space.labelsMeeting(crossing), [label]);
  });
});

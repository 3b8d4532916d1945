// The presenter's reports to its room (static/lockviz/room/reports.js): each carries its place in
// the presenter's order, so the server (lockviz/teaching/shown.py) keeps the newest whichever
// order they arrive in (a CI run: the class stayed on a lesson's outcome after the presenter had
// stepped four events past it, the older report saved last). Reports do not wait for each other,
// a hung one is given up, a lost one is followed by the newest state with a fresh order.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { orderClock, reporter } from "../../../static/lockviz/room/reports.js";

const tick = () => new Promise((r) => setTimeout(r, 0));

// A server that answers when told to: each POST waits in `waiting` until answered.
function slowServer() {
  const waiting = [];
  const got = [];
  const post = (body, timeout) =>
    new Promise((ok, fail) => {
      got.push({ ...JSON.parse(body), timeout });
      waiting.push({ ok, fail });
    });
  const reply = async (i, status, json = {}) => {
    waiting.splice(i, 1)[0].ok({ status, ok: status < 300, json: async () => json });
    await tick();
    await tick();
  };
  const drop = async (i = 0) => {
    waiting.splice(i, 1)[0].fail(new DOMException("The operation timed out.", "TimeoutError"));
    await tick();
  };
  return { post, got, waiting, reply, drop };
}

const at = (n) => ({ view: "lesson", run: "r1", at: n });

// A page's clocks under the test's hand: the monotonic one, and the server's.
function clocks(start = 1_000_000) {
  const c = { mono: 0 };
  c.order = orderClock(start, () => c.mono);
  return c;
}

describe("the page's order clock", () => {
  it("counts on from the server's start by the monotonic clock, each order past the last", () => {
    const c = clocks(1_000_000);
    assert.equal(c.order.next(), 1_000_000);
    assert.equal(c.order.next(), 1_000_001); // twice in one millisecond: still in order
    c.mono = 500;
    assert.equal(c.order.next(), 1_000_500);
  });

  it("never goes back below an order it was told of, nor behind the server's clock", () => {
    const c = clocks(1_000_000);
    c.order.seen(2_000_000); // another tab's report, ahead of this page's clock
    assert.equal(c.order.next(), 2_000_001);
    c.order.seen(5); // an old one teaches nothing
    assert.equal(c.order.next(), 2_000_002);
    c.mono = 100;
    c.order.at(3_000_000); // an answer: the server's clock was far past this page's (a cached page)
    assert.equal(c.order.next(), 3_000_000);
    c.mono = 200;
    assert.equal(c.order.next(), 3_000_100);
    c.order.seen("9e99"); // not a whole number: ignored
    c.order.at(Number.MAX_VALUE);
    assert.equal(c.order.next(), 3_000_101);
  });
});

describe("the presenter's reports", () => {
  it("go out as the page moves, without waiting for an answer, each with a greater order", async () => {
    const c = clocks();
    const server = slowServer();
    const report = reporter(server.post, c.order, { time: () => c.mono });
    report(at(9)); // the reveal's jump to the outcome: its answer is held up
    c.mono += 300;
    report(at(13)); // four steps on
    c.mono += 300;
    report(at(13)); // unchanged: not sent again
    assert.deepEqual(
      server.got.map((g) => g.at),
      [9, 13],
    );
    assert.ok(server.got[1].order > server.got[0].order);
    assert.equal(server.got[0].timeout, 5000); // a hung request is given up, holding nothing
    await server.reply(1, 200, { saved: true, order: server.got[1].order, now: 1_000_600 });
    await server.reply(0, 200, { saved: false, order: server.got[1].order, now: 1_000_600, older: "…" });
    c.mono += 300;
    report(at(13)); // the older one was answered "older": nothing is sent again
    assert.equal(server.got.length, 2);
  });

  it("at most once every `every` ms", () => {
    const c = clocks();
    const server = slowServer();
    const report = reporter(server.post, c.order, { every: 250, time: () => c.mono });
    report(at(1));
    c.mono += 100;
    report(at(2));
    assert.equal(server.got.length, 1);
    c.mono += 200;
    report(at(2));
    assert.deepEqual(
      server.got.map((g) => g.at),
      [1, 2],
    );
  });

  it("after a lost report send the newest state with a fresh order, not the lost one", async () => {
    const c = clocks();
    const server = slowServer();
    const report = reporter(server.post, c.order, { every: 250, time: () => c.mono });
    report(at(5));
    c.mono += 300;
    report(at(6)); // the newest
    await server.drop(1); // the newest hung and was given up
    await server.reply(0, 200, { saved: true, order: server.got[0].order, now: 1_000_300 });
    c.mono += 600; // waits longer after a loss
    report(at(6));
    assert.deepEqual(
      server.got.map((g) => g.at),
      [5, 6, 6],
    );
    assert.ok(server.got[2].order > server.got[1].order);
    await server.reply(0, 502);
    c.mono += 1200;
    report(at(7)); // the page moved on meanwhile: the newest goes
    await server.reply(0, 400); // refused: it would be refused again
    c.mono += 1200;
    report(at(7));
    assert.deepEqual(
      server.got.map((g) => g.at),
      [5, 6, 6, 7],
    );
  });

  it("a lost report that a later one followed is not sent again", async () => {
    const c = clocks();
    const server = slowServer();
    const report = reporter(server.post, c.order, { time: () => c.mono });
    report(at(1));
    c.mono += 300;
    report(at(2));
    await server.reply(1, 200, { saved: true, order: server.got[1].order, now: 1_000_300 });
    await server.drop(0);
    c.mono += 1000;
    report(at(2));
    assert.equal(server.got.length, 2);
  });

  it("older than the room only by this page's slow clock: the newest state goes again, newer", async () => {
    const c = clocks(1_000_000); // a page from the browser's cache: rendered long ago
    const server = slowServer();
    const report = reporter(server.post, c.order, { time: () => c.mono });
    report(at(3));
    c.mono += 40; // the answer's round trip
    // The room's newest (5,000,000) is from before this report was sent, by the server's clock.
    await server.reply(0, 200, { saved: false, order: 5_000_000, now: 5_060_000, older: "…" });
    c.mono += 300;
    report(at(3));
    assert.equal(server.got.length, 2);
    assert.ok(server.got[1].order > 5_000_000);
    // Another tab moved while this report was on its way: it stays older, and is not resent.
    c.mono += 300;
    report(at(4));
    c.mono += 40;
    const during = server.got[2].order + 20;
    await server.reply(0, 200, { saved: true, order: server.got[1].order, now: during - 30 });
    await server.reply(0, 200, { saved: false, order: during, now: during + 10, older: "…" });
    c.mono += 300;
    report(at(4));
    assert.equal(server.got.length, 3);
  });
});

// The run stream's repair without a browser (static/lockviz/run/runstream.js): it resumes from the
// last seq it has, drops duplicates, and reads a gap back before drawing past it. A fake
// WebSocket plays the server's side; timers run when the test says so.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Sequence, openStream } from "../../../static/lockviz/run/runstream.js";

const ev = (seq, kind = "note") => ({ seq, t_ms: seq, actor: "lab", kind });
const one = (seq, kind) => ({ type: "event", event: ev(seq, kind) });
const many = (...seqs) => ({ type: "events", frames: seqs.map((s) => ({ type: "event", event: ev(s) })) });
const status = (value) => ({ type: "status", status: value, position: null });

/** The page's window as the stream uses it: sockets it opened, timers it set. */
function fakeWindow() {
  const env = { sockets: [], timers: [] };
  class FakeSocket {
    static OPEN = 1;
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.readyState = 0;
      env.sockets.push(this);
    }
    open() {
      this.readyState = 1;
      this.onopen();
    }
    receive(message) {
      this.onmessage({ data: JSON.stringify(message) });
    }
    send(text) {
      this.sent.push(JSON.parse(text));
    }
    close(code = 1006) {
      if (this.readyState === 3) return;
      this.readyState = 3;
      this.onclose({ code });
    }
  }
  Object.assign(env, {
    WebSocket: FakeSocket,
    location: { protocol: "https:", host: "lockviz.example" },
    setTimeout: (fn, ms) => env.timers.push({ fn, ms }) - 1,
    clearTimeout: (id) => {
      if (env.timers[id]) env.timers[id].fn = null;
    },
    /** Run the timers set so far (those they set wait for the next call). */
    tick() {
      const due = env.timers.splice(0);
      env.timers.push(...due.map(() => ({ fn: null })));
      for (const t of due) if (t.fn) t.fn();
    },
  });
  Object.defineProperty(env, "socket", { get: () => env.sockets[env.sockets.length - 1] }); // the latest
  return env;
}

function listen(env, after = 0) {
  const heard = { events: [], statuses: [], done: [], errors: [] };
  const stream = openStream(
    "/ws/runs/r1/",
    after,
    {
      onEvent: (e) => heard.events.push(e.seq),
      onStatus: (s) => heard.statuses.push(s),
      onDone: (s) => heard.done.push(s),
      onError: (m) => heard.errors.push(m),
    },
    env,
  );
  env.socket.open();
  return { stream, heard };
}

/** A stream that had events 1 and 2 when the server said the run had ended (`value`), its
 * last event missing, half a second on: it has asked for what follows 2. */
function endedShort(value) {
  const env = fakeWindow();
  const { heard } = listen(env);
  env.socket.receive(many(1, 2));
  env.socket.receive(status(value));
  env.tick(); // half a second of grace
  return { env, heard };
}

describe("the order of events", () => {
  it("takes the next seq, skips what it has, and stops at a gap", () => {
    const order = new Sequence(3);
    assert.equal(order.take(ev(2)), "old");
    assert.equal(order.take(ev(3)), "old");
    assert.equal(order.take(ev(5)), "gap");
    assert.equal(order.lastSeq, 3);
    assert.equal(order.take(ev(4)), "next");
    assert.equal(order.take(ev(5)), "next");
    assert.equal(order.lastSeq, 5);
    assert.equal(order.take(null), "old");
  });
});

describe("the stream", () => {
  it("connects after the last seq the page has, over wss on https", () => {
    const env = fakeWindow();
    listen(env, 7);
    assert.equal(env.socket.url, "wss://lockviz.example/ws/runs/r1/?after=7");
  });

  it("draws each event once, in order, whatever arrives twice", () => {
    const env = fakeWindow();
    const { heard, stream } = listen(env);
    env.socket.receive(one(1));
    env.socket.receive(many(2, 3));
    env.socket.receive(many(2, 3, 4)); // a resend overlapping what it has
    env.socket.receive(one(1));
    assert.deepEqual(heard.events, [1, 2, 3, 4]);
    assert.equal(stream.lastSeq, 4);
    assert.deepEqual(env.socket.sent, []);
  });

  it("reads a gap back: asks to resume after the last seq it has, draws nothing past the gap", () => {
    const env = fakeWindow();
    const { heard } = listen(env);
    env.socket.receive(one(1));
    env.socket.receive(many(2, 4, 5)); // 3 was lost on the way
    assert.deepEqual(heard.events, [1, 2]);
    assert.deepEqual(env.socket.sent, [{ type: "resume", after: 2 }]);
    env.socket.receive(one(5)); // still missing 3: no second request for the same gap
    assert.deepEqual(env.socket.sent, [{ type: "resume", after: 2 }]);
    env.socket.receive(many(3, 4, 5)); // what the server reads back from the database
    assert.deepEqual(heard.events, [1, 2, 3, 4, 5]);
  });

  it("reconnects after a drop from the last seq it has, and goes on without a repeat", () => {
    const env = fakeWindow();
    const { heard } = listen(env);
    env.socket.receive(many(1, 2, 3));
    env.socket.close();
    assert.deepEqual(heard.statuses, ["reconnecting"]);
    env.tick();
    assert.equal(env.sockets.length, 2);
    assert.equal(env.socket.url, "wss://lockviz.example/ws/runs/r1/?after=3");
    env.socket.open();
    env.socket.receive(many(3, 4));
    assert.deepEqual(heard.events, [1, 2, 3, 4]);
  });

  it("reconnects when a resume goes unanswered", () => {
    const env = fakeWindow();
    listen(env);
    env.socket.receive(many(1, 3));
    env.tick(); // 5 s without the missing event
    env.tick(); // the reconnect's delay
    assert.equal(env.sockets.length, 2);
    assert.equal(env.socket.url, "wss://lockviz.example/ws/runs/r1/?after=1");
  });

  it("is done once the run has ended and the server says so, and then only", () => {
    const env = fakeWindow();
    const { heard } = listen(env);
    env.socket.receive(status("running"));
    env.socket.receive(many(1, 2));
    env.socket.receive(one(3, "run_finished"));
    assert.deepEqual(heard.done, []);
    env.socket.receive(status("finished"));
    assert.deepEqual(heard.done, ["finished"]);
    assert.equal(env.socket.readyState, 3); // closed, and no reconnect
    env.tick();
    assert.equal(env.sockets.length, 1);
  });

  it("asks for a lost last event when the server says the run ended, and draws it when it comes", () => {
    const { env, heard } = endedShort("finished"); // run_finished (3) never came
    assert.deepEqual(env.socket.sent, [{ type: "resume", after: 2 }]);
    env.socket.receive(one(3, "run_finished"));
    assert.deepEqual(heard.events, [1, 2, 3]);
    assert.deepEqual(heard.done, ["finished"]);
  });

  it("waits for a finished run's last event past an unanswered resume: the reconnect brings it", () => {
    const { env, heard } = endedShort("finished"); // its run_finished is stored with the status
    const [unanswered, giveUp] = env.timers.filter((t) => t.fn);
    assert.equal(unanswered.ms, 5000);
    assert.ok(giveUp.ms > unanswered.ms + 1000, "it gives up only after the reconnect has had its turn");
    unanswered.fn(); // no answer in 5 s: the socket is closed
    const reconnect = env.timers.filter((t) => t.fn).at(-1);
    reconnect.fn(); // (before giving up)
    assert.equal(env.socket.url, "wss://lockviz.example/ws/runs/r1/?after=2");
    env.socket.open();
    env.socket.receive(status("finished"));
    assert.deepEqual(heard.done, []);
    env.socket.receive(one(3, "run_finished"));
    assert.deepEqual(heard.events, [1, 2, 3]);
    assert.deepEqual(heard.done, ["finished"]);
  });

  it("gives up on a failed run's missing last event after a second and a half", () => {
    const { env, heard } = endedShort("failed"); // a run the lab failed to start may have no run_failed
    assert.equal(env.timers.filter((t) => t.fn).at(-1).ms, 1000);
    env.tick();
    assert.deepEqual(heard.done, ["failed"]);
  });

  it("says so when the run does not exist, and does not retry", () => {
    const env = fakeWindow();
    const { heard } = listen(env);
    env.socket.close(4404);
    env.tick();
    assert.deepEqual(heard.errors, ["this run does not exist"]);
    assert.equal(env.sockets.length, 1);
  });

  it("says why a stream past its address's share was refused, and tries again after 30 s", () => {
    const env = fakeWindow();
    const { heard } = listen(env);
    env.socket.receive({ type: "error", message: "This address has 400 live streams open" });
    env.socket.close(4429);
    assert.deepEqual(heard.errors, ["This address has 400 live streams open"]);
    assert.equal(env.timers.at(-1).ms, 30_000); // not the usual quarter of a second
    env.tick();
    assert.equal(env.sockets.length, 2);
  });
});

// One run's events over its WebSocket (/ws/runs/<id>/, see lockviz/consumers.py): connect with
// ?after=<last seq we have>, receive {type: "event"|"status"|"error"} and {type: "events",
// frames: [event messages]} (live events that arrived together, or a page of stored ones),
// reconnect after a drop with the newest seq so nothing is lost or drawn twice. A seq that skips one (a message lost on the way)
// is not drawn: the stream asks {type: "resume", after: lastSeq}, the server resends what follows
// from the database, in order, and the stream goes on from there (no answer within 5 s: it
// reconnects with ?after=lastSeq instead). A run that ends without its last event having arrived
// asks the same way.
//
// openStream(wsPath, after, {onEvent(ev), onStatus(status, position), onDone(status),
// onError(message)}) -> {close(), lastSeq}. onDone fires once the run has ended AND the server
// says so: the status message comes after the verdict is stored, so a verdict fetched then is
// complete. `env` (WebSocket, location, setTimeout, clearTimeout) is the page's window unless a
// test gives its own (tests/js/run/runstream.test.mjs).

import { isFinal } from "./extent.js";
import { dataOf, socketUrl } from "../sockets.js";

/** The statuses of a run that has ended, one way or another. */
export const SETTLED = new Set(["finished", "failed", "interrupted", "cancelled"]);
/** The statuses of a run that played to its end (its last event is run_finished or run_failed);
 * it takes no more clicks. */
export const ENDED = new Set(["finished", "failed"]);
const SHARE_RETRY_MS = 30_000; // a stream refused for its address's share (4429) waits this long
const FINISHED_WAIT_MS = 12_000; // a finished run's last event: past a resume's 5 s and a reconnect

/** The order of a run's events, whatever order they arrive in: each seq once, none skipped. */
export class Sequence {
  constructor(after) {
    this.lastSeq = after || 0;
  }

  /** "old": seen already (a duplicate, a resend): skip it. "gap": a seq before it is missing:
   * ask for what follows lastSeq. "next": the one that follows: draw it. */
  take(ev) {
    if (!ev || ev.seq <= this.lastSeq) return "old";
    if (ev.seq > this.lastSeq + 1) return "gap";
    this.lastSeq = ev.seq;
    return "next";
  }
}

export function openStream(wsPath, after, handlers, env = globalThis) {
  const on = Object.assign({ onEvent() {}, onStatus() {}, onDone() {}, onError() {} }, handlers);
  const order = new Sequence(after);
  let ended = false; // run_finished / run_failed received
  let settled = false; // status finished / failed received
  let closed = false;
  let retryMs = 250;
  let socket = null;
  let graceTimer = null;
  let resumedFrom = -1; // the lastSeq we asked the server to resume after, while it answers
  let resumeTimer = null;

  function done(status) {
    if (closed) return;
    closed = true;
    if (socket) socket.close();
    on.onDone(status);
  }

  function resume() {
    const lastSeq = order.lastSeq;
    if (resumedFrom === lastSeq || !socket || socket.readyState !== env.WebSocket.OPEN) return;
    resumedFrom = lastSeq;
    socket.send(JSON.stringify({ type: "resume", after: lastSeq }));
    env.clearTimeout(resumeTimer);
    resumeTimer = env.setTimeout(() => {
      if (order.lastSeq === lastSeq && !closed) socket.close();
    }, 5000);
  }

  // One event, in order; false at a gap (the resume resends it and what follows).
  function take(ev) {
    const verdict = order.take(ev);
    if (verdict === "old") return true;
    if (verdict === "gap") {
      resume();
      return false;
    }
    resumedFrom = -1;
    on.onEvent(ev);
    if (isFinal(ev)) ended = ev.kind;
    return true;
  }

  function receive(message) {
    const data = dataOf(message);
    if (!data) return;
    if (data.type === "event") {
      if (!take(data.event)) return;
    } else if (data.type === "events") {
      for (const frame of data.frames || []) if (!take(frame.event)) break;
    } else if (data.type === "status") {
      on.onStatus(data.status, data.position);
      if (SETTLED.has(data.status)) settled = data.status;
    } else if (data.type === "error") {
      on.onError(data.message);
    }
    // A finished run's socket sends its status first, then the stored events; a run the lab
    // failed to start may end without a run_failed event, so do not wait for ever. If the last
    // events are what went missing, the resume brings them. A finished run's run_finished is
    // stored with its status, so it is waited for longer: a resume the server refused or did
    // not answer is followed by a reconnect, whose catch-up brings it (given up after 1.5 s, a
    // loaded machine left a lesson without its end, for ever).
    if (ended && settled) done(settled);
    else if (settled && !graceTimer) {
      graceTimer = env.setTimeout(() => {
        resume();
        graceTimer = env.setTimeout(() => done(settled), settled === "finished" ? FINISHED_WAIT_MS : 1000);
      }, 500);
    }
  }

  function connect() {
    socket = new env.WebSocket(socketUrl(`${wsPath}?after=${order.lastSeq}`, env.location));
    socket.onopen = () => {
      retryMs = 250;
      resumedFrom = -1;
    };
    socket.onmessage = receive;
    socket.onclose = (event) => {
      env.clearTimeout(resumeTimer);
      if (closed) return;
      if (event.code === 4404) {
        closed = true;
        on.onError("this run does not exist");
        return;
      }
      on.onStatus("reconnecting", null);
      // 4429: this address has its share of streams open (the error said so): not every second.
      env.setTimeout(connect, event.code === 4429 ? SHARE_RETRY_MS : retryMs);
      retryMs = Math.min(retryMs * 2, 4000);
    };
  }

  connect();
  return {
    close() {
      closed = true;
      if (socket) socket.close();
    },
    get lastSeq() {
      return order.lastSeq;
    },
  };
}

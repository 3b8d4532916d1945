// One run's events over its WebSocket (/ws/runs/<id>/, see lockviz/consumers.py), the protocol
// run.js speaks: connect with ?after=<last seq we have>, receive {type: "event"|"status"|"error"},
// reconnect after a drop with the newest seq so nothing is lost or drawn twice.
//
// window.lockvizStream(wsPath, after, {onEvent(ev), onStatus(status, position), onDone(status),
// onError(message)}) -> {close()}. onDone fires once the run has ended AND the server says so:
// the status message comes after the verdict is stored, so a verdict fetched then is complete.
(function () {
  "use strict";

  function lockvizStream(wsPath, after, handlers) {
    const on = Object.assign({ onEvent() {}, onStatus() {}, onDone() {}, onError() {} }, handlers);
    let lastSeq = after || 0;
    let ended = false; // run_finished / run_failed received
    let settled = false; // status finished / failed received
    let closed = false;
    let retryMs = 250;
    let socket = null;
    let graceTimer = null;

    function done(status) {
      if (closed) return;
      closed = true;
      if (socket) socket.close();
      on.onDone(status);
    }

    function connect() {
      const proto = location.protocol === "https:" ? "wss" : "ws";
      socket = new WebSocket(`${proto}://${location.host}${wsPath}?after=${lastSeq}`);
      socket.onopen = () => { retryMs = 250; };
      socket.onmessage = (message) => {
        let data;
        try { data = JSON.parse(message.data); } catch (e) { return; }
        if (data.type === "event") {
          const ev = data.event;
          if (!ev || ev.seq <= lastSeq) return;
          lastSeq = ev.seq;
          on.onEvent(ev);
          if (ev.kind === "run_finished" || ev.kind === "run_failed") ended = ev.kind;
        } else if (data.type === "status") {
          on.onStatus(data.status, data.position);
          if (["finished", "failed", "interrupted", "cancelled"].includes(data.status)) settled = data.status;
        } else if (data.type === "error") {
          on.onError(data.message);
        }
        // A finished run's socket sends its status first, then the stored events; a run the
        // lab failed to start may end without a run_failed event, so do not wait for ever.
        if (ended && settled) done(settled);
        else if (settled && !graceTimer) graceTimer = setTimeout(() => done(settled), 1500);
      };
      socket.onclose = (event) => {
        if (closed) return;
        if (event.code === 4404) { closed = true; on.onError("this run does not exist"); return; }
        on.onStatus("reconnecting", null);
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 4000);
      };
    }

    connect();
    return { close() { closed = true; if (socket) socket.close(); }, get lastSeq() { return lastSeq; } };
  }

  window.lockvizStream = lockvizStream;
})();

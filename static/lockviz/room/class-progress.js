// A room's class view (templates/lockviz/_class_progress.html, on the room page): the table
// comes from the server (lockviz/exercises/classview.py, through htmx on the section); this
// module listens on the room's stream for the presenter's `progress` frames (a member answered
// a checkpoint, finished a lesson, an attempt was judged) and `present` ones (a member came or
// went), and asks htmx for the table again, at most once per `gapMs`, so a class answering at
// once costs a request, not thirty.

import { dataOf, socketUrl } from "../sockets.js";

/** Follow `box`'s class (its room's stream at `wsPath`): `progress` on `box` when it moved. */
export function followProgress(box, wsPath, gapMs = 400, env = globalThis) {
  let due = null;
  let socket = null;
  const moved = () => {
    if (due !== null) return;
    due = env.setTimeout(() => {
      due = null;
      box.dispatchEvent(new Event("progress"));
    }, gapMs);
  };
  const connect = () => {
    socket = new env.WebSocket(socketUrl(wsPath, env.location));
    socket.onmessage = (message) => {
      const data = dataOf(message);
      if (data && (data.type === "progress" || data.type === "present")) moved();
    };
    // 4429: this address has its share of streams open: not every second.
    socket.onclose = (event) => env.setTimeout(connect, event.code === 4429 ? 30_000 : 1000);
  };
  connect();
  return { moved, socket: () => socket };
}

// The event handlers by kind: which function draws each kind of event (docs/events.md), which
// fields of it the diagram reads, and what the handlers remember of the run drawn so far.
//
// READS is checked by tests/js/diagram/handlers.test.mjs twice: against the events' JSON Schema
// (static/lockviz/events.schema.json: every kind here exists there, every field read is declared
// there), and against the drawing (a run drawn from events stripped down to these fields is drawn
// exactly as from the whole events).

import { beliefEnd, granted, paused, resumed, serverEnd } from "./bars.js";
import { request, reply, woken } from "./calls.js";
import { clockJumped, clockRate } from "./clocks.js";
import { crashed, link, restarted } from "./faults.js";
import { replicated, role, session, suspected, voted } from "./groups.js";
import { acquireFailed, ending, note, runFailed, runFinished, runStarted, step } from "./marks.js";

/** kind → handler(diagram, event). */
export const HANDLERS = {
  run_started: runStarted,
  run_finished: runFinished,
  run_failed: runFailed,
  ending,
  step,
  request,
  reply,
  woken,
  granted,
  released: beliefEnd,
  lost: beliefEnd,
  acquire_failed: acquireFailed,
  note,
  paused,
  resumed,
  crashed,
  clock_jumped: clockJumped,
  clock_rate: clockRate,
  link,
  expired: serverEnd,
  deleted: serverEnd,
  restarted,
  role,
  voted,
  suspected,
  replicated,
  session,
};

// An actor nobody announced still gets a column: a client for these kinds, a lock node for those.
export const CLIENT_KINDS = new Set([
  "request",
  "reply",
  "granted",
  "released",
  "lost",
  "crashed",
  "paused",
  "resumed",
  "acquire_failed",
  "extended",
  "woken",
  "session",
]);
export const SERVER_KINDS = new Set(["expired", "deleted", "clock_jumped", "role", "voted", "suspected", "replicated"]);
// The kinds whose `holder` names a client (a lease's, or a write's the storage asks about).
export const HOLDER_KINDS = new Set(["expired", "deleted", "request"]);

/** What the diagram reads of every event, whatever its kind. */
export const ENVELOPE = ["seq", "t_ms", "actor", "kind", "said"];
/** What it reads of the narrator's words (`said`). */
export const SAID = ["label", "short", "text", "mark", "tone", "round", "fold"];

/** kind → the fields beyond ENVELOPE that the diagram reads of an event of that kind. */
export const READS = {
  run_started: ["backend", "clients", "nodes", "storage", "replicas", "duration_ms", "roles"],
  run_finished: ["verdict"],
  run_failed: [],
  ending: [],
  step: ["index", "say"],
  request: ["to", "call", "op", "watch", "holder"],
  reply: ["from", "call", "op", "ok", "accepted", "error"],
  woken: [],
  granted: ["node"],
  released: ["ok"],
  lost: [],
  acquire_failed: [],
  note: [],
  paused: [],
  resumed: [],
  crashed: [],
  clock_jumped: ["offset_ms"],
  clock_rate: ["rate"],
  link: ["node", "peers", "mode", "ms", "jitter_ms"],
  expired: ["holder"],
  deleted: ["holder"],
  restarted: ["persistence"],
  extended: [],
  role: ["role"],
  voted: [],
  suspected: ["objective", "cleared"],
  replicated: [],
  session: ["state"],
};

/** What the handlers remember of the run drawn so far (a new drawing starts empty). */
export function freshState() {
  return {
    calls: new Map(), // "actor#call" → a request's arrow, until and after its reply (calls.js)
    early: new Map(), // replies that overtook their request in seq order
    watches: new Map(), // client → the server it watches through
    lastAt: new Map(), // server → the y of its latest reply or notification
    writes: new Map(), // seq of a write's request or reply → its mark at the storage
    leases: [], // bars.js
    beliefs: [],
    pauses: [],
    pendingEnds: [], // server ends that came before their grant
    crashed: new Map(), // client → where its lifeline ends
    links: [], // faults.js
    linkNotes: [],
    downs: [],
    leads: [], // groups.js: who is primary or leader, when
    headerWords: new Map(), // lifeline → its clock's changes (clocks.js)
    headerRoles: new Map(), // lifeline → its parts in its group, from each role event (groups.js)
    now: 0, // the latest run time drawn
    finished: false,
    finishEvent: null,
  };
}

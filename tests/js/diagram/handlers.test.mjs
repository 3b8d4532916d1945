// The diagram's event handlers without a browser (static/lockviz/diagram/handlers/): each kind
// is one the events' JSON Schema declares, reads only the fields its table says (and the schema
// declares), and draws what the legend names. Runs are recorded runs as a page receives them
// (fixtures/narrated-runs.json), drawn in a fake DOM (fakedom.mjs).
//
// Over ~300 lines (a test module's 400): every kind of event is checked here against the
// schema, the legend and the recorded runs, as the handlers' table that declares them is one.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import { LockDiagram } from "../../../static/lockviz/diagram/diagram.js";
import {
  CLIENT_KINDS,
  ENVELOPE,
  HANDLERS,
  HOLDER_KINDS,
  READS,
  SAID,
  SERVER_KINDS,
} from "../../../static/lockviz/diagram/handlers/index.js";
import { fakeDocument, serialize } from "../fakedom.mjs";

const here = (path) => new URL(path, import.meta.url);
const RUNS = JSON.parse(readFileSync(here("../fixtures/narrated-runs.json"), "utf8"));
const SCHEMA = JSON.parse(readFileSync(here("../../../static/lockviz/events.schema.json"), "utf8"));
const TEMPLATES = here("../../../templates/lockviz/_legend.html");

function draw(run, events = run.events) {
  const { svg } = fakeDocument();
  const diagram = new LockDiagram(svg, { clients: run.scenario.clients, backend: run.scenario.backend });
  diagram.addAll(events);
  return { diagram, svg };
}

/** seq → the legend keys (data-mark) of what was drawn for that event. */
function marks(svg) {
  const found = new Map();
  const walk = (node) => {
    const seq = node.getAttribute && node.getAttribute("data-seq");
    const mark = node.getAttribute && node.getAttribute("data-mark");
    if (seq != null && mark) {
      if (!found.has(Number(seq))) found.set(Number(seq), new Set());
      found.get(Number(seq)).add(mark);
    }
    node.childNodes.forEach(walk);
  };
  walk(svg);
  return found;
}

// ---- the events' JSON Schema ---------------------------------------------------------------

function resolve(schema, node) {
  while (node && node.$ref)
    node = node.$ref
      .split("/")
      .slice(1)
      .reduce((at, key) => at[key], schema);
  return node;
}

/** Every property of a definition, through $ref, allOf, anyOf and oneOf. */
function properties(schema, node, into = {}) {
  node = resolve(schema, node);
  if (!node) return into;
  Object.assign(into, node.properties || {});
  for (const key of ["allOf", "anyOf", "oneOf"]) for (const part of node[key] || []) properties(schema, part, into);
  return into;
}

/** kind → its declared fields (a Set), from a discriminated union on `kind`. */
function kindsOf(schema) {
  const union = schema.oneOf || schema.anyOf || [];
  const models = union.length
    ? union
    : Object.values(schema.discriminator?.mapping || {}).map((ref) => ({ $ref: ref }));
  const kinds = new Map();
  for (const model of models) {
    const fields = properties(schema, model);
    const kind = fields.kind && (fields.kind.const ?? (fields.kind.enum || [])[0]);
    if (kind) kinds.set(kind, new Set([...(kinds.get(kind) || []), ...Object.keys(fields)]));
  }
  return kinds;
}

/** The fields the schema declares for `said` (the narrator's words) of a kind, or null. */
function saidOf(schema, model) {
  const said = properties(schema, model).said;
  if (!said) return null;
  const words = properties(schema, said);
  return new Set(Object.keys(words));
}

describe("the handlers against the events' schema", () => {
  const kinds = kindsOf(SCHEMA);
  const handled = new Set([...Object.keys(HANDLERS), ...CLIENT_KINDS, ...SERVER_KINDS, ...HOLDER_KINDS]);

  it("is a discriminated union on kind", () => {
    assert.ok(kinds.size > 20, `only ${kinds.size} kinds in static/lockviz/events.schema.json`);
  });

  it("declares every kind the diagram handles", () => {
    const missing = [...handled].filter((k) => !kinds.has(k));
    assert.deepEqual(missing, []);
  });

  it("declares every field a handler reads", () => {
    const undeclared = [];
    for (const kind of handled) {
      for (const field of [...ENVELOPE, ...(READS[kind] || [])]) {
        if (!kinds.get(kind)?.has(field)) undeclared.push(`${kind}.${field}`);
      }
    }
    assert.deepEqual(undeclared, []);
  });

  it("declares the narrator's words the handlers read", () => {
    const union = SCHEMA.oneOf || SCHEMA.anyOf || [];
    const said = union.map((model) => saidOf(SCHEMA, model)).find(Boolean);
    assert.ok(said, "no kind declares `said`");
    assert.deepEqual(
      SAID.filter((w) => !said.has(w)),
      [],
    );
  });

  it("has a table entry for every kind it handles, and none for a kind it does not", () => {
    assert.deepEqual(
      [...handled].filter((k) => !(k in READS)),
      [],
    );
    assert.deepEqual(
      Object.keys(READS).filter((k) => !handled.has(k)),
      [],
    );
  });
});

// ---- the table against the drawing ---------------------------------------------------------

/** The event cut down to what the table says the diagram reads of its kind. */
function stripped(ev) {
  const keep = new Set([...ENVELOPE, ...(READS[ev.kind] || [])]);
  const out = Object.fromEntries(Object.entries(ev).filter(([k]) => keep.has(k)));
  if (ev.said) out.said = Object.fromEntries(Object.entries(ev.said).filter(([k]) => SAID.includes(k)));
  return out;
}

describe("the fields each handler reads", () => {
  for (const [name, run] of Object.entries(RUNS)) {
    it(`are all it needs to draw ${name}`, () => {
      const text = (svg) => serialize(svg, { titles: false }).replace(/lv\d+-/g, "lv-"); // its own ids
      const whole = text(draw(run).svg);
      const cut = text(draw(run, run.events.map(stripped)).svg);
      assert.ok(whole.split("\n").length > 100);
      assert.equal(cut, whole); // the tooltips (<title>) quote every field, so they differ
    });
  }
});

/** The event behind a proxy that notes each field read of it (and of its words). Its own keys
 * are the envelope's only, so the tooltip, which lists every field, reads no others. */
function watched(ev, reads) {
  const note = (key) => {
    if (typeof key !== "string") return;
    if (!reads.has(ev.kind)) reads.set(ev.kind, new Set());
    reads.get(ev.kind).add(key);
  };
  const said = ev.said && new Proxy(ev.said, { get: (t, k) => (note("said." + String(k)), t[k]) });
  return new Proxy(ev, {
    get: (t, k) => (note(k), k === "said" ? said : t[k]),
    ownKeys: (t) => Reflect.ownKeys(t).filter((k) => ENVELOPE.includes(k)),
  });
}

describe("the fields each handler reads, as it reads them", () => {
  it("are all in its kind's table", () => {
    const reads = new Map();
    for (const run of Object.values(RUNS))
      draw(
        run,
        run.events.map((ev) => watched(ev, reads)),
      );
    const undeclared = [];
    for (const [kind, fields] of reads) {
      const allowed = new Set([...ENVELOPE, ...(READS[kind] || []), ...SAID.map((w) => "said." + w)]);
      for (const field of fields) if (!allowed.has(field)) undeclared.push(`${kind}.${field}`);
    }
    assert.deepEqual(undeclared, []);
    assert.ok(reads.get("request").has("to") && reads.get("expired").has("holder"));
  });
});

// ---- what each kind draws --------------------------------------------------------------------

// kind → the legend keys its events draw (at least one of them, for each event of that kind).
const DRAWS = {
  step: ["step"],
  request: ["request", "held", "wait"],
  reply: ["reply", "reply-failed"],
  woken: ["watch"],
  granted: ["lease"],
  lost: ["lost"],
  acquire_failed: ["gave-up"],
  note: ["note"],
  paused: ["pause"],
  crashed: ["crash", "down"],
  clock_jumped: ["clock"],
  clock_rate: ["clock"],
  link: ["cut", "delay", "healed"],
  expired: ["expired"],
  deleted: ["deleted"],
  restarted: ["restarted"],
  role: ["role"],
  voted: ["vote"],
  suspected: ["suspect"],
  replicated: ["replicated"],
  session: ["session"],
  ending: ["ending"],
  run_finished: ["run-end"],
  run_failed: ["failed"],
};
// Kinds that end what others drew (a bar, a band) and draw no mark of their own.
const ENDS_ONLY = new Set(["run_started", "released", "resumed"]);

describe("each kind of event", () => {
  const seen = new Map(); // kind → how many events drew their marks
  for (const run of Object.values(RUNS)) {
    const drawn = marks(draw(run).svg);
    for (const ev of run.events) {
      if (!(ev.kind in DRAWS)) continue;
      const got = drawn.get(ev.seq) || new Set();
      if (DRAWS[ev.kind].some((m) => got.has(m))) seen.set(ev.kind, (seen.get(ev.kind) || 0) + 1);
      else seen.set(ev.kind + " (nothing drawn)", [...(seen.get(ev.kind + " (nothing drawn)") || []), ev.seq]);
    }
  }

  it("draws its mark, every time", () => {
    assert.deepEqual(
      [...seen.keys()].filter((k) => k.endsWith("(nothing drawn)")),
      [],
    );
  });

  it("that the diagram handles is drawn or ends something (run_failed: below)", () => {
    const kinds = Object.keys(HANDLERS).filter((k) => !ENDS_ONLY.has(k) && k !== "run_failed");
    assert.deepEqual(
      kinds.filter((k) => !seen.get(k)),
      [],
    );
    assert.deepEqual(
      Object.keys(HANDLERS).filter((k) => !(k in DRAWS) && !ENDS_ONLY.has(k)),
      [],
    );
  });

  it("has its marks in the legend (templates/lockviz/_legend.html)", () => {
    const legend = readFileSync(TEMPLATES, "utf8");
    const keys = new Set([...legend.matchAll(/data-key="([^"]+)"/g)].map((m) => m[1]));
    const all = new Set(Object.values(DRAWS).flat());
    assert.deepEqual(
      [...all].filter((k) => !keys.has(k)),
      [],
    );
  });

  it("draws a ZooKeeper session's state as its own class, not as the client's lost mark", () => {
    // Told LOST, a session was drawn `session-mark lost`: `.lost` found it beside the client's
    // own lost mark ("lost: session expired").
    const run = RUNS["storage-hole-sequencer"];
    const svg = draw(run).svg;
    const found = [];
    const walk = (node) => {
      const classes = ((node.getAttribute && node.getAttribute("class")) || "").split(/\s+/);
      if (classes.includes("lost")) found.push(node.getAttribute("data-mark"));
      if (classes.includes("session-lost")) found.push("session LOST");
      node.childNodes.forEach(walk);
    };
    walk(svg);
    const lost = run.events.filter((ev) => ev.kind === "lost").length;
    const sessions = run.events.filter((ev) => ev.kind === "session" && ev.state === "LOST").length;
    assert.ok(lost > 0 && sessions > 0);
    assert.deepEqual(found.sort(), [...Array(lost).fill("lost"), ...Array(sessions).fill("session LOST")].sort());
  });
});

describe("a request into a blackholed link", () => {
  // Alice's link to the storage is cut (seq 6, a blackhole: bytes held); her write (seq 8)
  // times out (seq 9); the link heals (seq 12) and what it held goes on; a later write (20)
  // is delivered at once.
  const retry = JSON.parse(readFileSync(here("../../browser/data/runs/storage-retry-duplicate.json"), "utf8"));
  const { diagram, svg } = draw(retry);
  const storageX = diagram.layout.x("storage");
  const groups = (cls, seq) => {
    const found = [];
    const walk = (n) => {
      const c = (n.getAttribute && n.getAttribute("class")) || "";
      if (c.split(" ").includes(cls) && String(n.getAttribute("data-seq")) === String(seq)) found.push(n);
      n.childNodes.forEach(walk);
    };
    walk(svg);
    return found;
  };
  const lines = (g) => g.childNodes.filter((n) => n.tagName === "line");

  it("is drawn held: it stops short of the server, with a bar for an end", () => {
    const [held] = groups("request", 8);
    assert.ok(held, "no request drawn for seq 8");
    assert.match(held.getAttribute("class"), /\bheld\b/);
    assert.equal(held.getAttribute("data-mark"), "held");
    const [arrow] = lines(held);
    assert.ok(Number(arrow.getAttribute("x2")) < storageX - 20); // never at the storage
    assert.match(arrow.getAttribute("marker-end"), /held/);
    // its timeout leaves from where it was held, not from the storage
    const [timeout] = lines(groups("reply", 9)[0]);
    assert.ok(Number(timeout.getAttribute("x1")) < storageX - 20);
    // and nothing is drawn at the storage for it when it times out: the storage has not seen it
    assert.equal(groups("write-accepted", 9).length, 0);
  });

  it("goes on to the server when the link heals, and later requests are delivered", () => {
    const [held] = groups("request", 8);
    const on = lines(held).find((l) => /released/.test(l.getAttribute("class")));
    assert.ok(on, "the held request is not carried on at the heal");
    assert.ok(Math.abs(Number(on.getAttribute("x2")) - storageX) < 6);
    assert.equal(Number(on.getAttribute("y1")), diagram.layout.y(1601.8));
    const [later] = groups("request", 20);
    assert.doesNotMatch(later.getAttribute("class"), /held/);
    assert.ok(Math.abs(Number(lines(later)[0].getAttribute("x2")) - storageX) < 6);
  });
});

describe("what the handlers compute", () => {
  const run = RUNS["gc-pause-unfenced"];

  it("ends a lease where the server ended it, and the belief where the client let go", () => {
    const { diagram } = draw(run);
    const { leases, beliefs } = diagram.state;
    const alice = leases.find((l) => l.client === "alice");
    assert.equal(alice.by, "server"); // her lease expired while she was paused
    const expired = run.events.find((e) => e.kind === "expired" && e.holder === "alice");
    assert.equal(alice.item.ends[0].seq, expired.seq);
    const belief = beliefs.find((b) => b.lease === alice);
    assert.ok(belief.item.ends[0].t > alice.item.ends[0].t); // she believed past its end: the gap
  });

  it("draws the gap between a lease's end and the belief's, and the damage where it lands", () => {
    const { svg } = draw(run);
    const text = serialize(svg);
    assert.match(text, /data-mark="gap"/);
    assert.match(text, /class="damaged-write" data-mark="damaged-write"/);
  });

  it("folds a client's refused rounds into one band, and opens it on request", () => {
    const folding = RUNS["pg-ghost-holder-timeout"];
    const { diagram, svg } = draw(folding);
    const [fold] = diagram.rounds.folds;
    assert.ok(fold && fold.rounds.length >= 2);
    assert.match(serialize(svg), /class="[^"]*folded/);
    diagram.toggleFold(fold.id);
    assert.equal(fold.band.getAttribute("class"), "fold-band open");
    assert.equal(fold.labelGroup.getAttribute("aria-expanded"), "true");
  });

  it("draws a failed run's end across the diagram, closing what was open", () => {
    const events = run.events.filter((e) => e.kind !== "run_finished");
    const last = events[events.length - 1];
    const failed = { seq: last.seq + 1, t_ms: last.t_ms + 5, actor: "lab", kind: "run_failed", error: "watchdog" };
    failed.said = { label: "the run failed", text: "The run failed: watchdog." };
    const { diagram, svg } = draw(run, events.concat([failed]));
    assert.deepEqual([...(marks(svg).get(failed.seq) || [])].sort(), ["failed", "run-end"]);
    assert.ok(diagram.state.finished);
    assert.ok(diagram.state.beliefs.every((b) => b.item.ends.length > 0));
  });

  it("skips a kind it does not know, and an event it cannot draw does not stop the drawing", () => {
    const odd = [
      { seq: 1, t_ms: 0, actor: "lab", kind: "run_started", clients: ["alice"], nodes: ["redis-1"] },
      { seq: 2, t_ms: 1, actor: "alice", kind: "something_new", whatever: 1 },
      { seq: 3, t_ms: 2, actor: "alice", kind: "link", node: "redis-1", mode: "blackhole" },
      { seq: 4, t_ms: 3, actor: "alice", kind: "paused", said: { label: 7 } },
      { seq: 5, t_ms: 4, actor: "alice", kind: "lost" },
    ];
    const warned = [];
    const warn = console.warn;
    console.warn = (...args) => warned.push(args);
    try {
      const { diagram, svg } = draw({ scenario: {}, events: odd });
      assert.equal(diagram.events.length, 5);
      assert.ok(marks(svg).get(5).has("lost"));
      assert.ok(!marks(svg).has(2));
    } finally {
      console.warn = warn;
    }
  });

  it("draws a seq once, however often it arrives", () => {
    const { diagram } = draw(run);
    assert.equal(diagram.add(run.events[3]), false);
    assert.equal(diagram.addAll(run.events), 0);
  });
});

// ---- a session without a schedule ----------------------------------------------------------

describe("a diagram drawn for a guess at the run's length (free play: fitToEnd)", () => {
  const run = RUNS["gc-pause-unfenced"];
  const end = run.events.at(-1).t_ms;
  const options = { clients: run.scenario.clients, backend: run.scenario.backend, durationMs: 60_000, pxPerMs: 0.2 };

  it("ends at the run's end, whether drawn at once or event by event", () => {
    assert.ok(end < 20_000, "a run much shorter than the guess");
    const guessed = new LockDiagram(fakeDocument().svg, options);
    guessed.addAll(run.events);
    assert.ok(guessed.height >= 0.2 * 60_000, "without it: the guessed length, empty below the end");
    const whole = new LockDiagram(fakeDocument().svg, { ...options, fitToEnd: true });
    whole.addAll(run.events);
    const live = new LockDiagram(fakeDocument().svg, { ...options, fitToEnd: true });
    for (const ev of run.events) live.add(ev);
    for (const fitted of [whole, live]) {
      assert.ok(fitted.height >= 0.2 * end, "the whole run is in it");
      assert.ok(fitted.height <= 0.2 * (end + 600) + 400, `no more than the end's margin: ${fitted.height}`);
    }
  });
});

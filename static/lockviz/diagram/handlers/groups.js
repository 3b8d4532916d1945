// A group of servers (a Redis primary with its replicas and Sentinels, a ZooKeeper ensemble, an
// etcd cluster): who is primary, or leader, when: a band along that server's lifeline from the
// moment it has the part (run_started's `roles` for the first) until another takes it; a
// Sentinel's suspicion and its vote; a lock key reaching a replica, a dashed arrow from the
// primary; and a ZooKeeper client's session as its library tells it (SUSPENDED, RECONNECTED,
// LOST). Words come with each event (`said`), as everywhere.

import { el, said, tOf } from "../svg.js";

const LEADS = new Set(["primary", "leader"]);

/** The parts the servers had as the run started: the primary's (or leader's) band from 0. */
export function startRoles(d, ev) {
  for (const [node, part] of Object.entries(ev.roles || {})) {
    if (LEADS.has(part) && d.layout.cols.has(node)) leadBand(d, node, 0, part, ev);
  }
}

export function role(d, ev) {
  const { layout: L, pen, moments, state } = d;
  if (!L.cols.has(ev.actor)) return;
  const t = tOf(ev),
    x = L.x(ev.actor),
    y = L.y(t),
    s = L.scale;
  const leads = LEADS.has(ev.role);
  const parts = state.headerRoles.get(ev.actor) || [];
  state.headerRoles.set(ev.actor, parts.concat([{ seq: ev.seq, role: ev.role }]));
  for (const band of state.leads) {
    if (moments.closed(band.item)) continue;
    if (band.node === ev.actor ? !leads : leads) moments.end(band.item, ev.seq, t);
  }
  const g = pen.group("marks", ev, "role-change" + (leads ? " leads" : ""), null, "role");
  const star = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => {
    const r = (i % 2 ? 3.5 : 8) * s,
      a = (Math.PI / 5) * i - Math.PI / 2;
    return `${(x + r * Math.cos(a)).toFixed(1)},${(y + r * Math.sin(a)).toFixed(1)}`;
  });
  el("polygon", { class: "role-star", points: star.join(" ") }, g);
  pen.obstacle(x - 9 * s, y - 9 * s, x + 9 * s, y + 9 * s);
  pen.label(g, said(ev).label, x + 14 * s, y + 5 * s, "start", leads ? "role-label leads" : "role-label");
  if (leads) leadBand(d, ev.actor, t, ev.role, ev);
}

// The band along a lifeline while its server leads, from t0 to the next change (on the
// lifeline itself, above a cut link's strips); `ev` is the event that gave it the part
// (run_started for the first).
function leadBand(d, node, t0, part, ev) {
  const { layout: L, pen, moments, state } = d;
  const x = L.x(node);
  const g = pen.group("marks", ev, "lead-band " + part, null, "lead");
  const line = el("line", { class: "band-line", x1: x, x2: x }, g);
  const band = { node, t0, g, line };
  band.item = moments.dynamic({ update: (it) => spanBand(d, it, band), node: g });
  state.leads.push(band);
}

function spanBand(d, item, band) {
  const { layout: L, moments } = d;
  const end = moments.endAt(item);
  const t1 = end ? end.t : Math.max(band.t0, moments.tNow);
  item.settled = !!end && d.limit === Infinity;
  const sig = `${t1}`;
  if (item.drawn === sig) return;
  item.drawn = sig;
  const y0 = L.y(band.t0),
    y1 = L.y(t1);
  band.line.setAttribute("y1", y0);
  band.line.setAttribute("y2", y1);
  d.surface.extend(band.g, y0, y1);
}

/** A Sentinel's vote for the Sentinel that should lead the failover. */
export function voted(d, ev) {
  mark(d, ev, "vote", "vote-mark", (g, x, y, s) => {
    el("circle", { class: "vote-ring", cx: x, cy: y, r: 6 * s }, g);
    el(
      "path",
      { class: "vote-tick", d: `M${x - 3 * s},${y} L${x - 1 * s},${y + 3 * s} L${x + 4 * s},${y - 3 * s}` },
      g,
    );
  });
}

/** A Sentinel thinks a node is down (SDOWN), or a quorum agrees (ODOWN), or no more. */
export function suspected(d, ev) {
  const cls = "suspect-mark" + (ev.objective ? " objective" : "") + (ev.cleared ? " cleared" : "");
  mark(d, ev, "suspect", cls, (g, x, y, s) => {
    el("rect", { x: x - 5 * s, y: y - 5 * s, width: 10 * s, height: 10 * s, class: "suspect-box" }, g);
  });
}

/** A ZooKeeper client's session, as its library tells it: `session-lost`, not `lost`, which is
 * the client's own lost mark. */
export function session(d, ev) {
  if (!d.layout.cols.has(ev.actor)) return;
  const cls = "session-mark session-" + String(ev.state || "").toLowerCase();
  mark(d, ev, "session", cls, (g, x, y, s) => {
    el("circle", { class: "session-ring", cx: x, cy: y, r: 5 * s }, g);
  });
}

function mark(d, ev, key, cls, shape) {
  const { layout: L, pen } = d;
  if (!L.cols.has(ev.actor)) return;
  const x = L.x(ev.actor),
    y = L.y(tOf(ev)),
    s = L.scale;
  const g = pen.group("marks", ev, cls, null, key);
  shape(g, x, y, s);
  pen.obstacle(x - 7 * s, y - 7 * s, x + 7 * s, y + 7 * s);
  pen.label(g, said(ev).label, x + 10 * s, y + 15 * s, "start", "group-label");
}

/** A lock key reached a replica: a dashed arrow from the primary of the moment. */
export function replicated(d, ev) {
  const { layout: L, pen, moments, state } = d;
  if (!L.cols.has(ev.actor)) return;
  const lead = state.leads.filter((b) => !moments.closed(b.item) && b.node !== ev.actor).pop();
  const x2 = L.x(ev.actor),
    y = L.y(tOf(ev)),
    s = L.scale;
  const g = pen.group("arrows", ev, "replicated", null, "replicated");
  if (lead) {
    const x1 = L.x(lead.node),
      dir = x2 >= x1 ? 1 : -1;
    const line = el(
      "line",
      { class: "arrow", x1: x1 + dir * 2, y1: y, x2: x2 - dir * 3, y2: y, "marker-end": pen.url("rep") },
      g,
    );
    pen.segment(line, x1 + dir * 2, y, x2 - dir * 3, y);
  } else el("circle", { class: "replicated-dot", cx: x2, cy: y, r: 4 * s }, g);
  pen.label(g, said(ev).label, x2 + 10 * s, y - 5 * s, "start", "group-label");
}

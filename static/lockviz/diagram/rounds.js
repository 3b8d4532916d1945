// Rounds of an acquire, folded. The narrator numbers each acquire's rounds (`said.round`); from
// the second refused round on, they fold into one band ("rounds 2–23 refused") that a click
// opens. A folded round's words leave room for others (the tooltips keep them).

import { el, said, tOf } from "./svg.js";

export class Rounds {
  /** `diagram`: its layout, pen, placer, the moment shown and which folds are open. */
  constructor(diagram) {
    this.d = diagram;
    this.byClient = new Map(); // client → {list: Map(n → round), fold, last}
    this.folds = [];
    this.foldOfSeq = new Map(); // seq → its round, once that round is folded
  }

  /** The round an event belongs to (made on first sight), or null. */
  of(ev) {
    const r = ev && said(ev).round;
    const who = ev && (ev.kind === "expired" || ev.kind === "deleted" ? ev.holder : ev.actor);
    if (!r || !who) return null;
    let rounds = this.byClient.get(who);
    if (!rounds || r < rounds.last) {
      // a new acquire numbers its rounds from 1 again
      rounds = { list: new Map(), fold: null, last: 0 };
      this.byClient.set(who, rounds);
    }
    rounds.last = r;
    let round = rounds.list.get(r);
    if (!round) {
      round = { n: r, groups: [], labels: [], segs: [], t0: tOf(ev), t1: tOf(ev), closeSeq: null, fold: null };
      rounds.list.set(r, round);
    }
    round.t1 = Math.max(round.t1, tOf(ev));
    return round;
  }

  /** The client's acquire ended (granted, or it gave up): its next one counts from 1. */
  forget(client) {
    this.byClient.delete(client);
  }

  /** A group drawn for `ev` goes with its round, folded if its round is. */
  adoptGroup(g, ev) {
    const round = this.of(ev);
    if (!round) return;
    round.groups.push(g);
    if (round.fold) {
      this.foldOfSeq.set(ev.seq, round);
      const folded = !(round.closeSeq > this.d.limit);
      g.classList.toggle("folded", folded);
      g.classList.toggle("unfolded", folded && this.d.openFolds.has(round.fold.id));
    }
  }

  /** A label of the event being drawn: true if its round is folded already (it takes no room). */
  adoptLabel(label) {
    const round = this.of(this.d.drawing);
    if (round) round.labels.push(label);
    if (!round || round.closeSeq == null) return false;
    label.node.setAttribute("display", "none");
    round.labelsGone = true;
    return true;
  }

  /** An arrow of the event being drawn: true if its round is folded already. */
  adoptSegment(seg) {
    const round = this.of(this.d.drawing);
    if (round) round.segs.push(seg);
    return !!round && round.closeSeq != null;
  }

  /** The event that settles a refused round (said.fold): fold that round and say so on the band. */
  fold(ev) {
    const words = said(ev).fold;
    if (!words) return;
    const rounds = this.byClient.get(ev.actor);
    const round = rounds && rounds.list.get(said(ev).round);
    if (!round) return;
    let fold = rounds.fold;
    if (!fold) {
      fold = rounds.fold = { id: `${ev.actor}-${ev.seq}`, client: ev.actor, rounds: [], versions: [], state: null };
      this.band(fold, ev, round);
      this.folds.push(fold);
    }
    fold.rounds.push(round);
    fold.lastClose = ev.seq;
    round.closeSeq = ev.seq;
    round.fold = fold;
    fold.versions.push({ seq: ev.seq, text: words, t1: round.t1 });
    for (const g of round.groups) this.foldOfSeq.set(Number(g.getAttribute("data-seq")), round);
    this.state(fold, true);
  }

  band(fold, ev, round) {
    const { layout: L, pen } = this.d;
    const s = L.scale;
    const x = L.x(fold.client);
    const nodes = Array.from(L.cols.values()).filter((c) => c.role === "node");
    const far = nodes.length ? Math.max(...nodes.map((c) => c.x)) : x + L.colW;
    const at = { seq: ev.seq, kind: "fold", actor: ev.actor };
    const g = pen.group("bg", at, "fold-band", said(ev).text, "fold");
    fold.rect = el("rect", { class: "band", x: x + 4 * s, width: far - x - 8 * s, rx: 6 * s }, g);
    fold.band = g;
    fold.y0 = L.y(round.t0) - 4 * s;
    fold.rect.setAttribute("y", fold.y0);
    const lg = pen.group("labels", at, "fold-label", "Show or hide the folded rounds");
    lg.setAttribute("role", "button");
    lg.setAttribute("tabindex", "0");
    lg.setAttribute("aria-expanded", "false");
    const act = () => this.d.toggleFold(fold.id);
    lg.addEventListener("click", act);
    lg.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        act();
      }
    });
    fold.labelGroup = lg;
    fold.label = pen.label(lg, "\u25b8 " + said(ev).fold, x + 12 * s, fold.y0 + 16 * s, "start", "fold-text");
  }

  /** Every fold as it is at the moment shown (a fold in a chunk left out: when it is shown). */
  show() {
    for (const fold of this.folds) {
      if (this.d.surface.later(fold.band.parentNode, "dirtyFolds", fold)) continue;
      this.state(fold);
    }
  }

  /** Open a folded band, or close it. */
  toggle(id) {
    const fold = this.folds.find((f) => f.id === id);
    if (fold) this.state(fold, true);
  }

  // Folded, unfolded, or not folded yet at the moment shown (a replay inside round 5).
  state(fold, force) {
    const d = this.d;
    let version = null;
    for (const v of fold.versions) if (!(v.seq > d.limit)) version = v;
    const open = d.openFolds.has(fold.id);
    const sig = `${version ? version.seq : "-"}|${open}|${d.limit >= fold.lastClose}`;
    if (!force && fold.sig === sig) return;
    fold.sig = sig;
    fold.state = version ? sig : null;
    for (const round of fold.rounds) {
      const folded = !(round.closeSeq > d.limit);
      for (const g of round.groups) {
        g.classList.toggle("folded", folded);
        g.classList.toggle("unfolded", folded && open);
      }
      if (!round.labelsGone) {
        // their words leave room for others; the tooltips keep them
        for (const lab of round.labels) {
          d.placer.unplace(lab);
          lab.node.setAttribute("display", "none");
        }
        for (const seg of round.segs) d.space.remove(seg);
        round.labelsGone = true;
      }
    }
    if (!version) return;
    const y1 = d.layout.y(version.t1) + 6 * d.layout.scale;
    fold.rect.setAttribute("height", Math.max(20 * d.layout.scale, y1 - fold.y0));
    d.surface.extend(fold.band, fold.y0, y1);
    const text = (open ? "\u25be " : "\u25b8 ") + version.text;
    const lab = fold.label && fold.label.label;
    if (lab && lab.lines[0] !== text) {
      lab.lines = [text];
      lab.shown = null;
      d.placer.place(lab);
    }
    fold.labelGroup.setAttribute("aria-expanded", String(open));
    fold.band.classList.toggle("open", open);
  }
}

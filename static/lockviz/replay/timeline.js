// A stored run on the replay's time line (pages/replay.js): the cursor is an index into the
// events, the clock a run time. Pure: events in, indices out (tests/js/pages.test.mjs).
//
// t_ms is stamped where each event happened, so seq order and time order can differ by a
// fraction of a millisecond; the replay clock uses the latest time reached so far (`reach`).

import { isFinal, replayDurationMs } from "../run/extent.js";

export class Timeline {
  constructor(events, scenario) {
    this.events = events;
    this.n = events.length;
    this.reach = [];
    events.reduce((m, e) => {
      const t = Math.max(m, Number.isFinite(e.t_ms) ? e.t_ms : 0);
      this.reach.push(t);
      return t;
    }, 0);
    this.endT = this.n ? this.reach[this.n - 1] : 0;
    this.narrations = events.map((e, i) => (e.kind === "step" ? i : -1)).filter((i) => i >= 0);
    this.indexOf = new Map(events.map((e, i) => [String(e.seq), i]));
    this.finishAt = events.findIndex(isFinal);
    this.durationMs = replayDurationMs(scenario, this.endT);
  }

  /** The last event the clock has reached (0 before the first). */
  atClock(clock) {
    let lo = 0,
      hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.reach[mid] <= clock) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The step (a narration) the event at `index` belongs to, as an index; undefined before the first. */
  toldAt(index) {
    return this.narrations.filter((i) => i <= index).pop();
  }

  /** The narration before `index` (dir < 0) or after it; undefined if none. */
  narration(index, dir) {
    return dir < 0 ? this.narrations.filter((i) => i < index).pop() : this.narrations.find((i) => i > index);
  }

  /** A link's fragment (without "#"): null for none, else {index} or {error}: a bad link opens
   * the start and says why. */
  fromHash(raw) {
    const { events, n } = this;
    if (!raw) return null;
    let shown = raw;
    try {
      shown = decodeURIComponent(raw);
    } catch {
      /* keep it as typed */
    }
    if (shown.length > 40) shown = shown.slice(0, 39) + "…";
    const m = /^seq=(\d{1,9})$/.exec(raw);
    if (!m) {
      const example = n ? events[Math.min(n - 1, 16)].seq : 1;
      return {
        error: `The link ends in “#${shown}”, which is not a moment of this replay (links end in #seq= and an event number, like #seq=${example}). Showing the start.`,
      };
    }
    const i = this.indexOf.get(String(Number(m[1])));
    if (i == null) {
      const range = n ? `#${events[0].seq} to #${events[n - 1].seq}` : "none";
      return { error: `This run has no event #${m[1]} (its events are ${range}). Showing the start.` };
    }
    return { index: i };
  }
}

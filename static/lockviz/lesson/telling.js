// A lesson's telling as positions in its run's events (pages/lesson.js moves through them and
// shows them). A step with an `ask` is a checkpoint: the telling stops ON that step's own `step`
// event, before anything it caused is drawn, until it is answered; answering goes to the end of
// the step's outcome (the last event before the next step). Pure: events, steps and answers in,
// positions out (tests/js/pages.test.mjs).

import { isFinal } from "../run/extent.js";

export class Telling {
  /** `steps`: the scenario's; `answers`: {step index: {choice} | {skipped: true}}, kept by the page. */
  constructor(steps, answers) {
    this.steps = steps;
    this.answers = answers;
    this.events = [];
  }

  last() {
    return this.events.length - 1;
  }

  /** The checkpoint's question at position p, or null. */
  askAt(p) {
    const ev = this.events[p];
    const step = ev && ev.kind === "step" ? this.steps[ev.index] : null;
    return step ? step.ask || null : null;
  }

  /** A step the lesson says something about (a narration or a question). */
  narrated(p) {
    const ev = this.events[p];
    const step = this.steps[ev.index];
    return ev.kind === "step" && !!(step && (step.say || step.ask));
  }

  /** A checkpoint not answered yet: the telling waits there. */
  blocked(p) {
    return !!this.askAt(p) && !this.answers[this.events[p].index];
  }

  /** The step event at or before p (that passes `test`, if given), or -1. */
  stepBefore(p, test) {
    for (let q = p; q >= 0; q--) if (this.events[q].kind === "step" && (!test || test.call(this, q))) return q;
    return -1;
  }

  /** The last event the step at p caused: everything up to the next step (or the end of the run). */
  outcomeEnd(p) {
    const events = this.events;
    let q = p + 1;
    while (q < events.length && events[q].kind !== "step" && !isFinal(events[q])) q++;
    return q - 1;
  }

  /** The last checkpoint's step (-1: the lesson asks nothing). */
  lastAsk() {
    for (let q = this.events.length - 1; q >= 0; q--) if (this.askAt(q)) return q;
    return -1;
  }

  /** Whether the outcome may be told (the description, the take-away) at position p: past the
   * last checkpoint's outcome, answered, or at the end if the lesson asks nothing. */
  pastLastAsk(p, atEnd) {
    const last = this.lastAsk();
    return last < 0 ? atEnd : !!this.answers[this.events[last].index] && p >= this.outcomeEnd(last);
  }

  /** Where "next narration" goes from p: the next narrated step's outcome (or the step itself if
   * it is an unanswered checkpoint), else the end. */
  nextSay(p) {
    for (let q = p + 1; q <= this.last(); q++) {
      if (this.narrated(q)) return this.blocked(q) ? q : Math.max(q, this.outcomeEnd(q));
    }
    return this.last();
  }

  /** Where "previous narration" goes from p: the outcome of the narrated step before the current one. */
  prevSay(p) {
    const current = this.stepBefore(p, this.narrated);
    const previous = current > 0 ? this.stepBefore(current - 1, this.narrated) : -1;
    return previous < 0 ? 0 : this.outcomeEnd(previous);
  }

  /** What the class sees of the telling at p (a presenter's room): the narration of the step it
   * is in; at a checkpoint its question, since the narration would give the answer. */
  classSees(p) {
    for (let q = Math.min(p, this.events.length - 1); q >= 0; q--) {
      const ev = this.events[q];
      const step = ev && ev.kind === "step" ? this.steps[ev.index] : null;
      if (!step || !(step.say || step.ask)) continue;
      return step.ask && q === p ? step.ask.question : step.say || "";
    }
    return "";
  }
}

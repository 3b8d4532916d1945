// A lesson's answers (pages/lesson.js): which checkpoints this learner answered, kept per run
// in sessionStorage (going back shows a checkpoint again with the answer given), and the
// answers themselves, which come from the server only once the learner answers (or the class's
// poll on it is revealed): the page holds none before (lockviz/views/lessons.py:answer). Each
// answer fetched is filled into the scenario's step, where the telling reads it.

import { csrfToken } from "../page-data.js";

export class Answers {
  /** `steps`: the scenario's (filled in as answers arrive); `url`: where to ask for one. */
  constructor(run, url, steps) {
    Object.assign(this, { run, url, steps, key: "lockviz-answers-" + run, asking: new Set() });
    this.given = this.load(); // {step index: {choice} | {skipped: true}}
  }

  /** Whether step `index`'s answer is on the page already. */
  known(index) {
    const step = this.steps[index];
    return !!(step && step.ask && step.ask.answer);
  }

  /** Record `given` for checkpoint `index` once its answer is here: resolves true then, false if
   * it is on its way already; rejects with the server's refusal. */
  give(index, given) {
    if (this.asking.has(index)) return Promise.resolve(false);
    this.asking.add(index);
    return this.learn(index, given)
      .then(() => {
        this.given[index] = given;
        this.save();
        return true;
      })
      .finally(() => this.asking.delete(index));
  }

  /** The answers given before in this tab but not on this page (another session): fetched. */
  refetch() {
    const missing = Object.keys(this.given)
      .map(Number)
      .filter((i) => !this.known(i));
    return Promise.all(missing.map((i) => this.learn(i).catch(() => {})));
  }

  /** Fetch checkpoint `index`'s answer; `given` (the learner's {choice} or {skipped}) is kept on
   * the server as their progress, even when the answer is on the page already. */
  learn(index, given) {
    if (this.known(index) && !given) return Promise.resolve();
    const form = new FormData();
    form.append("run", this.run);
    form.append("step", String(index));
    if (given && given.choice) form.append("choice", given.choice);
    if (given && given.skipped) form.append("skipped", "1");
    const headers = { "X-CSRFToken": csrfToken() };
    return fetch(this.url, { method: "POST", body: form, headers }).then(async (r) => {
      if (!r.ok) throw new Error(await r.text());
      const got = await r.json();
      const step = this.steps[got.step];
      step.ask = Object.assign({}, step.ask, { answer: got.answer, explain: got.explain });
      if (got.say) step.say = got.say;
    });
  }

  load() {
    try {
      return JSON.parse(sessionStorage.getItem(this.key)) || {};
    } catch {
      return {};
    }
  }

  save() {
    try {
      sessionStorage.setItem(this.key, JSON.stringify(this.given));
    } catch {
      /* private mode */
    }
  }
}

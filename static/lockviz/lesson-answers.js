// A lesson's checkpoint answers come from the server once the learner answers (or the class's
// poll on it is revealed): the page holds none before (lockviz/views/lessons.py:answer). Each
// answer fetched is filled into the scenario's step, where the telling reads it.

const csrf = () => {
  const found = (document.body.getAttribute("hx-headers") || "").match(/"X-CSRFToken": "([^"]*)"/);
  return found ? found[1] : "";
};

/** Whether step `index`'s answer is on the page already. */
export function known(steps, index) {
  const step = steps[index];
  return !!(step && step.ask && step.ask.answer);
}

/** Fetch step `index`'s answer, explanation and narration from `url` and fill them in. */
export function learn(url, run, steps, index) {
  if (known(steps, index)) return Promise.resolve();
  const form = new FormData();
  form.append("run", run);
  form.append("step", String(index));
  return fetch(url, { method: "POST", body: form, headers: { "X-CSRFToken": csrf() } }).then(async (r) => {
    if (!r.ok) throw new Error(await r.text());
    const got = await r.json();
    const step = steps[got.step];
    step.ask = Object.assign({}, step.ask, { answer: got.answer, explain: got.explain });
    if (got.say) step.say = got.say;
  });
}

// A verdict that comes back still pending after its run has ended is fetched again (issue 34).
import assert from "node:assert/strict";
import { test } from "node:test";

import { untilJudged } from "../../../static/lockviz/run/verdict-fetch.js";

function slot() {
  const listeners = [];
  return {
    pending: true,
    addEventListener(name, fn) {
      if (name === "htmx:afterSwap") listeners.push(fn);
    },
    querySelector(selector) {
      return selector === ".pending" && this.pending ? {} : null;
    },
    swapped() {
      listeners.forEach((fn) => fn());
    },
  };
}

function clock() {
  const due = [];
  return { due, setTimeout: (fn, ms) => due.push([fn, ms]) };
}

test("a pending verdict is fetched again a second later, a judged one is not", () => {
  const el = slot();
  const env = clock();
  let asked = 0;
  untilJudged(el, () => (asked += 1), 3, env);
  el.swapped();
  assert.equal(env.due.length, 1);
  assert.equal(env.due[0][1], 1000);
  env.due.shift()[0]();
  assert.equal(asked, 1);
  el.pending = false;
  el.swapped();
  assert.equal(env.due.length, 0);
});

test("it gives up after its tries", () => {
  const el = slot();
  const env = clock();
  untilJudged(el, () => {}, 2, env);
  for (let i = 0; i < 5; i += 1) el.swapped();
  assert.equal(env.due.length, 2);
});

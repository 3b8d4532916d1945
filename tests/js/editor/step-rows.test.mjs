// The step row editor (static/lockviz/editor/step-rows.js), shared by What if…? and New scenario: a
// row shows the fields its verb takes, and a row moved to another place takes that place's
// field names and ids, so the form stays numbered 0..n-1 as the server reads it.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { fit, place, reindexed, removable, renamed, takes } from "../../../static/lockviz/editor/step-rows.js";

// The verbs as the page data hands them (lockviz/teaching/steprows.py: verb_fields).
const VERBS = { acquire: ["timeout_ms"], pause: ["ms"], partition: ["mode", "nodes"], crash: [] };
const FIELDS = ["ms", "value", "nodes", "timeout_ms", "mode"];

// A row as templates/lockviz/_step_row.html draws it, with just what the module reads.
function row(verb, index = 0) {
  const attrs = new Map([["aria-describedby", `editor-row-${index}-problem`]]);
  const labels = FIELDS.map((field) => ({ dataset: { field }, hidden: false }));
  const named = [`at_ms_${index}`, `do_${index}`, ...FIELDS.map((f) => `${f}_${index}`)].map((name) => ({ name }));
  const problem = { id: `editor-row-${index}-problem` };
  const legend = { textContent: `step ${index + 1}` };
  const select = { value: verb };
  return {
    id: `editor-row-${index}`,
    dataset: { index: String(index) },
    labels,
    named,
    problem,
    legend,
    select,
    getAttribute: (name) => attrs.get(name) || null,
    setAttribute: (name, value) => attrs.set(name, value),
    querySelector(selector) {
      return { "select[name^=do_]": select, legend }[selector];
    },
    querySelectorAll(selector) {
      return { "label[data-field]": labels, "[name]": named, "[id]": [problem] }[selector];
    },
  };
}

const shown = (r) => r.labels.filter((l) => !l.hidden).map((l) => l.dataset.field);

describe("a step row", () => {
  it("shows the fields its verb takes, and no other", () => {
    const r = row("pause");
    fit(r, VERBS);
    assert.deepEqual(shown(r), ["ms"]);
    r.select.value = "partition";
    fit(r, VERBS);
    assert.deepEqual(shown(r), ["nodes", "mode"]);
  });

  it("shows only when, what and who without a verb, or with a verb it does not know", () => {
    for (const verb of ["", "crash", "fly"]) {
      const r = row(verb);
      fit(r, VERBS);
      assert.deepEqual(shown(r), [], verb);
    }
    assert.deepEqual(takes(undefined, "pause"), []);
  });

  it("takes its new place's field names, ids and number when it moves", () => {
    const r = row("pause", 3);
    place(r, 1, (i) => `step ${i + 1}`);
    assert.deepEqual(
      r.named.map((n) => n.name),
      ["at_ms_1", "do_1", "ms_1", "value_1", "nodes_1", "timeout_ms_1", "mode_1"],
    );
    assert.equal(r.id, "editor-row-1");
    assert.equal(r.problem.id, "editor-row-1-problem");
    assert.equal(r.getAttribute("aria-describedby"), "editor-row-1-problem");
    assert.equal(r.dataset.index, "1");
    assert.equal(r.legend.textContent, "step 2");
  });

  it("renames only a row's own fields: the template row's and numbered ones", () => {
    assert.equal(renamed("check_lease___i__", 4), "check_lease_4");
    assert.equal(renamed("timeout_ms_12", 0), "timeout_ms_0");
    assert.equal(renamed("csrfmiddlewaretoken", 2), "csrfmiddlewaretoken");
    assert.equal(reindexed("fork-row-__i__-problem", 7), "fork-row-7-problem");
    assert.equal(reindexed("editor-rows", 7), "editor-rows");
  });
});

// A row with a remove button, in a list of rows; what got the focus is `focused`.
function removableRows(count, focused) {
  const list = [];
  for (let i = 0; i < count; i++) {
    const input = { focus: () => focused.push(`row ${i}`) };
    const button = { hidden: true, clicks: [], addEventListener: (type, fn) => button.clicks.push(fn) };
    list.push({
      button,
      get nextElementSibling() {
        return list[list.indexOf(this) + 1] || null;
      },
      remove() {
        list.splice(list.indexOf(this), 1);
      },
      querySelector: (selector) => ({ ".remove-step": button, input })[selector],
    });
  }
  return list;
}

describe("a step row's remove button", () => {
  it("removes its row, numbers the rest again, and moves the focus to the next row", () => {
    const focused = [];
    const said = [];
    globalThis.document = { getElementById: (id) => ({ focus: () => focused.push(id) }) };
    const list = removableRows(3, focused);
    const [first, , last] = list;
    for (const r of list) {
      removable(r, {
        renumber: () => said.push(`renumber ${list.length}`),
        instead: "add",
        removed: () => said.push("removed"),
      });
    }
    assert.equal(first.button.hidden, false);
    first.button.clicks[0]();
    assert.deepEqual(focused, ["row 1"]);
    assert.deepEqual(said, ["renumber 2", "removed"]);
    last.button.clicks[0]();
    assert.deepEqual(focused, ["row 1", "add"], "the last row gone: the add button");
    assert.equal(list.length, 1);
    delete globalThis.document;
  });
});

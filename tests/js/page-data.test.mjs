// The page's data as the entry modules read it (static/lockviz/page-data.js): the #page-data
// element's JSON, or an empty object when the page has none or it does not parse; and the CSRF
// token base.html hands htmx, which a script's own POST sends too.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { csrfToken, pageData } from "../../static/lockviz/page-data.js";

const doc = (text) => ({
  getElementById: (id) => (id === "page-data" && text !== null ? { textContent: text } : null),
});

describe("the page's data", () => {
  it("is the #page-data element's JSON", () => {
    const data = { run: "r1", status: "running", ws: "/ws/runs/r1/", room: null, room_ws: null, presenting: null };
    assert.deepEqual(pageData(doc(JSON.stringify(data))), data);
  });

  it("is empty on a page without it, or with something that is not an object", () => {
    assert.deepEqual(pageData(doc(null)), {});
    assert.deepEqual(pageData(doc("not json")), {});
    assert.deepEqual(pageData(doc("null")), {});
  });
});

describe("the page's CSRF token", () => {
  const withHeaders = (value) => ({ body: { getAttribute: (name) => (name === "hx-headers" ? value : null) } });

  it("is the one base.html puts in the body's hx-headers", () => {
    assert.equal(csrfToken(withHeaders('{"X-CSRFToken": "abc123"}')), "abc123");
  });

  it("is empty on a page without one", () => {
    assert.equal(csrfToken(withHeaders(null)), "");
    assert.equal(csrfToken(withHeaders("{}")), "");
  });
});

// What the page hands its script: one JSON element, #page-data, built by
// lockviz/views/pagedata.py (page_data) and rendered in templates/base.html. Common keys: run,
// status, ws (the run's stream path), room, room_ws (the room's stream path), presenting
// ({room, ws} for the room this browser presents, or null); the rest are the page's own.
// base.html also hands htmx the CSRF token (the body's hx-headers), which a script's own POST
// sends too (csrfToken).

/** The page's data (an empty object on a page without it). */
export function pageData(doc = document) {
  const node = doc.getElementById("page-data");
  try {
    return (node && JSON.parse(node.textContent)) || {};
  } catch {
    return {};
  }
}

/** The page's CSRF token, from the body's hx-headers ("" on a page without one). */
export function csrfToken(doc = document) {
  const found = (doc.body.getAttribute("hx-headers") || "").match(/"X-CSRFToken": "([^"]*)"/);
  return found ? found[1] : "";
}

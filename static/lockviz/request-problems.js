// When an htmx request fails, say so in a sentence: never nothing.
//
// htmx swaps in only 2xx answers; for a 403, a 502 or a dropped connection it fires an event
// and leaves the page as it was, so a Start button or a fault click looked dead. This module
// listens for those events on the body and shows a sentence in the page's alert region
// (#request-problem, role="alert", in base.html). The words are the server's: one <p> per kind
// of failure in the <template id="request-problem-words"> beside the region; this module picks
// one and fills in the status.
//
// Where lockviz itself answers with words and a refusal status (a partial marked with an
// X-Fault header), those words are swapped in where the request aimed, as for a 2xx: the
// page's own sentence wins over the general one. The alert clears when the next request starts.

// Which sentence a status gets: the data-when of a <p> in the words template.
function kindOf(status) {
  if (status === 403) return "forbidden";
  if (status === 404 || status === 410) return "missing";
  if (status === 413) return "too-large";
  if (status === 429) return "too-many";
  if (status >= 400 && status < 500) return "refused";
  if (status === 502 || status === 503 || status === 504) return "away";
  return "broken";
}

function show(kind, status) {
  const region = document.getElementById("request-problem");
  const words = document.getElementById("request-problem-words");
  if (!region || !words) return;
  const sentence = words.content.querySelector(`[data-when="${kind}"]`);
  if (!sentence) return;
  const shown = sentence.cloneNode(true);
  const slot = shown.querySelector("[data-status]");
  if (slot) slot.textContent = status;
  const dismiss = words.content.querySelector("[data-dismiss]");
  region.replaceChildren(shown);
  if (dismiss) {
    const button = dismiss.cloneNode(true);
    button.addEventListener("click", clear);
    shown.append(" ", button);
  }
}

function clear() {
  const region = document.getElementById("request-problem");
  if (region) region.replaceChildren();
}

function statusOf(xhr) {
  return xhr.statusText ? `${xhr.status} ${xhr.statusText}` : String(xhr.status);
}

/** Listen for failed htmx requests on the page's body (site.js calls it once). */
export function watchRequests() {
  const body = document.body;
  body.addEventListener("htmx:beforeRequest", clear);
  body.addEventListener("htmx:beforeSwap", (event) => {
    const { xhr } = event.detail;
    if (event.detail.isError && xhr && xhr.getResponseHeader("X-Fault")) {
      event.detail.shouldSwap = true; // lockviz's own words for this refusal: show them
      event.detail.isError = false;
    }
  });
  body.addEventListener("htmx:responseError", (event) => {
    const { xhr } = event.detail;
    show(kindOf(xhr.status), statusOf(xhr));
  });
  body.addEventListener("htmx:sendError", () => show("unreachable", ""));
  body.addEventListener("htmx:timeout", () => show("slow", ""));
}

// What this page shows, for a presenter's room: the room bar (room/bar.js) tells the class, a few
// times a second at most, what is on the presenter's screen. Each page's entry module says how to
// read it (tell), so the room needs to know nothing about the pages.

let page = null;

/** `source.showing()`: {view: "run"|"lesson"|"replay", run, at, title, …} or null;
 * `source.checkpoint()` (a lesson): {run, step} while a checkpoint's question is on screen;
 * `source.revealed(run, step)` (a lesson): the class's poll on that checkpoint was revealed (it
 * may return a promise, resolved once the page has moved to the outcome). */
export function tell(source) {
  page = source;
}

export function showing() {
  return page ? page.showing() : null;
}

export function checkpoint() {
  return page && page.checkpoint ? page.checkpoint() : null;
}

/** The class's poll on a checkpoint was revealed: resolves once the page has shown it. */
export function revealed(run, step) {
  return Promise.resolve(page && page.revealed ? page.revealed(run, step) : null);
}

/** The page's title without the site's name, as the class sees it. */
export function pageTitle() {
  return document.title.replace(/ · lockviz$/, "");
}

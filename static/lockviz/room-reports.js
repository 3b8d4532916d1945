// The presenter's reports to its room (room.js): what the page shows, each with its place in the
// presenter's order, so that the server keeps the newest whichever order the reports arrive in
// (lockviz/teaching/shown.py: the server runs each request in a thread of its own, and a report
// held up can arrive after a newer one). Reports go out as the page moves, without waiting for
// the one before (a request that hangs holds up nothing: it is given up after `timeout` ms); a
// report lost (no answer, or the server's error) is followed by the newest state with a fresh
// order, never by the old report again; one answered "older" is not sent again.
//
// Pure: the request, the clocks and the page's state come in; nothing here reads the DOM.

/** The page's order clock: milliseconds of the server's time, counted on from `start` (the server's
 * clock when it rendered the page, past every order the room had) by the page's monotonic clock
 * `now` (so the presenter's wall clock moving changes nothing), never below one past an order it
 * was told of (`seen`), and never behind the server's clock in an answer (`at`). */
export function orderClock(start, now = () => performance.now()) {
  const t0 = now();
  let base = Number.isSafeInteger(start) ? start : Date.now();
  let last = base - 1;
  const reading = () => base + Math.floor(now() - t0);
  return {
    next() {
      last = Math.max(reading(), last + 1);
      return last;
    },
    seen(order) {
      if (Number.isSafeInteger(order)) last = Math.max(last, order);
    },
    at(serverNow) {
      if (Number.isSafeInteger(serverNow)) base = Math.max(base, serverNow - Math.floor(now() - t0));
    },
  };
}

/** `report(state)` tells the class what the page shows: by `post(body, timeout)` (a promise of
 * the response, rejected when it was given up), only when the state changed and at most once
 * every `every` ms (longer after the newest report was lost, up to `most` ms). The answer's
 * `order` and `now` set the clock. An "older" answer (not saved) is not sent again, unless the
 * room's newest order is from before this report was sent, by the server's own clock: then this
 * page's clock was behind (a page from the browser's cache), and the newest state goes again
 * with a fresh order. */
export function reporter(
  post,
  clock,
  { every = 250, most = 8000, timeout = 5000, time = () => performance.now() } = {},
) {
  let sent = ""; // the state last sent
  let newest = null; // the order of the newest report sent
  let last = -Infinity; // when it was sent (time())
  let wait = every;
  const again = (order) => {
    if (order !== newest) return false; // a later report says more than this one would
    sent = "";
    return true;
  };
  return function report(state) {
    const t = time();
    if (!state || t - last < wait) return;
    const text = JSON.stringify(state);
    if (text === sent) return;
    const order = clock.next();
    [sent, newest, last] = [text, order, t];
    const lost = () => {
      if (again(order)) wait = Math.min(most, wait * 2);
    };
    post(JSON.stringify({ ...state, order }), timeout)
      .then(async (r) => {
        if (r.status >= 500) return lost();
        if (!r.ok) return; // refused: it would be refused again
        wait = every;
        const answer = await r.json();
        clock.at(answer.now);
        clock.seen(answer.order);
        if (!answer.saved && answer.order < answer.now - (time() - t)) again(order);
      })
      .catch(lost);
  };
}

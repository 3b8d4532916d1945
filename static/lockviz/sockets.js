// The app's WebSockets as the pages open them: an address on this page's own host (wss on an
// https page), and a message's data (null for one that is not JSON: it is ignored).

/** `path` ("/ws/runs/<id>/…") on the host of `where` (the page's location). */
export function socketUrl(path, where = location) {
  return `${where.protocol === "https:" ? "wss" : "ws"}://${where.host}${path}`;
}

export function dataOf(message) {
  try {
    return JSON.parse(message.data);
  } catch {
    return null;
  }
}

// A long run's events come in chunks: its page has the first, and ``more`` names the path of
// the next (null when there is none); each chunk names the one after it. No request reads a
// whole long run (lockviz/views/replay.py).

/** Every event, in order: `first` (the page's), then each chunk from `more` on (`get`: fetch). */
export async function allEvents(first, more, get = (url, init) => fetch(url, init)) {
  const events = Array.isArray(first) ? first.slice() : [];
  let next = more;
  while (next) {
    const answer = await get(next, { headers: { Accept: "application/json" } });
    if (!answer.ok) throw new Error(`the run's events after #${events.length} did not load (${answer.status})`);
    const chunk = await answer.json();
    for (const event of chunk.events) events.push(event);
    next = chunk.more;
  }
  return events;
}

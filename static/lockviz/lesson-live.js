// The line above a lesson's diagram that says how its live run goes (pages/lesson.js): waiting
// for the lab, running on which servers, ran at what time, or why it did not.

const serversOf = (events) => {
  const ev = events.find((e) => e.kind === "run_started");
  if (!ev || !ev.servers) return "";
  const list = Object.entries(ev.servers).map(([name, addr]) => `${name} ${addr}`);
  return " on " + list.join(", ");
};

export class LiveLine {
  /** `node`: the line (#live); `data`: the lesson's page data (created, error). */
  constructor(node, data) {
    this.node = node;
    this.data = data;
    this.height = 0;
  }

  /** The run's `status` and its `events` so far; `position` in the lab's queue, if waiting. */
  say(status, events, position) {
    const { node, data } = this;
    const n = events.length;
    const when = new Date(data.created).toLocaleTimeString("en-GB");
    let text;
    if (status === "finished") text = `Ran live${serversOf(events)} at ${when}.`;
    else if (status === "failed") {
      const ev = events.find((e) => e.kind === "run_failed");
      text = `The live run failed: ${(ev && ev.error) || data.error || "the lab stopped"}.`;
    } else if (status === "interrupted" || status === "cancelled") {
      text = `The live run was ${status}: ${data.error || "it never ended"}. Re-run it live to see the lesson.`;
    } else if (status === "queued") text = `Waiting for the lab${position ? ` (place ${position} in the queue)` : ""}…`;
    else if (status === "reconnecting") text = `Reconnecting to the live run… (${n} events so far)`;
    else text = `Running live${serversOf(events)}… (${n} event${n === 1 ? "" : "s"} so far)`;
    node.textContent = text;
    node.dataset.status = status;
    // Never shrink: "Running live on …" and "Ran live on …" wrap differently, and the diagram
    // below must not jump when the run ends.
    this.height = Math.max(this.height, node.offsetHeight);
    node.style.minHeight = this.height + "px";
  }
}

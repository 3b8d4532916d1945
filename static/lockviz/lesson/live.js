// The line above a lesson's diagram that says how its live run goes (pages/lesson.js): waiting
// for the lab, running on which servers, ran at what time, or why it did not.

const serversOf = (events) => {
  const ev = events.find((e) => e.kind === "run_started");
  if (!ev || !ev.servers) return "";
  const list = Object.entries(ev.servers).map(([name, addr]) => `${name} ${addr}`);
  return " on " + list.join(", ");
};

// The longest an address reads, for the room the line keeps from the start.
const WIDEST = "255.255.255.255:65535";

export class LiveLine {
  /** `node`: the line (#live); `data`: the lesson's page data (created, error, nodes). */
  constructor(node, data) {
    this.node = node;
    this.data = data;
    this.height = 0;
    this.reserve();
    window.addEventListener("resize", () => this.reserve());
  }

  /** Keep, from the start, the height the line will need once it names every server (each at
   * the widest address), as it runs and once it has ended: the diagram below never moves. */
  reserve() {
    const { node } = this;
    const servers = Object.fromEntries((this.data.nodes || []).concat(["storage"]).map((name) => [name, WIDEST]));
    const started = [{ kind: "run_started", servers }];
    const said = node.textContent;
    node.style.minHeight = "";
    this.height = 0;
    for (const text of [this.text("running", started, 0, 99999), this.text("finished", started)]) {
      node.textContent = text;
      this.height = Math.max(this.height, node.offsetHeight);
    }
    node.textContent = said;
    this.height = Math.max(this.height, node.offsetHeight);
    node.style.minHeight = this.height + "px";
  }

  /** The run's `status` and its `events` so far; `position` in the lab's queue, if waiting. */
  say(status, events, position) {
    const { node } = this;
    node.textContent = this.text(status, events, position);
    node.dataset.status = status;
    // Never shrink: "Running live on …" and "Ran live on …" wrap differently, and the diagram
    // below must not jump when the run ends.
    this.height = Math.max(this.height, node.offsetHeight);
    node.style.minHeight = this.height + "px";
  }

  text(status, events, position, n = events.length) {
    const { data } = this;
    const when = new Date(data.created).toLocaleTimeString("en-GB");
    if (status === "finished") return `Ran live${serversOf(events)} at ${when}.`;
    if (status === "failed") {
      const ev = events.find((e) => e.kind === "run_failed");
      return `The live run failed: ${(ev && ev.error) || data.error || "the lab stopped"}.`;
    }
    if (status === "interrupted" || status === "cancelled")
      return `The live run was ${status}: ${data.error || "it never ended"}. Re-run it live to see the lesson.`;
    if (status === "queued") return `Waiting for the lab${position ? ` (place ${position} in the queue)` : ""}…`;
    if (status === "reconnecting") return `Reconnecting to the live run… (${n} events so far)`;
    return `Running live${serversOf(events)}… (${n} event${n === 1 ? "" : "s"} so far)`;
  }
}

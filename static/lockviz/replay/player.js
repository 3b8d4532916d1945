// Playing a replay (pages/replay.js): a clock moves in proportion to the run's own time, scaled
// by the speed chosen, and the cursor follows it, frame by frame, to the end of the run (or to
// the cursor's `stop`, when the page has one and the cursor is before it: a lecture plan's
// replay from one moment to another; playing on from there goes to the end).

const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];

export class Player {
  /** `button` plays and pauses, `speed` (a <select>) says how fast; `line` is the run's Timeline;
   * `cursor`: {index, clock (read and set), go(i, options), paused(), stop (an index, or null)}. */
  constructor(button, speed, line, cursor) {
    Object.assign(this, { button, speed, line, cursor, playing: false, lastFrame: null });
    this.frame = this.frame.bind(this);
  }

  play() {
    const { line, cursor } = this;
    if (!line.n) return;
    if (cursor.index >= line.n - 1) cursor.go(0);
    const stop = cursor.stop;
    this.until = stop != null && stop >= 0 && cursor.index < stop ? stop : line.n - 1;
    this.playing = true;
    this.lastFrame = null;
    this.say("❚❚", " pause");
    requestAnimationFrame(this.frame);
  }

  pause() {
    const was = this.playing;
    this.playing = false;
    this.say("▶", " play");
    if (was) this.cursor.paused();
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  say(icon, words) {
    const span = document.createElement("span");
    span.setAttribute("aria-hidden", "true");
    span.textContent = icon;
    this.button.innerHTML = "";
    this.button.append(span, words);
  }

  frame(now) {
    if (!this.playing) return;
    const { line, cursor } = this;
    const dt = this.lastFrame == null ? 0 : Math.min(now - this.lastFrame, 250); // a hidden tab does not leap
    this.lastFrame = now;
    cursor.clock = Math.min(line.endT, cursor.clock + dt * this.rate());
    let j = cursor.index;
    while (j + 1 <= this.until && line.reach[j + 1] <= cursor.clock) j++;
    cursor.go(j, { keepClock: true });
    if (j >= this.until) {
      this.pause();
      return;
    }
    requestAnimationFrame(this.frame);
  }

  rate() {
    return Number(this.speed.value) || 1;
  }

  /** One step slower (-1) or faster (+1). */
  nudge(delta) {
    const at = SPEEDS.indexOf(this.rate());
    const next = SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, (at < 0 ? 2 : at) + delta))];
    this.speed.value = String(next);
  }
}

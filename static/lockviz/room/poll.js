// The class's question on a student's follow page (pages/follow.js): its choices, this
// student's answer (changeable until the reveal), then the answer, its explanation and how the
// class answered. A revealed question folds away once the presenter moves on — for a lesson's
// checkpoint, once they show the next step (the reveal itself takes them to the checkpoint's
// outcome); for a typed question, at any change — and one click brings it back.

import { fillBars } from "./poll-bars.js";

/** Whether the presenter, at `state` (the page holding `events`), has moved on from revealed
 * poll `p`, revealed while they were at `from` (JSON of [run, at, view]). */
export function movedOn(p, from, state, events) {
  if (!p || p.state !== "revealed" || from == null) return false;
  if (p.step == null || !p.run) return JSON.stringify([state.run, state.at, state.view]) !== from;
  if (state.run !== p.run) return true;
  const upTo = state.at == null ? Infinity : state.at;
  return events.some((e) => e.kind === "step" && e.index > p.step && e.seq <= upTo);
}

export class ClassPoll {
  /** `room`: the room's code (votes are POSTed to it). */
  constructor(room) {
    this.room = room;
    this.poll = null;
    this.foldFrom = null; // where the presenter was when it was revealed
    const box = document.getElementById("follow-poll");
    this.ui = {
      box,
      question: box.querySelector(".poll-question"),
      choices: box.querySelector(".choices"),
      note: box.querySelector(".poll-note"),
      reveal: box.querySelector(".poll-reveal"),
      again: document.getElementById("poll-again"),
      csrf: box.querySelector("#vote-form input[name=csrfmiddlewaretoken]"),
    };
    this.ui.again.addEventListener("click", () => this.fold(false));
  }

  /** A poll from the room's stream (or a vote's answer); `state`: the presenter's now. */
  show(p, state) {
    const ui = this.ui;
    const fresh = !this.poll || !p || this.poll.id !== p.id || this.poll.state !== p.state;
    if (p && this.poll && this.poll.id === p.id && p.mine === undefined)
      p = Object.assign({}, p, { mine: this.poll.mine });
    this.poll = p;
    ui.again.hidden = true;
    ui.box.hidden = !p;
    if (!p) return;
    if (fresh && p.state === "revealed") this.foldFrom = JSON.stringify([state.run, state.at, state.view]);
    ui.question.textContent = p.question;
    ui.choices.innerHTML = "";
    const open = p.state === "open";
    for (const choice of p.choices) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "choice" + (p.mine === choice ? " mine" : "");
      button.textContent = choice;
      button.disabled = !open;
      button.setAttribute("aria-pressed", String(p.mine === choice));
      button.addEventListener("click", () => this.vote(choice, state));
      ui.choices.appendChild(button);
    }
    ui.note.textContent = open
      ? p.mine
        ? "Your answer is in; you can change it until the reveal."
        : "Pick one: the class's answers stay hidden until the reveal."
      : "";
    ui.reveal.hidden = open;
    if (!open) this.revealed(p);
  }

  revealed(p) {
    const reveal = this.ui.reveal;
    reveal.querySelector(".poll-answer").textContent = p.answer ? `The answer: ${p.answer}` : "The class answered:";
    reveal.querySelector(".poll-explain").textContent = p.explain || "";
    fillBars(reveal.querySelector(".bars"), p.choices, p.counts || {}, p.answer);
  }

  vote(choice, state) {
    const form = new FormData();
    form.append("choice", choice);
    const headers = { "X-CSRFToken": this.ui.csrf ? this.ui.csrf.value : "" };
    fetch(`/rooms/${this.room}/polls/${this.poll.id}/vote`, { method: "POST", body: form, headers }).then(async (r) => {
      if (!r.ok) {
        this.ui.note.textContent = await r.text();
        return;
      }
      this.show((await r.json()).poll, state);
    });
  }

  fold(folded) {
    this.ui.box.hidden = folded;
    this.ui.again.hidden = !folded;
    this.ui.again.setAttribute("aria-expanded", String(!folded));
  }

  /** The presenter is at `state`, the page holds `events`: fold a revealed poll they left. */
  follow(state, events) {
    if (!movedOn(this.poll, this.foldFrom, state, events)) return;
    this.foldFrom = null;
    this.fold(true);
  }

  /** The room ended for this student: no question any more. */
  end() {
    this.ui.box.hidden = true;
    this.ui.again.hidden = true;
  }
}

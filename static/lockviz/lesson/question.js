// A lesson's checkpoint on screen (pages/lesson.js): the question with its choices as radio
// buttons, then — once answered or skipped — which one the real servers bore out, and why.

export class Question {
  /** `ui`: the form's elements: checkpoint (the form), question, choices, actions, pickFirst,
   * result, mark, explain. */
  constructor(ui) {
    this.ui = ui;
    this.shown = null; // the step index whose question the form holds
  }

  /** Show `ask` (step `index`'s checkpoint; null hides the form), answered as `given`. */
  show(ask, index, given) {
    const ui = this.ui;
    ui.checkpoint.hidden = !ask;
    ui.pickFirst.hidden = true;
    if (!ask) {
      this.shown = null;
      return;
    }
    if (this.shown !== index) {
      this.shown = index;
      ui.question.textContent = ask.question;
      ui.choices.textContent = "";
      ask.choices.forEach((text, i) => {
        const label = document.createElement("label");
        label.className = "choice";
        const input = document.createElement("input");
        Object.assign(input, { type: "radio", name: `ask-${index}`, value: String(i) });
        const span = document.createElement("span");
        span.className = "text";
        span.textContent = text;
        label.append(input, span);
        ui.choices.appendChild(label);
      });
    }
    const inputs = Array.from(ui.choices.querySelectorAll("input"));
    inputs.forEach((input) => {
      const i = Number(input.value);
      input.disabled = !!given;
      if (given && !given.skipped) input.checked = i === given.choice;
      input.parentElement.classList.toggle("correct", !!given && ask.choices[i] === ask.answer);
      input.parentElement.classList.toggle("picked", !!given && given.choice === i);
    });
    ui.actions.hidden = !!given;
    ui.result.hidden = !given;
    if (!given) return;
    const right = !given.skipped && ask.choices[given.choice] === ask.answer;
    ui.result.dataset.outcome = given.skipped ? "skipped" : right ? "right" : "wrong";
    ui.mark.textContent = given.skipped
      ? `➜ What the real servers did: ${ask.answer}`
      : right
        ? `✔ Right: ${ask.answer}`
        : `✖ Not quite. What the real servers did: ${ask.answer}`;
    ui.explain.textContent = ask.explain || "";
  }

  /** The choice picked (its number), or null. */
  picked() {
    const input = this.ui.choices.querySelector("input:checked");
    return input ? Number(input.value) : null;
  }

  // A key press only says what to do: moving focus into the radio group would turn the
  // learner's next arrow key into a different choice.
  prompt(byKey) {
    this.ui.pickFirst.hidden = false;
    if (byKey === true) return;
    const choices = this.ui.choices;
    const first = choices.querySelector("input:checked") || choices.querySelector("input");
    if (first) first.focus();
  }

  /** Pick choice n (0-based), by its number key. */
  pick(n) {
    const input = this.ui.choices.querySelectorAll("input")[n];
    if (!input || input.disabled) return;
    input.checked = true;
    input.focus();
    this.ui.pickFirst.hidden = true;
  }
}

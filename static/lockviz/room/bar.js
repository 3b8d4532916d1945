// The presenter's side of a room (lockviz/views/rooms.py, lockviz/consumers/rooms.py).
//
// On every page of a presenting browser (the room bar is there): say what this page shows —
// a run, a lesson at its current event, a replay at its position — so the class follows, at
// most a few times a second and only when it changed, each report with its place in the
// presenter's order (room/reports.js: the server keeps the newest); offer "Ask the class" at a
// lesson's checkpoint; show who is present and the live tally, and Reveal. On the room's own
// page, the "Ask the class" form too. What the page shows is what its entry module tells room/showing.js: the
// pages need not know about rooms.
//
// After Reveal, the presenter's own screen (the projector) shows what the class sees: the
// answer, its explanation and how the class answered, until the presenter moves on (on the
// room's page too, where a lecture plan's poll is asked and revealed); a lesson at
// that checkpoint takes the class's reveal as its own answer and goes on to the outcome, so the
// presenter never answers the lesson's prediction box.
//
// startRoomBar() does all this on a page with the room bar (site.js calls it on every page).

import { csrfToken, pageData } from "../page-data.js";
import { fillBars } from "./poll-bars.js";
import { orderClock, reporter } from "./reports.js";
import { checkpoint as checkpointHere, revealed, showing } from "./showing.js";
import { dataOf, socketUrl } from "../sockets.js";

let started = false;

export function startRoomBar() {
  const bar = document.getElementById("room-bar");
  if (!bar || started) return;
  started = true;
  const code = bar.dataset.room;
  const stream = pageData().presenting; // {room, ws, order}: the room's stream path, from the server
  const headers = { "X-CSRFToken": csrfToken() };
  const $ = (id) => document.getElementById(id);
  let poll = null; // the room's current poll, as the presenter sees it
  const clock = orderClock(stream && stream.order);
  const report = reporter(
    (body, timeout) =>
      fetch(`/rooms/${code}/show`, { method: "POST", headers, body, signal: AbortSignal.timeout(timeout) }),
    clock,
  );

  // ---- checkpoints and polls -----------------------------------------------------------

  function post(url, form) {
    return fetch(url, { method: "POST", headers, body: form }).then(async (r) => {
      if (!r.ok) throw new Error(await r.text());
      return r.json();
    });
  }

  const askButton = $("room-ask-checkpoint");
  askButton.addEventListener("click", () => {
    const here = checkpointHere();
    if (!here) return;
    const form = new FormData();
    form.append("run", here.run);
    form.append("step", String(here.step));
    post(`/rooms/${code}/polls`, form)
      .then((answer) => {
        poll = answer.poll;
        showTally(answer.tally);
      })
      .catch((e) => {
        bar.querySelector(".room-tally").textContent = e.message;
      });
  });

  const reveal = $("room-reveal");
  reveal.addEventListener("click", () => {
    // An empty multipart body is not one Django parses: send an empty form instead.
    if (poll) post(`/rooms/${code}/polls/${poll.id}/reveal`, new URLSearchParams()).then((a) => showRevealed(a.poll));
  });

  for (const askForm of [$("ask-form"), $("bar-ask-form")]) {
    if (!askForm) continue;
    askForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const said = $("ask-result") || bar.querySelector(".room-tally");
      post(askForm.action, new FormData(askForm))
        .then((answer) => {
          poll = answer.poll;
          said.textContent = "asked";
          askForm.reset();
          const open = askForm.closest("details");
          if (open) open.open = false;
          showTally(answer.tally, true);
        })
        .catch((e) => {
          said.textContent = e.message;
        });
    });
  }
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.classList || !form.classList.contains("reveal-form")) return;
    event.preventDefault();
    post(form.action, new FormData(form)).then((a) => showRevealed(a.poll));
  });

  // ---- the reveal, on the presenter's screen too -----------------------------------------

  const panel = $("room-revealed");
  let foldFrom = null; // where the presenter was when the answer was revealed

  function showRevealed(p) {
    if (!p || p.state !== "revealed") return;
    const already = poll && poll.id === p.id && poll.state === "revealed";
    poll = p;
    showTally(null);
    if (already) return;
    // A lesson at it goes on to the outcome; the panel folds once the presenter moves on from there.
    const moved = p.run && p.step != null ? revealed(p.run, p.step) : Promise.resolve();
    if (!panel) return; // the room's page shows it in its box too, the overlay on the projector
    panel.querySelector(".poll-question").textContent = p.question;
    panel.querySelector(".poll-answer").textContent = p.answer || "";
    panel.querySelector(".poll-answer-line").hidden = !p.answer;
    panel.querySelector(".poll-explain").textContent = p.explain || "";
    fillBars(panel.querySelector(".bars"), p.choices, p.counts || {}, p.answer);
    panel.querySelector(".answered-n").textContent = String(Object.values(p.counts || {}).reduce((a, b) => a + b, 0));
    panel.style.top = `${bar.getBoundingClientRect().height}px`; // just below the bar, however tall
    panel.hidden = false;
    foldFrom = null;
    moved.then(() => {
      const here = showing();
      foldFrom = here ? JSON.stringify([here.run, here.at]) : null;
    });
  }

  function foldWhenMovedOn() {
    if (!panel || panel.hidden || foldFrom == null) return;
    const here = showing();
    if (here && JSON.stringify([here.run, here.at]) !== foldFrom) panel.hidden = true;
  }
  if (panel) panel.querySelector(".fold").addEventListener("click", () => (panel.hidden = true));

  // The tally: counts per choice and how many answered, for the presenter's eyes only; once
  // revealed, the counts the class sees and no more "answered" (it stopped counting).
  function showTally(tally, fresh) {
    const open = poll && poll.state === "open";
    reveal.hidden = !open;
    const line = bar.querySelector(".room-tally");
    if (!poll) {
      line.textContent = "";
      return;
    }
    if (!open) {
      line.textContent = `“${poll.question}”: ${bar.dataset.revealedWord}`;
      renderRevealed();
    } else if (tally) {
      line.textContent = `“${poll.question}”: ${tally.answered} of ${tally.present} answered`;
      renderBars(tally, fresh);
    }
  }

  function renderRevealed() {
    const box = $("tally");
    if (!box || !poll.counts) return;
    renderBars({ counts: poll.counts, answered: 0, present: 0 }, false);
    const now = box.querySelector(".poll-now");
    fillBars(now.querySelector(".bars"), poll.choices, poll.counts, poll.answer);
    now.querySelector(".answered").textContent = box.dataset.revealedLine;
    const form = now.querySelector(".reveal-form");
    if (form) form.remove();
  }

  function renderBars(tally, fresh) {
    const box = $("tally");
    if (!box) return;
    let now = box.querySelector(".poll-now");
    if (fresh || !now || now.dataset.poll !== String(poll.id)) {
      box.classList.remove("empty");
      box.innerHTML = "";
      now = document.createElement("div");
      now.className = "poll-now";
      now.dataset.poll = String(poll.id);
      const q = document.createElement("p");
      q.className = "poll-question";
      q.textContent = poll.question;
      const ol = document.createElement("ol");
      ol.className = "bars";
      for (const choice of poll.choices) {
        const li = document.createElement("li");
        li.dataset.choice = choice;
        li.innerHTML =
          '<span class="bar-label"></span> <span class="bar"><span class="fill"></span></span> <span class="n">0</span>';
        li.querySelector(".bar-label").textContent = choice;
        ol.appendChild(li);
      }
      const answered = document.createElement("p");
      answered.className = "answered";
      const form = document.createElement("form");
      form.className = "reveal-form";
      form.action = `/rooms/${code}/polls/${poll.id}/reveal`;
      form.innerHTML = '<button type="submit">Reveal</button>';
      now.append(q, ol, answered, form);
      box.appendChild(now);
    }
    const most = Math.max(1, ...Object.values(tally.counts));
    for (const li of now.querySelectorAll("li")) {
      const n = tally.counts[li.dataset.choice] || 0;
      li.querySelector(".n").textContent = String(n);
      li.querySelector(".fill").style.width = `${(100 * n) / most}%`;
    }
    now.querySelector(".answered").textContent =
      `${tally.answered} answered of ${tally.present} present` +
      (tally.note ? ` (${tally.note})` : "") +
      " · the class does not see this until you reveal";
    const button = now.querySelector(".reveal-form button");
    if (button) button.disabled = poll.state !== "open";
  }

  // ---- the room's stream ---------------------------------------------------------------

  function connect() {
    if (!stream) return;
    const socket = new WebSocket(socketUrl(stream.ws));
    socket.onmessage = (message) => {
      const data = dataOf(message);
      if (!data) return;
      if (data.type === "room" || data.type === "state") clock.seen(data.order); // another tab's, too
      if (data.type === "room") {
        poll = data.poll;
        present(data.present);
        showTally(data.tally);
      } else if (data.type === "present") present(data.present);
      else if (data.type === "tally") {
        if (poll && poll.id === data.poll) showTally(data);
      } else if (data.type === "poll") {
        if (data.poll.state === "revealed") showRevealed(data.poll);
        else {
          poll = data.poll;
          showTally(null);
        }
      } else if (data.type === "shared") sharedFork(data.fork);
    };
    // 4429: this address has its share of streams open: not every second.
    socket.onclose = (event) => setTimeout(connect, event.code === 4429 ? 30_000 : 1000);
  }

  // A student shared a What if…? fork: it waits on top of the presenter's approval list (room
  // page only), with the buttons the page's template has.
  function sharedFork(fork) {
    const list = $("shares-waiting");
    const template = $("share-template");
    if (!list || !template || !fork || list.querySelector(`[data-run="${CSS.escape(fork.run)}"]`)) return;
    const none = list.querySelector(".none");
    if (none) none.remove();
    const li = template.content.firstElementChild.cloneNode(true);
    li.dataset.run = fork.run;
    const a = li.querySelector("a");
    a.href = fork.compare;
    a.textContent = `${fork.name}: ${fork.title}`;
    for (const form of li.querySelectorAll("form"))
      form.action = form.getAttribute("action").replace("/RUN/", `/${encodeURIComponent(fork.run)}/`);
    list.prepend(li);
  }

  function present(n) {
    if (n == null) return;
    bar.querySelector(".room-present").textContent = String(n);
    const big = $("present");
    if (big) big.textContent = String(n);
  }

  connect();
  setInterval(() => {
    report(showing());
    foldWhenMovedOn();
    askButton.hidden = !checkpointHere();
  }, 300);
}

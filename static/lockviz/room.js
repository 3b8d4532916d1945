// The presenter's side of a room (lockviz/views/rooms.py, lockviz/consumers/rooms.py).
//
// On every page of a presenting browser (the room bar is there): say what this page shows —
// a run, a lesson at its current event, a replay at its position — so the class follows, at
// most a few times a second and only when it changed; offer "Ask the class" at a lesson's
// checkpoint; show who is present and the live tally, and Reveal. On the room's own page, the
// "Ask the class" form too. What the page shows is what its entry module tells showing.js: the
// pages need not know about rooms.
//
// startRoomBar() does all this on a page with the room bar (site.js calls it on every page).

import { pageData } from "./page-data.js";
import { checkpoint as checkpointHere, showing } from "./showing.js";
import { dataOf, socketUrl } from "./sockets.js";

let started = false;

export function startRoomBar() {
  const bar = document.getElementById("room-bar");
  if (!bar || started) return;
  started = true;
  const code = bar.dataset.room;
  const stream = pageData().presenting; // {room, ws}: the room's stream path, from the server
  const csrf = (document.body.getAttribute("hx-headers") || "").match(/"X-CSRFToken": "([^"]*)"/);
  const headers = { "X-CSRFToken": csrf ? csrf[1] : "" };
  const $ = (id) => document.getElementById(id);
  let sent = "";
  let poll = null; // the room's current poll, as the presenter sees it
  let lastPost = 0;

  function report() {
    const state = showing();
    const now = Date.now();
    if (!state || now - lastPost < 250) return;
    const text = JSON.stringify(state);
    if (text === sent) return;
    sent = text;
    lastPost = now;
    fetch(`/rooms/${code}/show`, { method: "POST", headers, body: text }).catch(() => {
      sent = "";
    });
  }

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
    if (poll)
      post(`/rooms/${code}/polls/${poll.id}/reveal`, new URLSearchParams()).then((a) => {
        poll = a.poll;
        showTally(null);
      });
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
    post(form.action, new FormData(form)).then((a) => {
      poll = a.poll;
      showTally(null);
    });
  });

  // The tally: counts per choice and how many answered, for the presenter's eyes only.
  function showTally(tally, fresh) {
    const open = poll && poll.state === "open";
    reveal.hidden = !open;
    const line = bar.querySelector(".room-tally");
    if (!poll) {
      line.textContent = "";
      return;
    }
    if (tally) {
      line.textContent = `“${poll.question}”: ${tally.answered} of ${tally.present} answered`;
      renderBars(tally, fresh);
    } else if (!open) line.textContent = `“${poll.question}”: revealed`;
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
      if (data.type === "room") {
        poll = data.poll;
        present(data.present);
        showTally(data.tally);
      } else if (data.type === "present") present(data.present);
      else if (data.type === "tally") {
        if (poll && poll.id === data.poll) showTally(data);
      } else if (data.type === "poll") {
        poll = data.poll;
        showTally(null);
      } else if (data.type === "shared") sharedFork(data.fork);
    };
    // 4429: this address has its share of streams open: not every second.
    socket.onclose = (event) => setTimeout(connect, event.code === 4429 ? 30_000 : 1000);
  }

  // A student shared a What if…? fork: it goes on top of the presenter's list (room page only).
  function sharedFork(fork) {
    const list = $("shared-forks");
    if (!list || !fork) return;
    const none = list.querySelector(".none");
    if (none) none.remove();
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = fork.compare;
    a.textContent = `${fork.name}: ${fork.title}`;
    li.appendChild(a);
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
    report();
    askButton.hidden = !checkpointHere();
  }, 300);
}

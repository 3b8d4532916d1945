// A poll's answers as bars, one per choice, drawn the same for the presenter (room/bar.js) and the
// class (room/poll.js); the right one says so in words (✔ and the class "right", room.css).

// fillBars(ol, choices, counts, answer): the list `ol` holds one bar per choice, each as long as
// its count against the most any choice has.
export function fillBars(ol, choices, counts, answer) {
  ol.textContent = "";
  const most = Math.max(1, ...Object.values(counts));
  for (const choice of choices) {
    const n = counts[choice] || 0;
    const li = document.createElement("li");
    li.dataset.choice = choice;
    if (choice === answer) li.className = "right";
    li.innerHTML =
      '<span class="bar-label"></span> <span class="bar"><span class="fill"></span></span> <span class="n"></span>';
    li.querySelector(".bar-label").textContent = choice;
    li.querySelector(".fill").style.width = `${(100 * n) / most}%`;
    li.querySelector(".n").textContent = String(n);
    ol.appendChild(li);
  }
}

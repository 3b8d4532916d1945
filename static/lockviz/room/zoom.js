// A diagram that fits the width of a small screen, and a button to see it at its own size (the
// box then scrolls sideways, and takes the keyboard for that). The button names the element it
// zooms (aria-controls); the words are the template's.

export function wireZoom() {
  for (const button of document.querySelectorAll("button[data-zoom]")) {
    const target = document.getElementById(button.getAttribute("aria-controls"));
    if (!target || button.wired) continue;
    button.wired = true;
    button.addEventListener("click", () => {
      const zoomed = !target.classList.contains("zoomed");
      target.classList.toggle("zoomed", zoomed);
      button.setAttribute("aria-pressed", String(zoomed));
    });
  }
}

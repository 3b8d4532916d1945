// The replay page's "Embed" disclosure: the <iframe> snippet (made by the server,
// lockviz/views/replay.py:embed_snippet) in a read-only text area, and a button that copies it.
// Where the clipboard is out of reach (a page over plain http), the snippet is selected and
// the status says to copy it with the keyboard.

/** Wire #embed-copy to #embed-code (a page without them: nothing). */
export function startEmbedSnippet(doc = document) {
  const code = doc.getElementById("embed-code");
  const button = doc.getElementById("embed-copy");
  const status = doc.getElementById("embed-copied");
  if (!code || !button || !status) return;
  const selectIt = () => {
    code.focus();
    code.select();
  };
  button.addEventListener("click", () => {
    const fallback = () => {
      selectIt();
      status.textContent = "Selected: press Ctrl+C (⌘C) to copy it.";
    };
    if (!navigator.clipboard || !window.isSecureContext) return fallback();
    navigator.clipboard.writeText(code.value).then(() => {
      status.textContent = "Snippet copied.";
    }, fallback);
  });
  code.addEventListener("focus", () => code.select());
}

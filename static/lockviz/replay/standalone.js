// What a replay outside the site's pages reads from its address (the embed, pages/embed.js, and
// the one-file replay, pages/offline.js): ?theme=light|dark (otherwise the reader's system
// says: standalone.css) and ?autoplay with &speed= (one of the speed menu's values).

/** ?theme=light|dark from `search` (location.search), before anything is drawn. */
export function applyTheme(search = location.search) {
  const theme = new URLSearchParams(search).get("theme");
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
}

/** ?speed= and ?autoplay from `search`; `replay` is startReplay's. With #seq= too, it plays from
 * that moment. */
export function autoplay(replay, search = location.search) {
  const query = new URLSearchParams(search);
  const speed = document.getElementById("rp-speed");
  const asked = query.get("speed");
  if (speed && asked && Array.from(speed.options).some((o) => o.value === asked)) speed.value = asked;
  if (query.has("autoplay") && query.get("autoplay") !== "0") replay.play();
}

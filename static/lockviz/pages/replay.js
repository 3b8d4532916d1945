// The replay page: a stored run's replay (replay/view.js) with the site around it — the
// presenter view and the room bar (site.js), the SVG and PNG exports, the embed's snippet
// (replay/embed-snippet.js), and what the page shows
// for a presenter's room (room/showing.js). The page data (#page-data) has the first chunk of events
// and names the rest (replay/event-chunks.js).
//
// Exports `replay` {diagram, index, seq, playing, clock, go, play, pause} (the browser tests
// read it).

import { startEmbedSnippet } from "../replay/embed-snippet.js";
import { allEvents } from "../replay/event-chunks.js";
import { startExports } from "../run/export.js";
import { pageData } from "../page-data.js";
import { presenter } from "../room/presenter.js";
import { startReplay } from "../replay/view.js";
import { pageTitle, tell } from "../room/showing.js";
import { startSite } from "../site.js";

startSite();
const data = pageData();
const events = await allEvents(data.events, data.more);
export const replay = startReplay(events, data);

const moment = () => (replay.index >= 0 ? { seq: replay.seq, clock: replay.clock } : null);
startExports({ diagram: () => replay.diagram, moment });
startEmbedSnippet();
tell({
  showing: () => ({ view: "replay", run: data.run, at: replay.seq, title: pageTitle() }),
});
// On a projector the replay is the page: its controls at the top of the screen, the diagram
// under them, the title above (one scroll up).
const bar = document.querySelector(".replay-bar");
if (presenter.on && !window.scrollY) window.scrollTo({ top: bar.getBoundingClientRect().top });

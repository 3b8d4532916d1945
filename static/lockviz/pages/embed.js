// The embed (/embed/runs/<id>/, lockviz/views/embed.py): the replay and its controls alone, for
// a course page's <iframe>. The page data has the first chunk of events and names the rest
// (replay/event-chunks.js); ?theme=, ?autoplay and &speed= as replay/standalone.js reads them.
//
// Exports `replay` {diagram, index, seq, playing, clock, go, play, pause} (the browser tests
// read it).

import { allEvents } from "../replay/event-chunks.js";
import { pageData } from "../page-data.js";
import { startReplay } from "../replay/view.js";
import { applyTheme, autoplay } from "../replay/standalone.js";

applyTheme();
const data = pageData();
const events = await allEvents(data.events, data.more);
export const replay = startReplay(events, data);
autoplay(replay);

// The one-file replay (lockviz/runs/webpage.py, "Download as a web page"): the replay of a run
// whose events are in the file itself (replay/inline-events.js), played from disk with no request.
// This module and every module it imports are inlined into the file as one (lockviz/edge/bundle.py):
// nothing here may fetch, open a socket or name a URL.

import { inlineEvents } from "../replay/inline-events.js";
import { pageData } from "../page-data.js";
import { startReplay } from "../replay/view.js";
import { applyTheme, autoplay } from "../replay/standalone.js";

applyTheme();
const data = pageData();
const events = await inlineEvents(document.getElementById("run-events"));
export const replay = startReplay(events, data);
autoplay(replay);

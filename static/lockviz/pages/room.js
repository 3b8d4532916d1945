// A room's page (templates/lockviz/room.html), for its presenter: what every page does
// (site.js: the room bar's stream, the tally), and the class's progress, live
// (room/class-progress.js).
//
// Exports `room` {progress}: what this page built (the browser tests read it).

import { followProgress } from "../room/class-progress.js";
import { pageData } from "../page-data.js";
import { startSite } from "../site.js";

startSite();
const data = pageData();
const box = document.getElementById("class-progress");
const stream = data.presenting && box && box.dataset.room === data.presenting.room ? data.presenting.ws : null;

export const room = { progress: box && stream ? followProgress(box, stream) : null };

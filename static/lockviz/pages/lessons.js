// The course index (templates/lockviz/lessons.html): how far this browser has come in each
// lesson and module (progress.js).

import { showIndex } from "../progress.js";
import { startSite } from "../site.js";

startSite();
showIndex();

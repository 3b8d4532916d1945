// The course index (templates/lockviz/lessons.html): how far this learner has come in each
// lesson and module (lesson/progress.js: this browser's, and the server's in the page's data).

import { pageData } from "../page-data.js";
import { showIndex } from "../lesson/progress.js";
import { startSite } from "../site.js";

startSite();
showIndex(pageData().progress || {});

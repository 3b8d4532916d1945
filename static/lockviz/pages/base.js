// The entry module of a page with nothing of its own to run (the scenarios, joining a class, a
// room's page, a refusal, the scenario format): only what every page does (site.js).

import { startSite } from "../site.js";

startSite();

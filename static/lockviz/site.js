// What every page does, whatever else it is: the presenter view's button, key and folds
// (room/presenter.js), a sentence when an htmx request fails (request-problems.js) and, in a
// presenting browser, the room bar (room/bar.js) and, while it presents a lecture plan, the plan
// bar's keys (room/plan-bar.js). Every page's entry module (pages/) starts here.

import { startPlanBar } from "./room/plan-bar.js";
import { startPresenter } from "./room/presenter.js";
import { watchRequests } from "./request-problems.js";
import { startRoomBar } from "./room/bar.js";

let started = false;

export function startSite() {
  if (started) return;
  started = true;
  startPresenter();
  watchRequests();
  startRoomBar();
  startPlanBar();
}

// What if…? — the fork editor: the shared step row editor (editor/step-rows.js) over the fork's rows.

import { pageData } from "../page-data.js";
import { startSite } from "../site.js";
import { startRows } from "../editor/step-rows.js";

startSite();
startRows(document.querySelector(".fork-rows"), pageData().verbs);

// A lecture plan's embed (/embed/plans/<id>/, lockviz/views/embeds.py): light or dark, as
// ?theme= or the reader's system says (replay/standalone.js); its replays are embeds of their own.

import { applyTheme } from "../replay/standalone.js";

applyTheme();

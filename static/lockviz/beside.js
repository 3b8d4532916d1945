// A student's page in a room, when the presenter shows a fork beside its original (the compare
// page): the original, whole, in a second diagram beside the one that follows the presenter.
// The original had ended before the fork was made, so showing it whole tells nothing the
// projector does not.
//
// showBeside(id) opens that run (null: none, the second diagram folds away); both diagrams are
// scaled to share the width (room.css: .follow-lanes.two).

import { followDiagram, followed } from "./follow-diagram.js";
import { openStream } from "./runstream.js";

let shown = null; // {id, stream}

export function showBeside(id) {
  if ((shown && shown.id) === (id || null)) return;
  const wrap = document.getElementById("beside-wrap");
  const lanes = document.getElementById("follow-lanes");
  if (!wrap || !lanes) return;
  if (shown && shown.stream) shown.stream.close();
  const old = document.getElementById("beside-diagram");
  const svg = old.cloneNode(false); // a fresh diagram for another run
  old.replaceWith(svg);
  shown = id ? { id, stream: null } : null;
  wrap.hidden = !id;
  lanes.classList.toggle("two", Boolean(id));
  if (!id) return;
  const mine = shown;
  followed(id).then((meta) => {
    if (shown !== mine) return;
    const diagram = followDiagram(svg, meta.scenario);
    mine.stream = openStream(meta.ws, 0, { onEvent: (ev) => diagram.add(ev) });
  });
}

// A student's page in a room, when the presenter shows a fork beside its original (the compare
// page): the original, whole, in a second diagram beside the one that follows the presenter,
// drawn as the compare page draws its lane (run/drawing.js "lane": one time axis for both, the moment
// they part marked across both), with its verdict in short under it (as a compare lane's: the
// fork's is the page's own, under both). The original had ended before the
// fork was made, so showing it whole tells nothing the projector does not.
//
// showBeside(id, fork) opens run `id` beside run `fork` (null: none, the second diagram folds
// away); both diagrams are scaled to share the width (room.css: .follow-lanes.two).
// besideDiagram() is the one drawn (the browser tests read it).

import { followDiagram, followed } from "./followed.js";
import { openStream } from "../run/runstream.js";

let shown = null; // {id, stream, diagram}

export function showBeside(id, fork) {
  if ((shown && shown.id) === (id || null)) return;
  const wrap = document.getElementById("beside-wrap");
  const lanes = document.getElementById("follow-lanes");
  const verdict = document.getElementById("beside-verdict");
  if (!wrap || !lanes) return;
  if (shown && shown.stream) shown.stream.close();
  const old = document.getElementById("beside-diagram");
  const svg = old.cloneNode(false); // a fresh diagram for another run
  old.replaceWith(svg);
  if (verdict) verdict.innerHTML = "";
  shown = id ? { id, stream: null, diagram: null } : null;
  wrap.hidden = !id;
  lanes.classList.toggle("two", Boolean(id));
  if (!id) return;
  const mine = shown;
  Promise.all([followed(id), followed(fork)]).then(([meta, forked]) => {
    if (shown !== mine) return;
    const diagram = followDiagram(svg, meta, "lane", {}, (forked.drawn || {}).fork);
    mine.diagram = diagram;
    mine.stream = openStream(meta.ws, 0, {
      onEvent: (ev) => diagram.add(ev),
      onDone: () => {
        if (!verdict || shown !== mine) return;
        fetch(meta.lane_verdict)
          .then((r) => r.text())
          .then((html) => {
            if (shown === mine) verdict.innerHTML = html;
          });
      },
    });
  });
}

export function besideDiagram() {
  return shown ? shown.diagram : null;
}

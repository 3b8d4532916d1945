"""lockviz.edge.bundle: a module graph as one inline module. Each bundle here runs in Node beside
the same modules run as ES modules, and must print the same; every form it cannot carry is refused
by name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lockviz.edge.bundle import BundleError, bundle, inline_script
from tests.conftest import ROOT

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is installed by make setup")

# A small graph with what the app's modules do: the same top-level name in several modules,
# renamed imports and exports, a namespace, an import over several lines, a diamond (shared.js
# runs once), a side-effect import, classes, async functions and top-level await.
GRAPH = {
    "app/pages/entry.js": """\
import { double, Counter as Tally } from "../lib/maths.js";
import * as words from "../lib/words.js";
import {
  shout,
  whisper as quiet,
} from "../lib/words.js";
import "../lib/side.js";
import { order } from "../lib/shared.js";

const secret = "entry's own";
const tally = new Tally();
tally.add(double(4));
order.push("entry");
console.log(JSON.stringify([secret, tally.total, shout("hi"), quiet("HI"), words.joined(["a", "b"]),
  await words.later(), order]));
export const done = true;
""",
    "app/lib/maths.js": """\
import { order } from "./shared.js";

const secret = "maths";
order.push(secret);
export function double(x) {
  return x * 2;
}
export class Counter {
  constructor() {
    this.total = 0;
  }
  add(n) {
    this.total += n;
  }
}
""",
    "app/lib/words.js": """\
import { order } from "./shared.js";

const secret = "words";
order.push(secret);
const shoutIt = (text) => text.toUpperCase() + "!";
function whisper(text) {
  return text.toLowerCase() + "…";
}
export async function later() {
  await null;
  return "awaited </script> fine";
}
export const joined = (list) => list.join("+");
export { shoutIt as shout, whisper };
""",
    "app/lib/side.js": """\
import { order } from "./shared.js";

order.push("side");
""",
    "app/lib/shared.js": """\
export const order = ["shared"];
await Promise.resolve();
""",
}


def write(folder: Path, graph: dict[str, str]) -> None:
    for name, text in graph.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (folder / "package.json").write_text('{"type": "module"}')


def node(script: Path) -> str:
    assert NODE is not None
    done = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_node
def test_a_bundle_prints_what_its_modules_print(tmp_path: Path) -> None:
    write(tmp_path, GRAPH)
    as_modules = node(tmp_path / "app/pages/entry.js")
    one = bundle("app/pages/entry.js", lambda name: GRAPH[name])
    (tmp_path / "bundle.js").write_text(inline_script(one))
    assert node(tmp_path / "bundle.js") == as_modules
    assert as_modules.startswith('["entry\'s own",8,"HI!","hi…","a+b","awaited </script> fine",')
    assert '"shared","maths","words","side","entry"]' in as_modules  # each module once, in order
    assert "</script" not in inline_script(one)


def refused(graph: dict[str, str], entry: str = "app/pages/entry.js") -> str:
    with pytest.raises(BundleError) as caught:
        bundle(entry, lambda name: graph[name])
    return str(caught.value)


def test_what_a_bundle_cannot_carry_is_refused_by_name() -> None:
    entry = "app/pages/entry.js"
    one = {**GRAPH, entry: 'import { triple } from "../lib/maths.js";\n'}
    assert refused(one) == f"{entry} imports triple from app/lib/maths.js, which does not export it"
    one = {**GRAPH, entry: 'import maths from "../lib/maths.js";\n'}
    assert "a default import" in refused(one)
    one = {**GRAPH, entry: 'import { x } from "lodash";\n'}
    assert "not a relative path" in refused(one)
    one = {**GRAPH, entry: 'const m = await import("../lib/maths.js");\n'}
    assert "a dynamic import()" in refused(one)
    one = {**GRAPH, "app/lib/shared.js": "export let order = [];\n"}
    assert "export let order (a live binding" in refused(one)
    one = {**GRAPH, "app/lib/shared.js": "export default 3;\n"}
    assert "a default export" in refused(one)
    one = {**GRAPH, "app/lib/shared.js": 'export { order } from "./maths.js";\n'}
    assert "re-exports are not carried" in refused(one)
    one = {
        **GRAPH,
        "app/lib/shared.js": 'import { double } from "./maths.js";\nexport const order = [];\n',
    }
    assert (
        "modules import each other (app/lib/maths.js → app/lib/shared.js → app/lib/maths.js)"
        in (refused(one))
    )


@needs_node
def test_the_one_file_replays_script_is_one_module_node_can_read(tmp_path: Path) -> None:
    static = ROOT / "static"
    one = bundle("lockviz/pages/offline.js", lambda name: (static / name).read_text())
    (tmp_path / "offline.mjs").write_text(inline_script(one))
    assert NODE is not None
    check = subprocess.run([NODE, "--check", str(tmp_path / "offline.mjs")], capture_output=True)
    assert check.returncode == 0, check.stderr
    for module in (
        "replay/view.js",
        "diagram/diagram.js",
        "replay/inline-events.js",
        "pages/offline.js",
    ):
        assert f"// ---- lockviz/{module}" in one
    # the replay page's site-wide modules (room bar, sockets, exports) stay out of the file
    assert "lockviz/room/bar.js" not in one and "lockviz/sockets.js" not in one

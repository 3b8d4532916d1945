"""A page's ES modules as one inline module, for a page that must work from ``file://``.

A browser will not import a module by URL from a page opened from disk, so the one-file replay
(lockviz.runs.webpage) carries its script inline: :func:`bundle` follows the imports from an entry
module (static/lockviz/pages/…) and writes every module it meets into one module, dependencies
first, each in a function of its own, so two modules' top-level names never meet:

    const __lockviz_modules = {};
    __lockviz_modules["lockviz/diagram/svg.js"] = await (async () => {
      const SVG_NS = "http://www.w3.org/2000/svg";        // was: export const SVG_NS = …
      …
      return { SVG_NS, … };
    })();
    …
    const { SVG_NS, el } = __lockviz_modules["lockviz/diagram/svg.js"];   // was: import {…} from
    …the entry module's own code, at the top level (it may await)…

Why not a bundler from npm (esbuild): it would make Node a run-time dependency of a Python
server, or a build step and a generated file to keep in step with static/; the modules are
written in one style (Prettier's, one import per statement, named exports only), so the few
forms they use can be rewritten exactly, and every other form is refused by name
(:class:`BundleError`), never passed on half-rewritten. The bundle keeps ES semantics the
modules rely on: each module runs once, after the modules it imports, in the order a browser
would run them; a module that imports a name its dependency does not export is refused, as a
browser would refuse it. It does not keep live bindings: ``export let`` and ``export var`` are
refused (the app exports functions, classes and constants). tests/lockviz/edge/test_bundle.py runs
bundles in Node beside the same modules run as modules, and compares what they print.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

REGISTRY = "__lockviz_modules"
# What may follow `import` and `export` at the start of a line (Prettier's layout). `[^;]*?` lets
# an import's braces span lines; the path is a relative one ("./x.js", "../x.js").
IMPORT = re.compile(r"""^import\s+(?P<what>[^;"']*?)\s*\bfrom\s*["'](?P<path>[^"']+)["'];?""", re.M)
BARE_IMPORT = re.compile(r"""^import\s*["'](?P<path>[^"']+)["'];?""", re.M)
EXPORT_DECL = re.compile(
    r"^export\s+(?P<kind>async\s+function\s*\*?|function\s*\*?|class|const|let|var)\s+"
    r"(?P<name>[A-Za-z_$][\w$]*)",
    re.M,
)
EXPORT_LIST = re.compile(
    r"^export\s*\{(?P<names>[^}]*)\}\s*(?P<from>from\s*[\"'][^\"']*[\"'])?;?", re.M
)
ANY_EXPORT = re.compile(r"^export\b.*", re.M)
ANY_IMPORT = re.compile(r"^import\b.*", re.M)
NAME = re.compile(r"[A-Za-z_$][\w$]*")
SCRIPT_END = re.compile(r"</(script)", re.I)


class BundleError(ValueError):
    """A module the bundle cannot carry faithfully; the message names the module and the form."""


@dataclass(frozen=True)
class Module:
    """One module, rewritten: its code without import or export keywords, the names it exports
    (exported name -> local name), what it imports (module -> [(imported, local)], ``*`` for a
    namespace) and the modules it needs, in order."""

    name: str
    code: str
    exports: dict[str, str]
    imports: dict[str, list[tuple[str, str]]]


def bundle(entry: str, read: Callable[[str], str]) -> str:
    """One module's text (no imports, no exports) that runs ``entry`` and everything it imports;
    ``read(name)`` is a module's source, by its name relative to the static root
    (``lockviz/pages/offline.js``)."""
    order: list[str] = []
    parsed: dict[str, Module] = {}
    _visit(entry, read, parsed, order, [])
    for module in parsed.values():
        for target, names in module.imports.items():
            for imported, _ in names:
                if imported != "*" and imported not in parsed[target].exports:
                    raise BundleError(
                        f"{module.name} imports {imported} from {target}, which does not export it"
                    )
    parts = [f"const {REGISTRY} = {{}};"]
    for name in order:
        module = parsed[name]
        code = _with_imports(module) + module.code
        if name == entry:
            parts.append(f"// ---- {name}\n{code}")
            continue
        exported = ", ".join(
            local if local == outside else f"{outside}: {local}"
            for outside, local in sorted(module.exports.items())
        )
        parts.append(
            f"// ---- {name}\n{REGISTRY}[{_js_string(name)}] = await (async () => {{\n"
            f"{code}\nreturn Object.freeze({{ {exported} }});\n}})();"
        )
    return "\n".join(parts) + "\n"


def _visit(
    name: str,
    read: Callable[[str], str],
    parsed: dict[str, Module],
    order: list[str],
    path: list[str],
) -> None:
    if name in path:
        cycle = " → ".join([*path[path.index(name) :], name])
        raise BundleError(f"modules import each other ({cycle}): the bundle cannot order them")
    if name in parsed:
        return
    module = parse(name, read(name))
    parsed[name] = module
    for target in module.imports:
        _visit(target, read, parsed, order, [*path, name])
    order.append(name)


def parse(name: str, source: str) -> Module:
    """``source`` (the module ``name``) without its import and export keywords, and what they
    said; :class:`BundleError` for a form the bundle does not carry."""
    for bad, why in REFUSED:
        if re.search(bad, source, re.M):
            raise BundleError(f"{name}: {why} (the bundle carries named imports and exports only)")
    code, imports = _without_imports(name, source)
    code, exports = _without_exports(name, code)
    return Module(name, code, exports, imports)


REFUSED = (
    (r"\bimport\s*\(", "a dynamic import()"),
    (r"\bimport\.meta\b", "import.meta"),
    (r"^export\s+default\b", "a default export"),
    (r"^export\s*\*", "export * from"),
)


def _without_imports(name: str, source: str) -> tuple[str, dict[str, list[tuple[str, str]]]]:
    imports: dict[str, list[tuple[str, str]]] = {}

    def target(path: str) -> str:
        if not path.startswith(("./", "../")):
            raise BundleError(f"{name}: imports {path!r}, not a relative path to a module")
        return posixpath.normpath(posixpath.join(posixpath.dirname(name), path))

    def one_import(match: re.Match[str]) -> str:
        imports.setdefault(target(match["path"]), []).extend(_imported(name, match["what"]))
        return ""

    def bare_import(match: re.Match[str]) -> str:
        imports.setdefault(target(match["path"]), [])
        return ""

    code = BARE_IMPORT.sub(bare_import, IMPORT.sub(one_import, source))
    return _all_read(name, code, ANY_IMPORT, "import"), imports


def _without_exports(name: str, source: str) -> tuple[str, dict[str, str]]:
    exports: dict[str, str] = {}

    def declaration(match: re.Match[str]) -> str:
        kind = " ".join(match["kind"].split())
        if kind in ("let", "var"):
            raise BundleError(
                f"{name}: export {kind} {match['name']} (a live binding the bundle cannot keep)"
            )
        exports[match["name"]] = match["name"]
        return match.group(0)[len("export") :].lstrip()

    def listed(match: re.Match[str]) -> str:
        if match["from"]:
            raise BundleError(f"{name}: export {{…}} from (re-exports are not carried)")
        for item in filter(None, (part.strip() for part in match["names"].split(","))):
            local, _, exported = (w.strip() for w in item.partition(" as "))
            if not NAME.fullmatch(local) or not NAME.fullmatch(exported or local):
                raise BundleError(f"{name}: cannot read the export {item!r}")
            exports[exported or local] = local
        return ""

    code = EXPORT_LIST.sub(listed, EXPORT_DECL.sub(declaration, source))
    return _all_read(name, code, ANY_EXPORT, "export"), exports


def _all_read(name: str, code: str, left_over: re.Pattern[str], what: str) -> str:
    """``code``, once nothing is left in it of ``what`` (an import, an export) but what the
    bundle rewrote: :class:`BundleError` naming the first that it could not read."""
    left = left_over.search(code)
    if left:
        raise BundleError(f"{name}: an {what} the bundle cannot read: {left.group(0)[:80]}")
    return code


def _imported(name: str, what: str) -> list[tuple[str, str]]:
    """``{ a, b as c }`` or ``* as ns`` -> [(imported, local)]."""
    what = " ".join(what.split())
    star = re.fullmatch(r"\*\s*as\s+([A-Za-z_$][\w$]*)", what)
    if star:
        return [("*", star.group(1))]
    braces = re.fullmatch(r"\{(.*)\}", what)
    if not braces:
        raise BundleError(f"{name}: import {what} (a default import: the app has none)")
    found = []
    for item in filter(None, (part.strip() for part in braces.group(1).split(","))):
        imported, _, local = (w.strip() for w in item.partition(" as "))
        if not NAME.fullmatch(imported) or not NAME.fullmatch(local or imported):
            raise BundleError(f"{name}: cannot read the import {item!r}")
        found.append((imported, local or imported))
    return found


def _with_imports(module: Module) -> str:
    """The consts that stand for the module's imports."""
    lines = []
    for target, names in module.imports.items():
        source = f"{REGISTRY}[{_js_string(target)}]"
        picked = []
        for imported, local in names:
            if imported == "*":
                lines.append(f"const {local} = {source};")
            else:
                picked.append(local if local == imported else f"{imported}: {local}")
        if picked:
            lines.append(f"const {{ {', '.join(picked)} }} = {source};")
    return "".join(line + "\n" for line in lines)


def _js_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def inline_script(code: str) -> str:
    """``code`` safe inside an HTML <script> element: nothing in it can close the element or
    open a comment the HTML parser would honour (``<\\/`` and ``<\\!`` mean the same in
    JavaScript's strings, regular expressions and comments)."""
    return SCRIPT_END.sub(r"<\\/\1", code).replace("<!--", "<\\!--")

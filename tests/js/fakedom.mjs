// A minimal stand-in for the browser's document and window, enough for the diagram to draw in
// Node (tests/js/): elements with attributes, classes, children and text; a canvas that measures
// text by its length; a window with no layout. No real layout happens: tests check what is drawn
// (elements, classes, attributes), never where the browser would put it.

const SVG_NS = "http://www.w3.org/2000/svg";

class ClassList {
  constructor(node) {
    this.node = node;
  }
  _list() {
    return (this.node.getAttribute("class") || "").split(/\s+/).filter(Boolean);
  }
  _set(list) {
    this.node.setAttribute("class", list.join(" "));
  }
  contains(cls) {
    return this._list().includes(cls);
  }
  add(...names) {
    const list = this._list();
    for (const n of names) if (!list.includes(n)) list.push(n);
    this._set(list);
  }
  remove(...names) {
    this._set(this._list().filter((c) => !names.includes(c)));
  }
  toggle(cls, force) {
    const on = force === undefined ? !this.contains(cls) : !!force;
    if (on) this.add(cls);
    else this.remove(cls);
    return on;
  }
}

// An element's inline style: properties set directly, and custom ones by name.
class FakeStyle {
  setProperty(name, value) {
    this[name] = String(value);
  }

  removeProperty(name) {
    delete this[name];
  }

  getPropertyValue(name) {
    return this[name] || "";
  }
}

export class FakeElement {
  constructor(doc, tag, ns) {
    Object.assign(this, { ownerDocument: doc, tagName: tag, namespaceURI: ns, parentNode: null, text: "" });
    Object.assign(this, { attributes: new Map(), childNodes: [], style: new FakeStyle(), listeners: {} });
    this.classList = new ClassList(this);
    const node = this;
    this.dataset = new Proxy(
      {},
      {
        get: (_, key) => node.getAttribute("data-" + String(key).replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())),
        set: (_, key, value) => {
          node.setAttribute("data-" + String(key).replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()), value);
          return true;
        },
      },
    );
  }
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }
  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null;
  }
  hasAttribute(name) {
    return this.attributes.has(name);
  }
  removeAttribute(name) {
    this.attributes.delete(name);
  }
  appendChild(child) {
    return this.insertBefore(child, null);
  }
  insertBefore(child, before) {
    if (child.parentNode) child.remove();
    const at = before ? this.childNodes.indexOf(before) : -1;
    if (at < 0) this.childNodes.push(child);
    else this.childNodes.splice(at, 0, child);
    child.parentNode = this;
    return child;
  }
  remove() {
    if (!this.parentNode) return;
    const siblings = this.parentNode.childNodes;
    siblings.splice(siblings.indexOf(this), 1);
    this.parentNode = null;
  }
  get children() {
    return this.childNodes;
  }
  get firstChild() {
    return this.childNodes[0] || null;
  }
  get isConnected() {
    let n = this;
    while (n.parentNode) n = n.parentNode;
    return n === this.ownerDocument.root;
  }
  get textContent() {
    return this.text + this.childNodes.map((c) => c.textContent).join("");
  }
  set textContent(value) {
    for (const c of this.childNodes) c.parentNode = null;
    this.childNodes = [];
    this.text = String(value);
  }
  /** Simple selectors only: "tag", ".class", "tag.class". */
  matches(selector) {
    const [tag, ...classes] = selector.split(".");
    return (!tag || tag === this.tagName) && classes.every((c) => this.classList.contains(c));
  }
  closest(selector) {
    for (let n = this; n; n = n.parentNode) if (n.matches && n.matches(selector)) return n;
    return null;
  }
  querySelectorAll(selector) {
    const found = [];
    const walk = (n) => {
      for (const c of n.childNodes) {
        if (c.matches(selector)) found.push(c);
        walk(c);
      }
    };
    walk(this);
    return found;
  }
  addEventListener(type, fn) {
    (this.listeners[type] || (this.listeners[type] = [])).push(fn);
  }
  removeEventListener(type, fn) {
    this.listeners[type] = (this.listeners[type] || []).filter((f) => f !== fn);
  }
  getBoundingClientRect() {
    return { top: 0, left: 0, bottom: 0, right: 0, width: 0, height: 0 };
  }
}

// Text is as wide as its characters at about half its size: enough for labels to collide.
function canvas() {
  const ctx = {
    font: "14px sans-serif",
    measureText(text) {
      const size = parseFloat(/(\d+(\.\d+)?)px/.exec(ctx.font)?.[1] || "14");
      return { width: String(text).length * size * 0.55 };
    },
  };
  return { getContext: () => ctx };
}

/** A document with an <svg> in it; `view` is its window. */
export function fakeDocument() {
  const view = {
    innerHeight: 1000,
    getComputedStyle: () => ({
      fontSize: "14px",
      fontStyle: "normal",
      fontWeight: "400",
      fontFamily: "sans-serif",
      getPropertyValue: () => "",
    }),
    matchMedia: () => ({ matches: false }),
    addEventListener() {},
    performance: { now: () => 0 },
  };
  const doc = {
    defaultView: view,
    createElementNS: (ns, tag) => new FakeElement(doc, tag, ns),
    createElement: (tag) => (tag === "canvas" ? canvas() : new FakeElement(doc, tag, null)),
  };
  doc.root = new FakeElement(doc, "body", null);
  const svg = doc.createElementNS(SVG_NS, "svg");
  doc.root.appendChild(svg);
  return { doc, view, svg };
}

/** The drawing as text, one element a line: its tag, attributes (sorted) and own text.
 * `titles: false` leaves out the tooltips (<title>), which quote every field of an event. */
export function serialize(node, { titles = true } = {}, depth = 0) {
  if (!titles && node.tagName === "title") return "";
  const attrs = Array.from(node.attributes.entries())
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => ` ${k}="${v}"`)
    .join("");
  const style = node.style && node.style.display ? ` style.display="${node.style.display}"` : "";
  const head = `${"  ".repeat(depth)}<${node.tagName}${attrs}${style}>${node.text}\n`;
  return head + node.childNodes.map((c) => serialize(c, { titles }, depth + 1)).join("");
}

// A page's elements by id, as one object: `elements({play: "rp-play"})` is {play: <the element
// whose id is rp-play>} (null where the page has none).

/** `ids`: {name: element id}; `root`: the document (or another) to look them up in. */
export function elements(ids, root = document) {
  return Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, root.getElementById(id)]));
}

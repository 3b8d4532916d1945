// The run's events carried in the page itself (the one-file replay, lockviz/runs/webpage.py):
// a <script id="run-events"> element holds them as JSON, or, for a long run, as gzip in base64
// (data-encoding="gzip+base64"), unpacked here by the browser's own DecompressionStream. No
// request is made: the bytes are the page's.

/** The events in `node` (an element whose text is their JSON, or their gzip in base64). */
export async function inlineEvents(node) {
  if (!node) return [];
  const text = node.textContent.trim();
  if (node.dataset.encoding !== "gzip+base64") return JSON.parse(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

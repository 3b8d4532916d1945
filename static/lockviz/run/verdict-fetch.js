// A run's verdict, fetched by htmx once the stream says the run has ended (run, lesson, play
// and compare pages). The stream hears the end after the verdict is stored, but on a loaded
// machine the page's fetch was seen to come back still saying the run is going (the lane's
// "… running live" stayed for good, and a browser test waited in vain: issue 34). A verdict
// that comes back pending is asked for again, once a second, a few times.
//
// untilJudged(slot, again, tries) -> nothing: `slot` is the element htmx swaps the verdict
// into; `again()` triggers its fetch once more.

const PENDING = ".pending";
const AGAIN_MS = 1000;

export function untilJudged(slot, again, tries = 10, env = globalThis) {
  if (!slot) return;
  let left = tries;
  slot.addEventListener("htmx:afterSwap", () => {
    if (left <= 0 || !slot.querySelector(PENDING)) return;
    left -= 1;
    env.setTimeout(again, AGAIN_MS);
  });
}

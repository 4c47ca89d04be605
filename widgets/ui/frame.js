/**
 * Animation frames, where the window has them: jsdom and some hidden pages do not, and a timer
 * stands in.
 */

/** Run `fn` at `win`'s next animation frame (a 16 ms timer where there is none); returns its id. */
export const nextFrame = (win, fn) =>
  win && win.requestAnimationFrame ? win.requestAnimationFrame(fn) : (win || globalThis).setTimeout(fn, 16);

/** Run `fn` once the next frame is painted: after that frame, in a task of its own. */
export const afterPaint = (win, fn) => nextFrame(win, () => (win || globalThis).setTimeout(fn, 0));

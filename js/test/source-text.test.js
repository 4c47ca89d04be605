/**
 * One way to name a line of code for a reader (widgets/source-text.js), as the Python side does
 * (capture/source.py where_text): `line N` in a notebook cell, `file.py:N` elsewhere.
 */
import { describe, it, expect } from "vitest";
import { isCellFile, shortWhere } from "../../widgets/source-text.js";
import { srcText } from "../../widgets/graph/model.js";

describe("source text", () => {
  it("says `line N` for a notebook cell's file and the file's name elsewhere", () => {
    expect(shortWhere("/tmp/ipykernel_4242/526010223.py", 5)).toBe("line 5");
    expect(shortWhere("<ipython-input-3-abc>", 2)).toBe("line 2");
    expect(shortWhere("C:\\work\\ipykernel_7\\12.py", 3)).toBe("line 3");
    expect(shortWhere("/site-packages/flax/linen/stochastic.py", 105)).toBe("stochastic.py:105");
    expect(shortWhere("/home/me/ipykernel_tools.py", 1)).toBe("ipykernel_tools.py:1");
    expect(shortWhere("/home/me/train.py", null)).toBe("train.py");
    expect(isCellFile("/tmp/ipykernel_1/2.py")).toBe(true);
    expect(isCellFile("/tmp/2.py")).toBe(false);
  });

  it("short source texts in every view follow it; the full path stays in details", () => {
    const src = { file: "/tmp/ipykernel_9292/1313886521.py", line: 3 };
    expect(srcText(src, true)).toBe("line 3");
    expect(srcText(src, false)).toBe("/tmp/ipykernel_9292/1313886521.py:3");
  });
});

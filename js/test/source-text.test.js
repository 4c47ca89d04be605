// @vitest-environment jsdom
/**
 * One way to name a line of code for a reader (widgets/ui/source-text.js), as the Python side does
 * (capture/source.py where_text): `cell [3], line N` in a notebook cell whose number the document
 * carries (`cells`), `line N` in one whose number is unknown, `file.py:N` elsewhere.
 */
import { describe, it, expect } from "vitest";
import { cellNumber, fullWhere, isCellFile, linesWhere, rememberCells, shortWhere } from "../../widgets/ui/source-text.js";
import { srcPath, srcText } from "../../widgets/graph/model.js";
import { lineText } from "../../widgets/keys/story.js";
import { whereText } from "../../widgets/sharding/format.js";
import { docHeader } from "../../widgets/ui/header.js";

describe("source text", () => {
  it("says `line N` for a cell whose number is unknown and the file's name elsewhere", () => {
    expect(shortWhere("/tmp/ipykernel_4242/526010223.py", 5)).toBe("line 5");
    expect(shortWhere("C:\\work\\ipykernel_7\\12.py", 3)).toBe("line 3");
    expect(shortWhere("/site-packages/flax/linen/stochastic.py", 105)).toBe("stochastic.py:105");
    expect(shortWhere("/home/me/ipykernel_tools.py", 1)).toBe("ipykernel_tools.py:1");
    expect(shortWhere("/home/me/train.py", null)).toBe("train.py");
    expect(isCellFile("/tmp/ipykernel_1/2.py")).toBe(true);
    expect(isCellFile("/tmp/2.py")).toBe(false);
  });

  it("IPython 7's file names carry the cell's number", () => {
    expect(cellNumber("<ipython-input-3-5f2a9c>")).toBe(3);
    expect(shortWhere("<ipython-input-3-5f2a9c>", 2)).toBe("cell [3], line 2");
    expect(shortWhere("<cell 4>", 2)).toBe("line 2");
  });

  it("names a cell's line `cell [N], line L` once a document said which cell the file is", () => {
    const file = "/tmp/ipykernel_5151/3659413369.py";
    expect(shortWhere(file, 3)).toBe("line 3");
    rememberCells({ [file]: 7, "/tmp/ipykernel_5151/bad.py": "x", "/tmp/ipykernel_5151/neg.py": -1 });
    rememberCells(null);
    rememberCells(["not", "a", "map"]);
    expect(shortWhere(file, 3)).toBe("cell [7], line 3");
    expect(shortWhere(file, null)).toBe("cell [7]");
    expect(cellNumber("/tmp/ipykernel_5151/bad.py")).toBe(null);
    expect(cellNumber("/tmp/ipykernel_5151/neg.py")).toBe(null);
    // a file is named by its name whatever a document says
    rememberCells({ "/home/me/train.py": 2 });
    expect(shortWhere("/home/me/train.py", 12)).toBe("train.py:12");
    // the latest document wins: one file is one code text, run again as a later cell
    rememberCells({ [file]: 9 });
    expect(shortWhere(file, 3)).toBe("cell [9], line 3");
  });

  it("names ranges of lines of one place", () => {
    const file = "/tmp/ipykernel_5151/111.py";
    expect(linesWhere(file, [45, 44, 45])).toBe("lines 44–45");
    rememberCells({ [file]: 4 });
    expect(linesWhere(file, [45, 44])).toBe("cell [4], lines 44–45");
    expect(linesWhere(file, [44])).toBe("cell [4], line 44");
    expect(linesWhere("/a/train.py", [14, 12])).toBe("train.py:12–14");
    expect(linesWhere("/a/train.py", [])).toBe(null);
  });

  it("every view's source text follows it; the full path stays for a tooltip", () => {
    const file = "/tmp/ipykernel_9292/1313886521.py";
    rememberCells({ [file]: 3 });
    const src = { file, line: 3 };
    expect(srcText(src)).toBe("cell [3], line 3");
    expect(srcPath(src)).toBe(`${file}:3`);
    expect(fullWhere(file, 3)).toBe(`${file}:3`);
    expect(lineText(src)).toBe("cell [3], line 3");
    expect(whereText(src)).toBe("cell [3], line 3");
    const header = docHeader({ title: "t", error: { type: "ValueError", message: "m", file, line: 3 } });
    expect(header.querySelector(".jm-error-where").textContent).toBe("cell [3], line 3");
  });
});

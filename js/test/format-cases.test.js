/**
 * One table of cases (tests/fixtures/format-cases.json) for the rules both languages implement:
 * counts, plurals, byte sizes, durations and line names. tests/test_format_cases.py holds the
 * Python homes (jaxmagic/units.py, capture/source.py) to the same table, so the widget and the
 * text/html fallbacks cannot say one figure two ways.
 */
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { countText, plural } from "../../widgets/ui/words.js";
import { bytesText, durationText } from "../../widgets/ui/format.js";
import { linesWhere, shortWhere } from "../../widgets/ui/source-text.js";

const { cases } = JSON.parse(readFileSync(new URL("../../tests/fixtures/format-cases.json", import.meta.url), "utf8"));
const SPECIAL = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity, undefined };
/** Rules only Python needs (no view of the widget says "twice"): checked by the pytest alone. */
const PYTHON_ONLY = new Set(["times"]);
const FUNCTIONS = {
  count: countText,
  plural,
  bytes: bytesText,
  duration: durationText,
  where: shortWhere,
  lines_where: linesWhere,
};

/** An argument of the table: {special: name} stands for what JSON cannot hold. */
const arg = (v) => (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).join() === "special" ? SPECIAL[v.special] : v);

describe("format cases shared with Python", () => {
  it("covers every rule", () => {
    expect(new Set(cases.map((c) => c.fn))).toEqual(new Set([...Object.keys(FUNCTIONS), ...PYTHON_ONLY]));
  });
  for (const c of cases.filter((x) => !PYTHON_ONLY.has(x.fn))) {
    it(`${c.fn}(${JSON.stringify(c.args)})`, () => {
      expect(FUNCTIONS[c.fn](...c.args.map(arg))).toBe(c.expected);
    });
  }
});

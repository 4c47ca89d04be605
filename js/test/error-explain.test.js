// @vitest-environment jsdom
/**
 * The error banner (widgets/ui/header.js) shows jaxmagic's explanation of a JAX concretization error
 * below the cell's own error, as text (capture/findings/concretization.py makes it; docs/schema.md `Error`).
 */
import { describe, it, expect } from "vitest";
import { docHeader } from "../../widgets/ui/header.js";

describe("error banner explanation", () => {
  it("shows the explanation after the error, as text", () => {
    const explanation = "f (traced for jax.jit) raised TracerBoolConversionError at `if x > 0:` <b>x</b>";
    const header = docHeader({ title: "t", error: { type: "TracerBoolConversionError", message: "m", line: 3,
                                                    code: "if x > 0:", explanation } });
    const box = header.querySelector(".jm-error");
    const shown = box.querySelector(".jm-error-explain");
    expect(shown.textContent).toBe(explanation);
    expect(shown.querySelector("b")).toBeNull();
    expect(box.lastElementChild).toBe(shown);
  });

  it("shows none when the document has none", () => {
    const header = docHeader({ title: "t", error: { type: "ValueError", message: "m" } });
    expect(header.querySelector(".jm-error-explain")).toBeNull();
  });
});

// Modules the build makes (js/build.mjs) and vitest stands in for (js/vitest.config.js).

/** A style sheet imported as its text (esbuild's text loader). */
declare module "*.css" {
  const text: string;
  export default text;
}

/** The layout worker bundle wrapped in one function (js/build.mjs). */
declare module "virtual:layout-worker" {
  const workerMain: () => unknown;
  export default workerMain;
}

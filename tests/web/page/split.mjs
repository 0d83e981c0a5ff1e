// Served to the split-graph tests' page (/page/split.mjs): what they do in the tab alike.

// Inputs that repeat from run to run (mulberry32), so a failure repeats on the same CPU.
export function seededRandom(seed = 0x5eed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A float tensor of `shape` with values from `random` in [lo, hi).
export function uniformTensor(ort, random, shape, lo, hi) {
  const n = shape.reduce((a, b) => a * b, 1);
  return new ort.Tensor("float32", Float32Array.from({ length: n }, () => lo + random() * (hi - lo)), shape);
}

// The module's rewrite of an ONNX file for the tab (sam3_rewrite_for_browser, as the tab runs it
// on a model's files) -> {answer (its JSON), rewritten (the bundle's bytes, or null)}.
export function rewriteForBrowser(core, bytes, options) {
  const p = core._malloc(bytes.byteLength);
  core.HEAPU8.set(bytes, p);
  const text = JSON.stringify(options);
  const o = core._malloc(text.length + 1);
  core.stringToUTF8(text, o, text.length + 1);
  const answer = JSON.parse(core.UTF8ToString(core._sam3_rewrite_for_browser(p, bytes.byteLength, o)));
  core._free(o);
  core._free(p);
  const rewritten = answer.bytes ? core.HEAPU8.slice(answer.ptr, answer.ptr + answer.bytes) : null;
  core._sam3_release_rewritten();
  return { answer, rewritten };
}

// The largest |want - got| / max(1, |want|) over `names` (Infinity for another length; Math.max
// keeps a NaN, so an overflow fails), and how many values were compared.
export function largestRelativeDifference(want, got, names) {
  let worst = 0, compared = 0;
  for (const name of names) {
    const a = want[name].data, b = got[name].data;
    if (a.length !== b.length || String(want[name].dims) !== String(got[name].dims)) worst = Infinity;
    for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(a[i])));
    compared += a.length;
  }
  return { worst, compared };
}

// ONNX Runtime Web (WASM, two threads), the module and the tab's kernels as Kernels.load(options)
// gives them (on two threads).
export async function loadRuntime(kernelOptions) {
  const ort = await import("/web/ort/ort.wasm.min.mjs");
  ort.env.wasm.wasmPaths = "/web/ort/";
  ort.env.wasm.numThreads = 2;
  const { Kernels, SplitSession, readBundle } = await import("/web/sam3-int8.mjs");
  const core = await (await import("/web/sam3.mjs")).default();
  const { kernel } = await Kernels.load({ threads: 2, ...kernelOptions });
  return { ort, Kernels, SplitSession, readBundle, core, kernel };
}

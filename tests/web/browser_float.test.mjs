// The tab's own float product (apps/web/kernels/float_gemm.c, sam3-int8.mjs) in Chromium:
// float_matmuls.onnx (tools/make_float_matmul_models.py: products by constant weights with and
// without a bias, K and N not multiples of the kernel's vectors, rows known only through Expand
// and Reshape, a product read by a later one) rewritten as the tab rewrites a decoder (split at
// its float products over at least 100 rows, of any weight size, optimize/onnx_split_matmuls.h) and run as a
// SplitSession with the kernel on two threads, both builds, gives ONNX Runtime Web's outputs for
// the file as written within float rounding (sums of 16 to 40 products of values near 1:
// differences of a few 1e-7; a wrong column, bias or row split is off by 1e-1 or more); the
// products over 7 rows, over unknown rows and by a non-constant are not split. The inputs come
// from a seeded generator.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { startStatic, stopStatic } from "./static_server.mjs";
import { launchBrowser } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const MODELS = process.env.SAM3_TEST_MODELS;
const WEB = path.join(process.env.SAM3_WEB_OUT, "web");
const ORT_WEB = process.env.SAM3_ORT_WEB ?? path.join(repo, ".deps/onnxruntime-web");
const BUILT = existsSync(path.join(WEB, "int8-relaxed.wasm")) && existsSync(path.join(WEB, "int8-simd128.wasm"));

let server, baseUrl, browser, page;

before(async () => {
  if (!BUILT) return;
  ({ server, baseUrl } = await startStatic({
    routes: { "/web/ort/": ORT_WEB, "/web/": WEB, "/models/": MODELS },
    pages: { "/": "<!doctype html><title>sam3 float kernel test</title>" },
  }));
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on("console", (m) => { if (m.type() === "error" && !/status of 404/.test(m.text())) console.error("[page]", m.text()); });
  await page.goto(`${baseUrl}/`);
});

after(async () => {
  await browser?.close();
  if (server) await stopStatic(server);
});

// In the page: the file rewritten for the kernel and run both ways -> {build, threads, steps,
// segments, worst (largest |difference| / max(1, |value|) over the outputs), compared}.
function compareInPage(build, file) {
  return page.evaluate(async ({ build, file }) => {
    const ort = await import("/web/ort/ort.wasm.min.mjs");
    ort.env.wasm.wasmPaths = "/web/ort/";
    ort.env.wasm.numThreads = 2;
    const { Kernels, SplitSession, readBundle } = await import("/web/sam3-int8.mjs");
    const core = await (await import("/web/sam3.mjs")).default();
    const { kernel } = await Kernels.load({ int8: "off", float: build, threads: 2 });
    const bytes = new Uint8Array(await (await fetch(file)).arrayBuffer());
    const p = core._malloc(bytes.byteLength);
    core.HEAPU8.set(bytes, p);
    const options = JSON.stringify({ fuse_attention: true, split_matmuls: true, matmul_min_rows: 100, matmul_min_weight: 1 });
    const o = core._malloc(options.length + 1);
    core.stringToUTF8(options, o, options.length + 1);
    const answer = JSON.parse(core.UTF8ToString(core._sam3_rewrite_for_browser(p, bytes.byteLength, o)));
    core._free(o);
    core._free(p);
    const rewritten = answer.bytes ? core.HEAPU8.slice(answer.ptr, answer.ptr + answer.bytes) : null;
    core._sam3_release_rewritten();
    const r = { build: kernel.build, threads: kernel.workers.length, steps: answer.float_matmuls ?? answer.error,
      segments: answer.segments, worst: 0, compared: 0 };
    const bundle = rewritten && readBundle(rewritten);
    if (!bundle) return r;
    const original = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
    const split = await SplitSession.create(ort, bundle, { executionProviders: ["wasm"] }, kernel);
    let seed = 0x5eed;
    const random = () => {  // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const floats = (shape, lo, hi) => new ort.Tensor("float32", Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) },
      () => lo + random() * (hi - lo)), shape);
    for (const [objects, lo, hi] of [[1, -1, 1], [3, -2, 2], [2, 0.5, 3]]) {
      const feeds = { image: floats([1, 16, 12, 10], lo, hi), tokens: floats([1, 7, 16], lo, hi), x: floats([5, 16], lo, hi),
        labels: new ort.Tensor("int64", new BigInt64Array(objects * 2), [1, objects, 2]) };
      const want = await original.run(feeds), got = await split.run(feeds);
      for (const name of original.outputNames) {
        const a = want[name].data, b = got[name].data;
        if (a.length !== b.length || String(want[name].dims) !== String(got[name].dims)) r.worst = Infinity;
        // Math.max keeps a NaN: a NaN fails the test.
        for (let i = 0; i < a.length; ++i) r.worst = Math.max(r.worst, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(a[i])));
        r.compared += a.length;
      }
    }
    r.timings = split.lastTimings;
    await original.release();
    for (const step of split.steps) await step.session?.release();
    kernel.release();
    return r;
  }, { build, file });
}

for (const build of ["relaxed", "simd128"]) {
  test(`float products split out to the tab's kernel (${build}) give ONNX Runtime Web's outputs`, { skip: !BUILT && "the tab's kernels are not built (clang-22)" }, async (t) => {
    const got = await compareInPage(build, "/models/matmuls/float_matmuls.onnx");
    t.diagnostic(`largest relative difference ${got.worst} over ${got.compared} values`);
    assert.equal(got.build, build);
    assert.equal(got.threads, 2, "rows split between two threads");
    assert.equal(got.steps, 4, "y_image's three products and y_flat's; not y_tokens (7 rows), y_symbolic (rows unknown), y_dynamic");
    assert.equal(got.segments, 3);
    assert.ok(got.timings.matmuls > 0, "the products ran in the kernel");
    assert.ok(got.compared > 0, "compared");
    assert.ok(got.worst <= 1e-5, `largest relative difference ${got.worst} (float rounding stays below 1e-5)`);
  });
}

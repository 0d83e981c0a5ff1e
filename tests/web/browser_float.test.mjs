// The tab's own float product (apps/web/kernels/float_gemm.c, sam3-int8.mjs) in Chromium:
// float_matmuls.onnx (tools/make_float_matmul_models.py: products by constant weights with and
// without a bias, K and N not multiples of the kernel's vectors, rows known only through Expand
// and Reshape, a product read by a later one) rewritten as the tab rewrites a decoder (split at
// its float products over at least 100 rows, of any weight size, optimize/onnx_split_matmuls.h) and run as a
// SplitSession with the kernel on two threads, both builds, gives ONNX Runtime Web's outputs for
// the file as written within float rounding (sums of 16 to 40 products of values near 1:
// differences of a few 1e-7; a wrong column, bias or row split is off by 1e-1 or more); the
// products over 7 rows, over unknown rows and by a non-constant are not split. Every product's
// output reaches the segments reading it as a view of the kernels' memory, the one read two steps
// later too (a copy out of it was a new array on every run: fresh memory, docs/browser.md "What a
// segment costs"), and the kernels' memory does not grow from one run to the next (its blocks
// are reused). The inputs come from a seeded generator.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { KERNELS_BUILT as BUILT, openSplitPages } from "./split_page.mjs";

let tab, page;

before(async () => {
  if (!BUILT) return;
  tab = await openSplitPages("sam3 float kernel test");
  [page] = tab.pages;
});

after(async () => {
  await tab?.close();
});

// In the page: the file rewritten for the kernel and run both ways -> {build, threads, steps,
// segments, worst (largest |difference| / max(1, |value|) over the outputs), compared}.
function compareInPage(build, file) {
  return page.evaluate(async ({ build, file }) => {
    const { loadRuntime, seededRandom, uniformTensor, rewriteForBrowser, largestRelativeDifference } = await import("/page/split.mjs");
    const { ort, SplitSession, readBundle, core, kernel } = await loadRuntime({ int8: "off", float: build });
    const bytes = new Uint8Array(await (await fetch(file)).arrayBuffer());
    const { answer, rewritten } = rewriteForBrowser(core, bytes,
      { fuse_attention: true, split_matmuls: true, matmul_min_rows: 100, matmul_min_weight: 1 });
    const r = { build: kernel.build, threads: kernel.workers.length, steps: answer.float_matmuls ?? answer.error,
      segments: answer.segments, worst: 0, compared: 0 };
    const bundle = rewritten && readBundle(rewritten);
    if (!bundle) return r;
    const original = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
    const split = await SplitSession.create(ort, bundle, { executionProviders: ["wasm"] }, kernel);
    // How each product's output reaches the segments reading it: a view of the kernels' (shared)
    // memory, or a copy (a JavaScript array of its own).
    const products = new Set(bundle.header.steps.filter((s) => s.matmul).map((s) => s.matmul.output));
    r.fed = { views: 0, copies: [] };
    for (const step of split.steps) {
      if (!step.session) continue;
      const run = step.session.run.bind(step.session);
      step.session.run = (feeds, ...rest) => {
        for (const [name, t] of Object.entries(feeds)) {
          if (!products.has(name)) continue;
          if (t.data.buffer instanceof SharedArrayBuffer) r.fed.views++;
          else r.fed.copies.push(name);
        }
        return run(feeds, ...rest);
      };
    }
    r.memory = [];
    const random = seededRandom();
    for (const [objects, lo, hi] of [[1, -1, 1], [3, -2, 2], [2, 0.5, 3]]) {
      const feeds = { image: uniformTensor(ort, random, [1, 16, 12, 10], lo, hi), tokens: uniformTensor(ort, random, [1, 7, 16], lo, hi),
        x: uniformTensor(ort, random, [5, 16], lo, hi), labels: new ort.Tensor("int64", new BigInt64Array(objects * 2), [1, objects, 2]) };
      const want = await original.run(feeds), got = await split.run(feeds);
      const d = largestRelativeDifference(want, got, original.outputNames);
      r.worst = Math.max(r.worst, d.worst);
      r.compared += d.compared;
      r.memory.push(kernel.top);
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
    assert.equal(got.steps, 7, "y_image's three products, y_flat's, y_pe's two (keys + pe taken in) and y_pe_kept's; not y_tokens (7 rows), y_symbolic (rows unknown), y_dynamic");
    assert.equal(got.segments, 3);
    assert.ok(got.timings.matmuls > 0, "the products ran in the kernel");
    assert.ok(got.compared > 0, "compared");
    assert.ok(got.worst <= 1e-5, `largest relative difference ${got.worst} (float rounding stays below 1e-5)`);
    assert.deepEqual(got.fed.copies, [], "every product's output read by a segment is fed to it as a view of the kernels' memory");
    assert.ok(got.fed.views >= 3 * 2, `products' outputs fed to segments as views: ${got.fed.views} in 3 runs`);
    assert.equal(got.memory[2], got.memory[1], `the kernels' memory after the second and third runs (${got.memory}): the blocks are reused`);
  });
}

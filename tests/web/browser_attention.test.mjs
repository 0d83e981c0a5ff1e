// The tab's own attention kernel (apps/web/kernels/attention.c, sam3-int8.mjs) in Chromium:
// graphs with attention written op by op (tools/make_attention_models.py: 3-D and 4-D, PyTorch's
// scale forms, few keys, projected heads, a file with external data's twin) rewritten as the tab
// rewrites a decoder (attention fused, then split at its MultiHeadAttention nodes,
// optimize/onnx_split_attention.h) and run as a SplitSession with the kernel on two threads,
// in both builds, give ONNX Runtime Web's outputs for the files as written within float
// rounding; attention the kernel cannot take (masked, scores read twice) is not split.
// Float rounding here: inputs in [-6, 6] give scores near 100, whose float32 rounding (other
// summation orders, and relaxed SIMD's multiply-add, fused on some CPUs and not on others)
// moves an output by 1e-5 and a little more through the softmax; a wrong kernel (scale, head
// layout, softmax) is off by 1e-1 or more, an overflow by NaN. The inputs come from a seeded
// generator, so a failure is the same on a rerun of the same CPU. (The
// test models' decoders have no attention to fuse; the bench files' do: docs/browser.md,
// "The tab's own attention kernel", checks them against the CLI.)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { KERNELS_BUILT as BUILT, openSplitPages } from "./split_page.mjs";

let tab, page;

before(async () => {
  if (!BUILT) return;
  tab = await openSplitPages("sam3 attention kernel test");
  [page] = tab.pages;
});

after(async () => {
  await tab?.close();
});

// In the page: each file rewritten for the kernel and run both ways on inputs over several
// ranges -> {build, files: {file: {steps (attention split out), worst (largest |difference| /
// max(1, |value|) over the outputs), compared}}}.
function compareInPage(build, files) {
  return page.evaluate(async ({ build, files }) => {
    const { loadRuntime, seededRandom, uniformTensor, rewriteForBrowser, largestRelativeDifference } = await import("/page/split.mjs");
    const { ort, SplitSession, readBundle, core, kernel } = await loadRuntime({ int8: "off", attention: build });
    const report = { build: kernel.build, threads: kernel.workers.length, files: {} };
    for (const file of files) {
      const bytes = new Uint8Array(await (await fetch(file)).arrayBuffer());
      const { answer, rewritten } = rewriteForBrowser(core, bytes, { fuse_attention: true, split_attention: true, attention_chunk: 0 });
      const r = (report.files[file] = { steps: answer.attention_steps ?? answer.error, worst: 0, compared: 0 });
      const bundle = rewritten && readBundle(rewritten);
      if (!bundle) continue;
      const original = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
      const split = await SplitSession.create(ort, bundle, { executionProviders: ["wasm"] }, kernel);
      const random = seededRandom();
      for (const [lo, hi] of [[-1, 1], [-6, 6], [0.5, 3]]) {
        const feeds = {};
        original.inputMetadata.forEach((m) => (feeds[m.name] = uniformTensor(ort, random, m.shape, lo, hi)));
        const want = await original.run(feeds), got = await split.run(feeds);
        const d = largestRelativeDifference(want, got, original.outputNames);
        r.worst = Math.max(r.worst, d.worst);
        r.compared += d.compared;
      }
      await original.release();
      for (const step of split.steps) await step.session?.release();
    }
    kernel.release();
    return report;
  }, { build, files });
}

const SPLIT = { "div_scale_3d.fuse1.onnx": 1, "few_keys.fuse1.onnx": 1, "scaled_4d.fuse1.onnx": 1, "torch_sdpa_default_scale.fuse1.onnx": 1,
  "torch_sqrt_scale.fuse1.onnx": 1, "projected.fuse2.onnx": 2 };
const KEPT = ["masked.fuse0.onnx", "scores_read_twice.fuse0.onnx"];

for (const build of ["relaxed", "simd128"]) {
  test(`attention split out to the tab's kernel (${build}) gives ONNX Runtime Web's outputs`, { skip: !BUILT && "the tab's kernels are not built (clang-22)" }, async () => {
    const files = [...Object.keys(SPLIT), ...KEPT].map((f) => `/models/attention/${f}`);
    const got = await compareInPage(build, files);
    assert.equal(got.build, build);
    assert.equal(got.threads, 2, "rows split between two threads");
    for (const [f, steps] of Object.entries(SPLIT)) {
      const r = got.files[`/models/attention/${f}`];
      assert.equal(r.steps, steps, `${f}: attention nodes split out`);
      assert.ok(r.compared > 0, `${f}: compared`);
      assert.ok(r.worst <= 1e-4, `${f}: largest relative difference ${r.worst} (float rounding stays below 1e-4)`);
    }
    for (const f of KEPT) assert.equal(got.files[`/models/attention/${f}`].steps, 0, `${f}: nothing fused, nothing split`);
  });
}

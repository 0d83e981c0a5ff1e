// The tab's own int8 kernel (apps/web/kernels/int8_gemm.c, sam3-int8.mjs): its products are ONNX
// Runtime Web's DynamicQuantizeMatMul results bit for bit, in both builds, in Chromium with V8's
// VNNI lowering of relaxed SIMD and without it (--js-flags=--no-enable-avx-vnni); the probe
// takes the relaxed build only where the CPU computes it exactly; a model split at its linear
// layers gives the CLI's results.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { maskIou } from "./coco_rle.mjs";
import { KERNELS_BUILT as BUILT, openSplitPages, repo } from "./split_page.mjs";
import { scenePng } from "./support.mjs";

const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;
// V8 lowers relaxed SIMD's dot product to one VNNI instruction on x86 CPUs with AVX-VNNI.
const AVX_VNNI = os.arch() === "x64" && /\bavx_vnni\b/.test(readFileSync("/proc/cpuinfo", "utf8"));

let tmp, tab;
const pages = {};  // "vnni" (V8's default lowering) and "no-vnni"

before(async () => {
  if (!BUILT) return;
  tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-int8-"));
  writeFileSync(path.join(tmp, "scene.png"), scenePng());
  tab = await openSplitPages("sam3 int8 kernel test", { routes: { "/data/": path.join(repo, "data"), "/test/": tmp },
    browserFlags: [[], ["--js-flags=--no-enable-avx-vnni"]] });
  pages.vnni = { page: tab.pages[0] };
  pages["no-vnni"] = { page: tab.pages[1] };
});

after(async () => {
  await tab?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// In the page: each file's outputs from ONNX Runtime Web as written (its graph optimizer fuses
// each linear layer into DynamicQuantizeMatMul) and from the split graph with `build`'s kernel,
// on inputs over several ranges -> {build, exact (the probe), outputs: {file: {output: [differing
// values, values]}}, linears}.
function compareInPage(page, build, files) {
  return page.evaluate(async ({ build, files }) => {
    const { loadRuntime, seededRandom, uniformTensor, rewriteForBrowser } = await import("/page/split.mjs");
    const { ort, Kernels, SplitSession, readBundle, core, kernel } = await loadRuntime({ int8: build });
    const probe = await Kernels.load({ int8: "auto" });
    probe.kernel?.release();
    const report = { build, exact: kernel.exact(), probe: probe.int8.on ? probe.build : null, outputs: {}, linears: {} };
    for (const file of files) {
      const bytes = new Uint8Array(await (await fetch(file)).arrayBuffer());
      const { answer, rewritten: bundle } = rewriteForBrowser(core, bytes, { split_linears: true });
      report.linears[file] = answer.linears;
      const original = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
      const split = await SplitSession.create(ort, readBundle(bundle), { executionProviders: ["wasm"] }, kernel);
      const out = (report.outputs[file] = {});
      // Zero points 0, 255 and between; a constant input; a wide range.
      const random = seededRandom();
      for (const [lo, hi] of [[-1, 1], [0.5, 3], [-7, -0.1], [2, 2], [-1e4, 3e4]]) {
        const feeds = {};
        original.inputMetadata.forEach((m) => (feeds[m.name] = uniformTensor(ort, random, m.shape, lo, hi)));
        const want = await original.run(feeds), got = await split.run(feeds);
        for (const name of original.outputNames) {
          const a = want[name].data, b = got[name].data;
          let differ = 0;
          for (let i = 0; i < a.length; ++i) if (!Object.is(a[i], b[i])) ++differ;
          out[name] ??= [0, 0];
          out[name][0] += differ + (a.length === b.length ? 0 : 1e9);
          out[name][1] += a.length;
        }
      }
      await original.release();
      for (const step of split.steps) await step.session?.release();
    }
    kernel.release();
    return report;
  }, { build, files });
}

const FILES = ["/models/int8/linears.onnx", "/models/int8/linears_bias.onnx"];

for (const lowering of ["vnni", "no-vnni"]) {
  test(`the probe takes the relaxed build only where it is exact (V8 ${lowering})`, { skip: !BUILT && "the int8 kernel is not built (clang-22)" }, async () => {
    const got = await compareInPage(pages[lowering].page, "simd128", FILES.slice(0, 1));
    const exact = lowering === "vnni" && AVX_VNNI;
    assert.equal(got.probe, exact ? "relaxed" : null, `the probe's choice (AVX-VNNI: ${AVX_VNNI})`);
  });

  for (const build of ["simd128", "relaxed"]) {
    test(`${build} products equal DynamicQuantizeMatMul's bit for bit (V8 ${lowering})`, { skip: !BUILT && "the int8 kernel is not built (clang-22)" }, async () => {
      const got = await compareInPage(pages[lowering].page, build, FILES);
      assert.equal(got.linears["/models/int8/linears.onnx"], 4, "y_conv (ConvInteger) and y_kept (an Add on the integers) stay with ONNX Runtime");
      assert.equal(got.linears["/models/int8/linears_bias.onnx"], 4);
      const exact = build === "simd128" || got.exact;
      for (const [file, outputs] of Object.entries(got.outputs)) {
        for (const [name, [differ, total]] of Object.entries(outputs)) {
          assert.ok(total > 0, `${file} ${name}: compared`);
          // The relaxed build where V8 does not lower to VNNI: the probe said no, and the products
          // really are wrong where 16-bit sums saturate (y_extreme: weights -128 and 127).
          if (exact) assert.equal(differ, 0, `${file} ${name}: ${differ} of ${total} values differ`);
          else if (name === "y_extreme") assert.ok(differ > 0, `${file} ${name}: the inexact lowering shows (the probe's reason to exist)`);
        }
      }
    });
  }
}

function native(layout, args) {
  const out = execFileSync(CLI, ["segment", "--models", path.join(MODELS, layout), "--image", path.join(tmp, "scene.png"),
    "--json", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out).images[0].prompts;
}

test("usls with its image encoder split at the linear layers gives the CLI's results", { skip: !BUILT && "the int8 kernel is not built (clang-22)" }, async () => {
  for (const [lowering, build] of [["vnni", "auto"], ["no-vnni", "simd128"]]) {
    const got = await pages[lowering].page.evaluate(async (build) => {
      const { Sam3 } = await import("/web/sam3-browser.mjs");
      const m = await Sam3.load("/models/usls/", { device: "wasm", cache: false, vocabulary: "/data/clip/bpe_simple_vocab_16e6.txt.gz",
        int8Kernel: build });
      const e = await m.encode(await (await fetch("/test/scene.png")).blob());
      const r = await m.segment(e, { text: "red" });
      const kernel = m.int8Kernel;
      await m.release();
      return { r, kernel, rewrites: m.rewrites };
    }, build);
    if (build === "auto" && !AVX_VNNI) {
      assert.equal(got.kernel.build, null, "no exact relaxed dot product here: ONNX Runtime's kernels run");
      continue;
    }
    assert.equal(got.kernel.build, build === "auto" ? "relaxed" : build, JSON.stringify(got.kernel));
    assert.ok(got.rewrites.image.linears > 0 && got.rewrites.image.segments > 1, JSON.stringify(got.rewrites.image));
    const want = native("usls", ["--prompt", "red"])[0];
    assert.equal(got.r.instances.length, want.instances.length);
    assert.ok(want.instances.length > 0);
    want.instances.forEach((w, i) => {
      const g = got.r.instances[i];
      assert.ok(Math.abs(g.score - w.score) <= 0.01, `#${i}: score ${g.score} vs native ${w.score}`);
      assert.ok(maskIou(g.mask, w.mask) >= 0.99, `#${i}: mask IoU`);
    });
  }
});

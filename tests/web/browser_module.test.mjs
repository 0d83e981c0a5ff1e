// sam3 in the browser (build/web: the pure core in WebAssembly + ONNX Runtime Web) against the
// native CLI on the generated models of both layouts: the same instances (mask IoU >= 0.99,
// scores within 0.01), and the tokenizer's golden vectors, in headless Chromium on WASM; and on
// WebGPU (SwiftShader) with the int8 products rewritten to run there, not on WASM.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { maskIou } from "./coco_rle.mjs";
import { startStatic, stopStatic } from "./static_server.mjs";

import { launchBrowser, launchWebGpuBrowser, scenePng } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;
const WEB = path.join(process.env.SAM3_WEB_OUT, "web");
const ORT_WEB = process.env.SAM3_ORT_WEB ?? path.join(repo, ".deps/onnxruntime-web");

let tmp, server, baseUrl, browser, page, gpuBrowser, gpuPage;

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-browser-"));
  writeFileSync(path.join(tmp, "scene.png"), scenePng());
  // The module served without its rewrite worker (a deployment that forgot the file).
  mkdirSync(path.join(tmp, "web-noworker"));
  for (const f of ["sam3.mjs", "sam3.wasm", "sam3-browser.mjs"]) copyFileSync(path.join(WEB, f), path.join(tmp, "web-noworker", f));
  ({ server, baseUrl } = await startStatic({
    routes: { "/web/ort/": ORT_WEB, "/web/": WEB, "/models/": MODELS, "/data/": path.join(repo, "data"),
      "/test/": tmp, "/golden/": path.join(repo, "tests/data/clip"), "/web-noworker/": path.join(tmp, "web-noworker") },
    pages: { "/": "<!doctype html><title>sam3 module test</title>" },
  }));
  browser = await launchBrowser();
  page = await browser.newPage();
  // (The module probes a folder for the names a layout may use: its 404s are expected.)
  page.on("console", (m) => { if (m.type() === "error" && !/status of 404/.test(m.text())) console.error("[page]", m.text()); });
  await page.goto(`${baseUrl}/`);
  gpuBrowser = await launchWebGpuBrowser();
  gpuPage = await gpuBrowser.newPage();
  await gpuPage.goto(`${baseUrl}/`);
});

after(async () => {
  await browser?.close();
  await gpuBrowser?.close();
  if (server) await stopStatic(server);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function native(layout, args) {
  const out = execFileSync(CLI, ["segment", "--models", path.join(MODELS, layout), "--image", path.join(tmp, "scene.png"),
    "--json", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out).images[0].prompts;
}

// The prompts of each layout: text, text with an exemplar box, a box alone.
const CASES = [
  { text: "red", cli: ["--prompt", "red"] },
  { text: "blue", boxes: [[240, 140, 380, 220, "pos"]], cli: ["--prompt", "blue", "--box", "240,140,380,220"] },
  { text: "", boxes: [[40, 20, 160, 100]], cli: ["--box", "40,20,160,100"] },
  { text: "red", threshold: 0.7, cli: ["--prompt", "red", "--threshold", "0.7"] },
];

async function inBrowser(layout, cases, device = "wasm", on = page, options = {}) {
  return on.evaluate(async ({ layout, cases, device, options }) => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load(`/models/${layout}/`, { device, cache: false, vocabulary: "/data/clip/bpe_simple_vocab_16e6.txt.gz",
      ...options });
    const blob = await (await fetch("/test/scene.png")).blob();
    const e = await m.encode(blob);
    const results = [];
    for (const c of cases) results.push(await m.segment(e, { text: c.text, boxes: c.boxes ?? [], threshold: c.threshold }));
    return { device: m.device, layout: m.layout, generation: m.generation, isolated: crossOriginIsolated, rewrites: m.rewrites,
      ortBuild: m.ortBuild, results };
  }, { layout, cases: cases.map(({ cli, ...c }) => c), device, options });
}

// ONNX Runtime's verbose session log: each session's "VerifyEachNodeIsAssignedToAnEp]  Node(s)
// placed on [JsExecutionProvider]. Number of nodes: N", then one "VerifyEachNodeIsAssignedToAnEp]
//   OpType (node name)" line per node -> {provider: {op type: count}}, over every session created
// while `fn` runs on the WebGPU page.
async function placements(fn) {
  const lines = [];
  const listen = (m) => lines.push(m.text());
  gpuPage.on("console", listen);
  try {
    return { value: await fn(), placed: parsePlacements(lines) };
  } finally {
    gpuPage.off("console", listen);
  }
}

function parsePlacements(lines) {
  const placed = {};
  let ep = null;
  for (const line of lines) {
    const at = line.match(/VerifyEachNodeIsAssignedToAnEp\]\s+(.*)$/);
    if (!at) continue;
    const header = at[1].match(/(?:All nodes|Node\(s\)) placed on \[(\w+)\]/);
    const node = at[1].match(/^(\w+) \(.*\)\s*$/);
    if (header) placed[ep = header[1]] ??= {};
    else if (node && ep) placed[ep][node[1]] = (placed[ep][node[1]] ?? 0) + 1;
  }
  return placed;
}

// The integer products and what the rewrite makes of them: none may run on the CPU provider
// (WASM) when WebGPU is asked for.
const HEAVY = ["DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "MatMul", "Conv", "DequantizeLinear", "ReduceMin",
  "ReduceMax", "Div", "Clip"];

function assertSame(got, want, label) {
  assert.equal(got.text, want.text, `${label}: text`);
  assert.deepEqual(got.boxes, want.boxes, `${label}: boxes`);
  assert.equal(got.instances.length, want.instances.length, `${label}: instance count`);
  assert.ok(want.instances.length > 0 || label.includes("none"), `${label}: the case finds something natively`);
  for (let i = 0; i < want.instances.length; i++) {
    const g = got.instances[i], w = want.instances[i];
    assert.ok(Math.abs(g.score - w.score) <= 0.01, `${label} #${i}: score ${g.score} vs native ${w.score}`);
    assert.deepEqual(g.mask.size, w.mask.size, `${label} #${i}: mask size`);
    const iou = maskIou(g.mask, w.mask);
    assert.ok(iou >= 0.99, `${label} #${i}: mask IoU ${iou}`);
    for (let k = 0; k < 4; k++) assert.ok(Math.abs(g.box[k] - w.box[k]) <= 1, `${label} #${i}: box ${g.box} vs ${w.box}`);
  }
}

for (const layout of ["usls", "samexporter"]) {
  test(`${layout}: the browser's results (WASM) equal the native CLI's`, async () => {
    const got = await inBrowser(layout, CASES);
    assert.equal(got.device, "wasm");
    assert.equal(got.layout, layout);
    assert.ok(got.isolated, "the test server sends COOP/COEP: the page is cross-origin isolated (WASM threads)");
    CASES.forEach((c, i) => assertSame(got.results[i], native(layout, c.cli)[0], `${layout} ${JSON.stringify(c.cli)}`));
  });
}

// ONNX Runtime's profile (enableProfiling: the WASM build writes it to the console as JSON
// events) -> {op type: kernels run}.
function profiledOps(lines) {
  const ops = {};
  for (const line of lines) {
    for (const m of line.matchAll(/"name" :"[^"]*_kernel_time"[^\n]*?"op_name" : "(\w+)"/g)) ops[m[1]] = (ops[m[1]] ?? 0) + 1;
  }
  return ops;
}

test("usls on WASM: attention fused into MultiHeadAttention over query chunks runs there and equals the CLI", async () => {
  const lines = [];
  const listen = (m) => lines.push(m.text());
  page.on("console", listen);
  let got;
  try {
    got = await page.evaluate(async (cases) => {
      const { Sam3 } = await import("/web/sam3-browser.mjs");
      // 100 queries per chunk: several chunks, the last one padded, on the test model's tokens.
      const m = await Sam3.load("/models/usls/", { device: "wasm", cache: false, vocabulary: "/data/clip/bpe_simple_vocab_16e6.txt.gz",
        attentionChunk: 100, sessionOptions: { enableProfiling: true } });
      const e = await m.encode(await (await fetch("/test/scene.png")).blob());
      m.sessions.image.endProfiling();
      const results = [];
      for (const c of cases) results.push(await m.segment(e, { text: c.text, boxes: c.boxes ?? [], threshold: c.threshold }));
      await new Promise((done) => setTimeout(done, 200));  // the profile's console lines
      return { rewrites: m.rewrites, ortBuild: m.ortBuild, results };
    }, CASES.map(({ cli, ...c }) => c));
  } finally {
    page.off("console", listen);
  }
  assert.equal(got.ortBuild, "ort.wasm.min.mjs", "WASM runs on ONNX Runtime Web's CPU-only build");
  assert.equal(got.rewrites.image.fused, 1, `the vision encoder's attention fused (${JSON.stringify(got.rewrites)})`);
  assert.equal(got.rewrites.image.chunked, 1, "and looped over query chunks");
  const ops = profiledOps(lines);
  assert.ok(ops.MultiHeadAttention >= 2, `MultiHeadAttention ran once per chunk in the image encoder's profile (${JSON.stringify(ops)})`);
  assert.equal(ops.Softmax ?? 0, 0, "no attention left unfused in the image encoder");
  CASES.forEach((c, i) => assertSame(got.results[i], native("usls", c.cli)[0], `usls fused ${JSON.stringify(c.cli)}`));
});

test("the rewritten graphs are cached: a second load skips the rewrite and gives the same results", async () => {
  const got = await page.evaluate(async () => {
    const { Sam3, clearModelCache } = await import("/web/sam3-browser.mjs");
    await clearModelCache();
    // The rewrite's workers (ONNX Runtime's own threads are workers too: told apart by URL).
    const rewriteWorkers = [];
    const NativeWorker = globalThis.Worker;
    globalThis.Worker = class extends NativeWorker {
      constructor(url, options) {
        super(url, options);
        if (!String(url).includes("sam3-rewrite-worker")) return;
        const seen = { terminated: false };
        rewriteWorkers.push(seen);
        const terminate = this.terminate.bind(this);
        this.terminate = () => { seen.terminated = true; terminate(); };
      }
    };
    const runs = [];
    try {
      for (let i = 0; i < 2; i++) {
        const stages = new Set();
        const before = rewriteWorkers.length;
        const m = await Sam3.load("/models/usls/", { device: "wasm", vocabulary: "/data/clip/bpe_simple_vocab_16e6.txt.gz",
          onProgress: (p) => stages.add(p.stage) });
        const e = await m.encode(await (await fetch("/test/scene.png")).blob());
        runs.push({ rewrites: m.rewrites, rewrote: stages.has("rewrite"), result: await m.segment(e, { text: "red" }),
          workers: rewriteWorkers.slice(before) });
        await m.release();
      }
    } finally {
      globalThis.Worker = NativeWorker;
      await clearModelCache();
    }
    return { runs, left: (await caches.keys()).filter((k) => k.startsWith("sam3-")) };
  });
  const [first, second] = got.runs;
  assert.ok(first.rewrote && !first.rewrites.image.cached, "the first load rewrites");
  assert.deepEqual(first.workers, [{ terminated: true }], "the first load rewrites in one worker, ended by the load");
  assert.ok(!second.rewrote, "the second load does not rewrite");
  assert.deepEqual(second.workers, [], "nor starts a rewrite worker");
  assert.equal(second.rewrites.image.cached, true);
  assert.equal(second.rewrites.image.fused, first.rewrites.image.fused);
  assertSame(second.result, first.result, "cached graph");
  assert.deepEqual(got.left, [], "clearModelCache empties both caches");
});

test("a module served without its rewrite worker says so instead of waiting forever", async () => {
  const error = await page.evaluate(async () => {
    const { Sam3 } = await import("/web-noworker/sam3-browser.mjs");
    try {
      await Sam3.load("/models/usls/", { device: "wasm", cache: false, ortUrl: "/web/ort/ort.wasm.min.mjs",
        vocabulary: "/data/clip/bpe_simple_vocab_16e6.txt.gz" });
      return null;
    } catch (e) {
      return { name: e.name, code: e.code, message: e.message };
    }
  });
  assert.ok(error, "the load fails");
  assert.equal(error.name, "Sam3Error");
  assert.equal(error.code, "runtime");
  assert.match(error.message, /the rewrite worker \(sam3-rewrite-worker\.mjs\) failed/);
});

for (const layout of ["usls", "samexporter"]) {
  test(`${layout}: the same on WebGPU (SwiftShader's adapter)`, async () => {
    const adapter = await gpuPage.evaluate(async () => {
      const a = await navigator.gpu?.requestAdapter();
      return a ? a.info?.architecture ?? "adapter" : null;
    });
    assert.equal(adapter, "swiftshader", "Chromium gives SwiftShader's WebGPU adapter with these flags");
    const { value: got, placed } = await placements(() => inBrowser(layout, CASES.slice(0, 2), "webgpu", gpuPage,
      { logSeverityLevel: 0 }));
    assert.equal(got.device, "webgpu");
    assert.equal(got.ortBuild, "ort.webgpu.min.mjs", "WebGPU runs on ONNX Runtime's own WebGPU provider build");
    CASES.slice(0, 2).forEach((c, i) => assertSame(got.results[i], native(layout, c.cli)[0], `${layout} webgpu ${JSON.stringify(c.cli)}`));
    // The int8 products of every network were rewritten into float operators, and they ran on WebGPU.
    for (const part of ["image", "text"]) {
      assert.ok(got.rewrites[part]?.matmuls > 0, `${layout} ${part}: int8 products rewritten (${JSON.stringify(got.rewrites)})`);
    }
    for (const r of Object.values(got.rewrites)) assert.equal(r.skipped, 0, `${layout}: none left as integer products`);
    const gpu = placed.WebGpuExecutionProvider ?? {};
    assert.ok(gpu.MatMul > 0, `${layout}: the verbose log shows MatMul on WebGPU (${JSON.stringify(placed)})`);
    if (got.rewrites.image.fused > 0) assert.ok(gpu.MultiHeadAttention > 0, `${layout}: the fused attention on WebGPU`);
    const onCpu = Object.keys(placed.CPUExecutionProvider ?? {}).filter((op) => HEAVY.includes(op));
    assert.deepEqual(onCpu, [], `${layout}: on WASM: ${JSON.stringify(placed.CPUExecutionProvider)}`);
  });
}

test("WebGPU without the rewrites: the integer products fall back to WASM (what the WebGPU test rules out)", async () => {
  const { value: rewrites, placed } = await placements(() => gpuPage.evaluate(async () => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/usls/", { device: "webgpu", cache: false, logSeverityLevel: 0, int8AsFloat: false,
      fuseAttention: false });
    return m.rewrites;
  }));
  assert.deepEqual(rewrites, {});
  const cpu = placed.CPUExecutionProvider ?? {};
  assert.ok(cpu.MatMulInteger > 0 && cpu.DynamicQuantizeLinear > 0, `on WASM: ${JSON.stringify(cpu)}`);
});

// The other generations the generator makes, on WASM: a text and a box prompt each (samexporter
// variants: one box, as their slots allow).
const OTHERS = ["usls-336", "usls-504x896", "usls-fp16", "usls-q4f16", "usls-v1", "osam", "samexporter-float-4slots",
  "samexporter-int32-frozen", "geti", "efficientsam3", "sam3.1-ailia"];
test("every other generated generation equals the native CLI on WASM", async () => {
  const cases = CASES.slice(1, 2);  // text with an exemplar box: every input of the decoder
  for (const layout of OTHERS) {
    const got = await inBrowser(layout, cases);
    cases.forEach((c, i) => assertSame(got.results[i], native(layout, c.cli)[0], `${layout} (${got.generation}) ${JSON.stringify(c.cli)}`));
  }
});

// The family's rule across the prompts of one image is the core's, as natively
// (ImageSegmenter::segment_all): on the generated EfficientSAM3 "red car" finds the two squares
// "red" found (the text encoder reads the first word) and keeps none of them. segment() per
// prompt, the module's only call before, answered them twice.
test("segmentAll: EfficientSAM3's rule across an image's prompts gives the CLI's instances", async () => {
  const got = await page.evaluate(async () => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/efficientsam3/", { device: "wasm", cache: false,
      vocabulary: "/data/clip/bpe_simple_vocab_16e6.txt.gz" });
    const e = await m.encode(await (await fetch("/test/scene.png")).blob());
    return m.segmentAll(e, ["red", { text: "red car" }]);
  });
  const want = native("efficientsam3", ["--prompt", "red", "--prompt", "red car"]);
  assert.equal(want.length, 2);
  assert.equal(want[1].instances.length, 0, "natively the repeats are dropped");
  assert.equal(got.length, 2);
  assertSame(got[0], want[0], "efficientsam3 red");
  assertSame(got[1], want[1], "efficientsam3 red car (none)");
});

// The module's answer is the library's document (answer_json.h, written by the core): the CLI's
// --json for the same image and prompts but for the image's name (image_id, the server's id for
// the same file, instead of path) and the times measured. The page shows and downloads it as it is.
test("answer(): sam3 segment --json's document, the image named by the server's image_id", async () => {
  const got = await page.evaluate(async () => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/usls/", { device: "wasm", cache: false });
    const e = await m.encode(await (await fetch("/test/scene.png")).blob());
    const answer = await m.answer(e, { prompts: ["red", { text: "blue", boxes: [] }], threshold: 0.5 });
    let refused = null;
    try {
      await m.answer(e, { prompts: ["red"], mask_format: "png" });
    } catch (err) {
      refused = err.message;
    }
    return { answer, refused };
  });
  const cli = JSON.parse(execFileSync(CLI, ["segment", "--models", path.join(MODELS, "usls"), "--image",
    path.join(tmp, "scene.png"), "--prompt", "red", "--prompt", "blue", "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  const id = createHash("sha256").update(readFileSync(path.join(tmp, "scene.png"))).digest("hex").slice(0, 32);
  assert.equal(got.answer.images[0].image_id, id, "POST /v1/images' id for the same file");
  assert.deepEqual(got.answer.model, { layout: "usls", name: "usls" });
  assert.equal(got.answer.timings_ms.image_cached, true, "the embedding was there: nothing encoded for the answer");
  const comparable = (doc, key) => {
    const { [key]: named, ...image } = doc.images[0];
    assert.ok(named, `the image's ${key}`);
    return { ...doc, images: [image], timings_ms: Object.fromEntries(Object.keys(doc.timings_ms).map((k) => [k, 0])) };
  };
  const want = comparable(cli, "path"), have = comparable(got.answer, "image_id");
  assert.deepEqual(Object.keys(have), Object.keys(want), "the envelope's keys in order");
  assert.deepEqual(have.timings_ms, want.timings_ms, "the same times are reported");
  assert.equal(have.images[0].prompts.length, 2);
  have.images[0].prompts.forEach((p, i) => assertSame(p, want.images[0].prompts[i], `answer ${p.text}`));
  assert.match(got.refused ?? "", /writes masks as RLE/);
});

test("samexporter: a second exemplar box is refused as natively", async () => {
  const error = await page.evaluate(async () => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/samexporter/", { device: "wasm", cache: false });
    const e = await m.encode(await (await fetch("/test/scene.png")).blob());
    try {
      await m.segment(e, { text: "red", boxes: [[0, 0, 10, 10], [5, 5, 20, 20]] });
      return null;
    } catch (err) {
      return { name: err.name, code: err.code, message: err.message };
    }
  });
  assert.equal(error?.name, "Sam3Error");
  assert.equal(error.code, "invalid_argument");
  assert.match(error.message, /at most 1 exemplar box per prompt, got 2/);
});

// The core holds one plan per model: calls made together (the app re-running every prompt at
// once, Promise.all) must queue, not fail with "no plan under way", and give what one by one gives.
test("segment() calls made together queue and equal the same calls one by one", async () => {
  const got = await page.evaluate(async () => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/usls/", { device: "wasm", cache: false });
    const blob = await (await fetch("/test/scene.png")).blob();
    const e = await m.encode(blob);
    const texts = ["red", "blue", "magenta", "red"];
    const together = await Promise.all(texts.map((text) => m.segment(e, { text })));
    const apart = [];
    for (const text of texts) apart.push(await m.segment(e, { text }));
    // A prompt on an embedding still being made, and a failing call among queued ones.
    const [e2, early, bad] = await Promise.allSettled([m.encode(blob), m.segment(e, { text: "blue" }), m.segment(e, { text: "red", threshold: 2 })]);
    const after = await m.segment(e2.value, { text: "blue" });
    const counts = (rs) => rs.map((r) => r.instances.length);
    return { together: counts(together), apart: counts(apart), same: JSON.stringify(together) === JSON.stringify(apart),
      early: early.status, bad: bad.status, badCode: bad.reason?.code, after: after.instances.length };
  });
  assert.deepEqual(got.together, got.apart);
  assert.ok(got.together[0] > 0 && got.together[1] > 0, `red and blue are found: ${JSON.stringify(got)}`);
  assert.ok(got.same, "Promise.all gives exactly what one call after another gives");
  assert.equal(got.early, "fulfilled");
  assert.equal(got.bad, "rejected");
  assert.equal(got.badCode, "invalid_argument");
  assert.equal(got.after, got.apart[1], "calls queued behind a failed one still run");
});

test("bad calls get the native error shape: a file that is no image, NaN coordinates, a released model", async () => {
  const got = await page.evaluate(async () => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/usls/", { device: "wasm", cache: false });
    const failure = async (call) => call.then(() => null, (e) => ({ name: e.name, code: e.code, message: e.message }));
    const notImage = await failure(m.encode(new Blob(["not an image"], { type: "text/plain" })));
    const e = await m.encode(await (await fetch("/test/scene.png")).blob());
    const nan = await failure(m.segment(e, { text: "red", boxes: [[NaN, 0, 10, 10]] }));
    const releasing = m.release();
    const released = await failure(m.segment(e, { text: "red" }));
    await releasing;
    const noModel = await failure(Sam3.load("/models/no-such-model/", { device: "wasm", cache: false }));
    return { notImage, nan, released, noModel };
  });
  assert.equal(got.noModel?.code, "model_not_found");
  assert.match(got.noModel.message, /prompt_encoder_mask_decoder\.onnx \(the interactive sam3-tracker model\)/);
  assert.equal(got.noModel.message.split("geometry-encoder.onnx").length, 2, `each layout once: ${got.noModel.message}`);
  assert.equal(got.notImage?.name, "Sam3Error");
  assert.equal(got.notImage.code, "image_unreadable");
  assert.equal(got.nan?.name, "Sam3Error");
  assert.equal(got.nan.code, "invalid_argument");
  assert.match(got.nan.message, /NaN/, "the bad value is named, not shown as null");
  assert.equal(got.released?.code, "invalid_argument");
  assert.match(got.released.message, /released/);
});

test("the tokenizer in WebAssembly gives the golden token vectors (tokenizer.json and the .gz vocabulary)", async () => {
  const golden = readFileSync(path.join(repo, "tests/data/clip/golden_public.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const got = await page.evaluate(async (texts) => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const withJson = await Sam3.load("/models/usls/", { device: "wasm", cache: false });
    // The bundled BPE merges file, un-gzipped by the browser (DecompressionStream).
    const files = [];
    for (const name of ["vision-encoder.onnx", "text-encoder.onnx", "decoder.onnx"]) {
      files.push(new File([await (await fetch(`/models/usls/${name}`)).blob()], name));
    }
    const withGz = await Sam3.load(files, { device: "wasm", vocabulary: "/data/clip/bpe_simple_vocab_16e6.txt.gz" });
    return texts.map((t) => [withJson.tokenize(t).ids, withGz.tokenize(t).ids]);
  }, golden.map((g) => g.text));
  assert.equal(got.length, golden.length);
  golden.forEach((g, i) => {
    assert.deepEqual(got[i][0], g.ids, `tokenizer.json: ${JSON.stringify(g.text)}`);
    assert.deepEqual(got[i][1], g.ids, `bpe .gz: ${JSON.stringify(g.text)}`);
  });
});

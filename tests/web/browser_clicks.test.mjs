// Clicks in the tab: the WebAssembly module's interactive model (the pure core's tracker rules,
// apps/web) on ONNX Runtime Web against `sam3 segment --point/--box/--multimask/--everything`
// on the generated sam3-tracker model (tools/make_tracker_model.py, the hub's onnx/ layout with
// .onnx_data weights): the same objects, object scores and masks (IoU >= 0.99, scores within
// 0.01), on WASM and on WebGPU (SwiftShader); a click after the encode runs no encoder; bad
// clicks refused with the native messages; and the tab against transformers.js's
// Sam3TrackerModel on the same files where npm's @huggingface/transformers is installed.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";


import { maskIou, maskOf } from "./coco_rle.mjs";
import { startStatic, stopStatic } from "./static_server.mjs";
import { CLICK_SCENE, clickScenePng, launchBrowser, launchWebGpuBrowser } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;
const WEB = path.join(process.env.SAM3_WEB_OUT, "web");
const ORT_WEB = process.env.SAM3_ORT_WEB ?? path.join(repo, ".deps/onnxruntime-web");
const { width: W, height: H } = CLICK_SCENE;

let tmp, server, baseUrl, browser, page, gpuBrowser, gpuPage;

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-browser-clicks-"));
  writeFileSync(path.join(tmp, "scene.png"), clickScenePng());
  ({ server, baseUrl } = await startStatic({
    routes: { "/web/ort/": ORT_WEB, "/web/": WEB, "/models/": MODELS, "/test/": tmp },
    pages: { "/": "<!doctype html><title>sam3 clicks test</title>" },
  }));
  browser = await launchBrowser();
  page = await browser.newPage();
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

// `sam3 segment --json`'s prompts[] for the same image and model.
function native(args) {
  const out = execFileSync(CLI, ["segment", "--models", path.join(MODELS, "tracker"), "--image", path.join(tmp, "scene.png"),
    "--json", "--threads", "1", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out).images[0].prompts;
}

// One object per case (the module's segment() takes one /v1/segment prompt entry).
const CASES = [
  { name: "one click", prompt: { points: [[160, 160, "pos"]] }, cli: ["--point", "160,160"] },
  { name: "a negative click", prompt: { points: [[160, 160, "pos"], [105, 105, "neg"]] },
    cli: ["--point", "160,160", "--point", "105,105,neg"] },
  { name: "two positive clicks", prompt: { points: [[160, 160], [460, 160]] }, cli: ["--point", "160,160", "--point", "460,160"] },
  { name: "the blue bar", prompt: { points: [[350, 360]] }, cli: ["--point", "350,360"] },
  { name: "the background", prompt: { points: [[20, 20]] }, cli: ["--point", "20,20"] },
  { name: "a box alone", prompt: { box: [380, 80, 540, 240] }, cli: ["--box", "380,80,540,240"] },
  { name: "a box and a click", prompt: { points: [[160, 160]], box: [90, 90, 230, 230] },
    cli: ["--point", "160,160", "--box", "90,90,230,230"] },
  { name: "multimask", prompt: { points: [[160, 160]] }, multimask: true, cli: ["--point", "160,160", "--multimask"] },
  { name: "everything", prompt: { everything: true, points_per_side: 8 }, cli: ["--everything", "--points-per-side", "8"] },
];

// Loads the tracker in the tab, encodes once, runs every case; counts the encoder's runs.
async function inTab(on, device, cases) {
  return on.evaluate(async ({ device, cases }) => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/tracker/", { device, cache: false });
    let encodes = 0;
    const run = m.sessions.image.run.bind(m.sessions.image);
    m.sessions.image.run = (...a) => (encodes++, run(...a));
    const e = await m.encode(await (await fetch("/test/scene.png")).blob());
    const encodesAfterEncode = encodes;
    const results = [];
    for (const c of cases) results.push(await m.segment(e, { ...c.prompt, ...(c.multimask ? { multimask: true } : {}) }));
    return { device: m.device, layout: m.layout, interactive: m.info.interactive, generation: m.generation,
      encodesAfterEncode, encodes, results };
  }, { device, cases: cases.map(({ cli, ...c }) => c) });
}

function assertSameObject(got, want, label) {
  for (const key of ["points", "box", "everything"]) assert.deepEqual(got[key], want[key], `${label}: ${key} echoed`);
  if ("object_score" in want) {
    assert.ok(Math.abs(got.object_score - want.object_score) <= 0.01, `${label}: object score ${got.object_score} vs ${want.object_score}`);
  }
  assert.equal(got.instances.length, want.instances.length, `${label}: masks`);
  assert.ok(want.instances.length > 0, `${label}: the case gives masks natively`);
  want.instances.forEach((w, i) => {
    const g = got.instances[i];
    assert.ok(Math.abs(g.score - w.score) <= 0.01, `${label} #${i}: score ${g.score} vs native ${w.score}`);
    assert.deepEqual(g.mask.size, w.mask.size, `${label} #${i}: mask size`);
    const iou = maskIou(g.mask, w.mask);
    assert.ok(iou >= 0.99, `${label} #${i}: mask IoU with the CLI ${iou}`);
    for (let k = 0; k < 4; k++) assert.ok(Math.abs(g.box[k] - w.box[k]) <= 1, `${label} #${i}: box ${g.box} vs ${w.box}`);
  });
}

let wasmResults;

test("clicks in the tab (WASM) equal the CLI's --point/--box/--multimask/--everything", async () => {
  const got = await inTab(page, "wasm", CASES);
  assert.equal(got.device, "wasm");
  assert.equal(got.layout, "sam3-tracker");
  assert.equal(got.interactive, true);
  assert.equal(got.encodesAfterEncode, 1);
  assert.equal(got.encodes, 1, "the clicks after the encode ran the image encoder again");
  CASES.forEach((c, i) => assertSameObject(got.results[i], native(c.cli)[0], `WASM ${c.name}`));
  wasmResults = got.results;
});

test("clicks in the tab on WebGPU (SwiftShader's adapter) equal the CLI's", async (t) => {
  const adapter = await gpuPage.evaluate(async () => Boolean(await navigator.gpu?.requestAdapter()));
  if (!adapter) return t.skip("this Chromium gives no WebGPU adapter");
  // Two cases: SwiftShader emulates the GPU on the CPU (here the encode takes about 110 s and
  // a click 20 s), so the other cases run on WASM only.
  const cases = CASES.filter((c) => ["a negative click", "a box alone"].includes(c.name));
  const got = await inTab(gpuPage, "webgpu", cases);
  assert.equal(got.device, "webgpu");
  assert.equal(got.encodes, 1);
  cases.forEach((c, i) => assertSameObject(got.results[i], native(c.cli)[0], `WebGPU ${c.name}`));
});

test("bad clicks are refused in the tab with the native messages", async () => {
  const bad = [
    { prompt: { points: [[700, 20]] }, cli: ["--point", "700,20"] },
    { prompt: { points: [[100, 100, "neg"]] }, cli: ["--point", "100,100,neg"] },
    { prompt: { box: [50, 50, 40, 90] }, cli: ["--box", "50,50,40,90"] },
  ];
  const errors = await page.evaluate(async (bad) => {
    const { Sam3 } = await import("/web/sam3-browser.mjs");
    const m = await Sam3.load("/models/tracker/", { device: "wasm", cache: false });
    const e = await m.encode(await (await fetch("/test/scene.png")).blob());
    const out = [];
    for (const b of bad) {
      try {
        await m.segment(e, b.prompt);
        out.push(null);
      } catch (err) {
        out.push({ name: err.name, code: err.code, message: err.message });
      }
    }
    for (const p of [{ text: "red" }, { everything: true, points_per_side: 300 }]) {
      try {
        await m.segment(e, p);
        out.push(null);
      } catch (err) {
        out.push({ name: err.name, code: err.code, message: err.message });
      }
    }
    return out;
  }, bad.map((b) => ({ prompt: b.prompt })));
  bad.forEach((b, i) => {
    const cli = spawnSync(CLI, ["segment", "--models", path.join(MODELS, "tracker"), "--image", path.join(tmp, "scene.png"),
      "--json", ...b.cli], { encoding: "utf8" });
    assert.equal(cli.status, 3, `${b.cli}: the CLI refuses it`);
    assert.ok(errors[i], `${JSON.stringify(b.prompt)}: refused in the tab`);
    assert.equal(errors[i].name, "Sam3Error");
    assert.equal(errors[i].code, "invalid_argument");
    assert.ok(cli.stderr.includes(errors[i].message), `the tab's message "${errors[i].message}" is the CLI's: ${cli.stderr}`);
  });
  assert.match(errors[3].message, /interactive \(tracker\) model: it takes points and boxes, not text/);
  assert.match(errors[4].message, /points_per_side must be between 1 and 256/);
});

// transformers.js (npm @huggingface/transformers on onnxruntime-node) on the same files.
const TRANSFORMERS = path.join(here, "node_modules/@huggingface/transformers");
test("clicks in the tab equal transformers.js's Sam3TrackerModel on the same files", { skip: !existsSync(TRANSFORMERS) }, async () => {
  assert.ok(wasmResults, "the WASM test ran first");
  const { AutoProcessor, env, RawImage, Sam3TrackerModel } = await import("@huggingface/transformers");
  env.allowRemoteModels = false;
  env.localModelPath = MODELS;
  const model = await Sam3TrackerModel.from_pretrained("tracker", { dtype: "fp32" });
  const processor = await AutoProcessor.from_pretrained("tracker");
  const image = await RawImage.read(path.join(tmp, "scene.png"));
  for (const [i, c] of CASES.entries()) {
    if (c.prompt.everything) continue;  // transformers.js has no automatic mask generator
    const points = c.prompt.points?.map(([x, y]) => [x, y]);
    const labels = c.prompt.points?.map((p) => (p[2] === "neg" ? 0 : 1));
    const inputs = await processor(image, {
      ...(points && { input_points: [[points]], input_labels: [[labels]] }),
      ...(c.prompt.box && { input_boxes: [[c.prompt.box]] }),
    });
    const out = await model(inputs);
    const [masks] = await processor.post_process_masks(out.pred_masks, inputs.original_sizes, inputs.reshaped_input_sizes);
    const candidates = out.iou_scores.dims[2];
    const iou = Array.from(out.iou_scores.data.slice(0, candidates));
    let order = iou.map((_, k) => k).sort((a, b) => iou[b] - iou[a] || a - b);
    if (!c.multimask) order = order.slice(0, 1);
    const got = wasmResults[i];
    const objectScore = 1 / (1 + Math.exp(-out.object_score_logits.data[0]));
    assert.ok(Math.abs(got.object_score - objectScore) <= 0.01, `${c.name}: object score ${got.object_score} vs ${objectScore}`);
    assert.equal(got.instances.length, order.length, `${c.name}: masks`);
    order.forEach((k, r) => {
      const g = got.instances[r];
      assert.ok(Math.abs(g.score - iou[k]) <= 0.01, `${c.name} #${r}: score ${g.score} vs transformers.js ${iou[k]}`);
      const columns = maskOf(g.mask);  // COCO RLE runs go down the columns
      const ours = new Uint8Array(W * H);
      for (let x = 0; x < W; x++) for (let y = 0; y < H; y++) ours[y * W + x] = columns[x * H + y];
      const theirs = masks.data.slice(k * W * H, (k + 1) * W * H);
      let inter = 0, union = 0;
      for (let p = 0; p < W * H; p++) inter += ours[p] & theirs[p], union += ours[p] | theirs[p];
      assert.ok(union > 0 && inter / union >= 0.99, `${c.name} #${r}: mask IoU with transformers.js ${inter / union}`);
    });
  }
});

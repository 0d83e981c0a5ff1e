#!/usr/bin/env node
// Click latency in the browser tab against native: the interactive (sam3-tracker) model loaded
// by the WebAssembly module on ONNX Runtime Web in headless Chromium (cross-origin isolated,
// WASM with one thread per core), and sam3-bench-clicks (native, the same files, image size,
// clicks and grid), side by side: image encode, a click on the encoded image (median of N, one
// positive click each: decoder run plus the core's masks at the image's size) and "everything".
// --profile adds the decoder's per-operator time per click, side by side: ONNX Runtime Web's
// profile of the tab's clicks (enableProfiling; the WASM build prints its events to the console)
// and ONNX Runtime's native profile of the graph sam3 runs natively (the optimized graph it saved
// in the model folder's .sam3-cache, else the file) on onnxruntime-node, the same ONNX Runtime
// version as sam3's, with as many threads as cores, fed tensors of the click's shapes.
//
//   node scripts/bench_clicks_browser.mjs --models build/bench-models/quick-tracker \
//        [--width 1280 --height 960 --clicks 20 --points-per-side 16 --devices wasm] [--profile] [--rounds N]
//
// --rounds N alternates N native and tab runs (each ratio from runs close in time; the median
// printed); --profile profiles the last round's tab run. Devices: wasm (the module as it loads),
// wasm-attnoff (attentionKernel "off", explicitly), wasm-float / wasm-floatoff (floatKernel
// "auto" / "off": the tab's float product for the image-side projections), webgpu. (The
// interactive model's decoder is never split at its attention: docs/browser.md, "Decode and
// clicks per operator".)
// --ab A,B (two WASM devices): A/B in one page instead: both models loaded side by side, the
// image encoded by each, then their clicks alternated (A, B, A, B, ...): the medians compare
// runs made at the same moments, on a machine whose load moves.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(repo, "tests/web/package.json"));
const { chromium } = require("playwright-core");
const { startStatic, stopStatic } = await import(path.join(repo, "tests/web/static_server.mjs"));
const { chromiumHomeEnv } = await import(path.join(repo, "tests/web/support.mjs"));
// onnxruntime-node (the native profile below) is ONNX Runtime's official build: its telemetry
// off, as sam3 turns it off.
process.env.ORT_DISABLE_TELEMETRY ??= "1";
const { profileByOp, profileFileByOp } = await import(path.join(repo, "scripts/ort_profile.mjs"));

const { values: args } = parseArgs({
  options: {
    models: { type: "string" }, web: { type: "string", default: path.join(repo, "build/web") },
    ort: { type: "string", default: path.join(repo, ".deps/onnxruntime-web") },
    bench: { type: "string", default: path.join(repo, "build/bin/sam3-bench-clicks") },
    image: { type: "string", default: path.join(repo, "examples/street.png") },
    width: { type: "string", default: "1280" }, height: { type: "string", default: "960" },
    clicks: { type: "string", default: "20" }, "points-per-side": { type: "string", default: "16" },
    devices: { type: "string", default: "wasm" }, profile: { type: "boolean", default: false },
    rounds: { type: "string", default: "1" }, ab: { type: "string" },
  },
});
if (!args.models) {
  console.error("usage: bench_clicks_browser.mjs --models TRACKER_DIR [--width W --height H --clicks N --points-per-side P --devices wasm,webgpu --profile --rounds N]");
  process.exit(2);
}
const W = Number(args.width), H = Number(args.height), N = Number(args.clicks), P = Number(args["points-per-side"]);
// sam3-bench-clicks' clicks: a 5 x 4 grid, then more rows as needed.
const CLICKS = Array.from({ length: N }, (_, i) => [((i % 5) + 0.5) * W / 5, ((Math.floor(i / 5) % 4) + 0.5) * H / 4]);

function nativeRun() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-clicks-"));
  try {
    const json = path.join(tmp, "native.json");
    const r = spawnSync(args.bench, ["--models", args.models, "--image", args.image, "--width", String(W), "--height", String(H),
      "--clicks", String(N), "--points-per-side", String(P), "--repeats", "1", "--json", json], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`sam3-bench-clicks failed: ${r.stderr}`);
    const stages = JSON.parse(readFileSync(json, "utf8")).stages;
    return { header: r.stdout.split("\n")[0], encode_image: stages.encode_image.sam3cpp, click: stages.click.sam3cpp,
      everything: stages.everything.sam3cpp };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function deviceOptions(run) {
  return { "wasm-attnoff": { attentionKernel: "off" }, "wasm-float": { floatKernel: "auto" }, "wasm-floatoff": { floatKernel: "off" } }[run] ?? {};
}

// --ab: both devices' models in one page, clicks alternated -> {a, b: {click, decode, float}}.
async function abRun(runs, baseUrl) {
  const home = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-clicks-home-"));
  const browser = await chromium.launch({ executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking"], env: chromiumHomeEnv(home) });
  try {
    const page = await browser.newPage();
    await page.goto(`${baseUrl}/`);
    return await page.evaluate(async ({ options, W, H, clicks }) => {
      const { Sam3 } = await import("/web/sam3-browser.mjs");
      const bitmap = await createImageBitmap(await (await fetch("/img/image")).blob());
      const canvas = new OffscreenCanvas(W, H);
      canvas.getContext("2d").drawImage(bitmap, 0, 0, W, H);
      const image = canvas.getContext("2d").getImageData(0, 0, W, H);
      const models = [];
      for (const o of options) {
        const m = await Sam3.load("/models/", { device: "wasm", cache: false, ...o });
        models.push({ m, e: await m.encode(image), times: [], decodes: [], float: 0 });
      }
      for (const [x, y] of clicks) {
        for (const r of models) {
          const t = performance.now();
          await r.m.segment(r.e, { points: [[x, y, "pos"]] });
          r.times.push(performance.now() - t);
          r.decodes.push(r.m.lastTimings.decode);
          r.float += r.m.sessions.decoder.lastTimings?.matmuls ?? 0;
        }
      }
      // The first 3 clicks' masks again, for the comparison with the CLI (on these pixels, as a PNG).
      for (const r of models) {
        r.answers = [];
        for (const [x, y] of clicks.slice(0, 3)) r.answers.push(await r.m.segment(r.e, { points: [[x, y, "pos"]] }));
      }
      const png = new Uint8Array(await (await canvas.convertToBlob({ type: "image/png" })).arrayBuffer());
      let binary = "";
      for (let i = 0; i < png.length; i += 8192) binary += String.fromCharCode(...png.subarray(i, i + 8192));
      const median = (v) => {
        v.sort((a, b) => a - b);
        return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
      };
      return { png: btoa(binary), runs: models.map((r) => ({ click: median(r.times), decode: median(r.decodes), floatMs: r.float / clicks.length,
        kernel: r.m.floatKernel, rewrites: r.m.rewrites.decoder, answers: r.answers })) };
    }, { options: runs.map(deviceOptions), W, H, clicks: CLICKS });
  } finally {
    await browser.close();
    rmSync(home, { recursive: true, force: true });
  }
}

async function browserRun(run, baseUrl, profiling) {
  const device = run.startsWith("wasm") ? "wasm" : run;
  const options = deviceOptions(run);
  const flags = ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking"];
  if (device === "webgpu") flags.push("--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader");
  const home = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-clicks-home-"));
  const browser = await chromium.launch({ executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium", args: flags,
    env: chromiumHomeEnv(home) });
  try {
    const page = await browser.newPage();
    const lines = [];
    if (profiling) page.on("console", (m) => lines.push(m.text()));
    await page.goto(`${baseUrl}/`);
    const r = await page.evaluate(async ({ device, options, W, H, clicks, P, profiling }) => {
      const { Sam3 } = await import("/web/sam3-browser.mjs");
      const m = await Sam3.load("/models/", { device, cache: false, ...options, ...(profiling ? { sessionOptions: { enableProfiling: true } } : {}) });
      // The image stretched to W x H, as sam3-bench-clicks does.
      const bitmap = await createImageBitmap(await (await fetch("/img/image")).blob());
      const canvas = new OffscreenCanvas(W, H);
      canvas.getContext("2d").drawImage(bitmap, 0, 0, W, H);
      const image = canvas.getContext("2d").getImageData(0, 0, W, H);
      let t = performance.now();
      const e = await m.encode(image);
      const encode = performance.now() - t;
      const times = [], decodes = [], cores = [];
      let attention = 0, floatMs = 0;  // ms in the tab's attention and float kernels over the clicks (copies included)
      for (const [x, y] of clicks) {
        t = performance.now();
        await m.segment(e, { points: [[x, y, "pos"]] });
        times.push(performance.now() - t);
        decodes.push(m.lastTimings.decode);
        cores.push(m.lastTimings.postprocess);
        attention += m.sessions.decoder.lastTimings?.attention ?? 0;
        floatMs += m.sessions.decoder.lastTimings?.matmuls ?? 0;
      }
      const median = (v) => {
        v.sort((a, b) => a - b);
        return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
      };
      const click = median(times), decode = median(decodes), core = median(cores);
      if (profiling) {
        m.sessions.decoder.endProfiling();  // the clicks' events only (the encode's are never printed)
        await new Promise((done) => setTimeout(done, 500));
      }
      t = performance.now();
      const all = await m.segment(e, { everything: true, points_per_side: P });
      return { device: m.device, threads: crossOriginIsolated ? navigator.hardwareConcurrency : 1, encode, click, decode, core,
        everything: performance.now() - t, masks: all.instances.length, attention: m.attentionKernel, attentionMs: attention / clicks.length,
        float: m.floatKernel, floatMs: floatMs / clicks.length };
    }, { device, options, W, H, clicks: CLICKS, P, profiling });
    const ops = profiling ? profileByOp(lines) : null;
    if (ops && r.attentionMs) ops["(the tab's attention kernel)"] = { n: N, ms: r.attentionMs * N };
    if (ops && r.floatMs) ops["(the tab's float kernel, copies included)"] = { n: N, ms: r.floatMs * N };
    return { ...r, run, ops };
  } finally {
    await browser.close();
    rmSync(home, { recursive: true, force: true });
  }
}

// The decoder as sam3 runs it natively (the graph ONNX Runtime optimized and sam3 saved in the
// model folder's .sam3-cache, loaded unoptimized as sam3 loads it; else the file as written,
// optimized), on onnxruntime-node with one thread per core, fed tensors of one click's shapes:
// {op: {n, ms}} summed over N runs after one unprofiled warm-up run.
async function nativeProfile() {
  const ort = require("onnxruntime-node");
  const graphs = path.join(args.models, "onnx");
  const cacheDir = path.join(graphs, ".sam3-cache");
  const cached = existsSync(cacheDir)
    ? readdirSync(cacheDir).filter((d) => d.startsWith("prompt_encoder_mask_decoder-")).map((d) => path.join(cacheDir, d, "optimized.onnx")).find(existsSync)
    : undefined;
  const file = cached ?? path.join(graphs, "prompt_encoder_mask_decoder.onnx");
  const tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-clicks-profile-"));
  const options = { intraOpNumThreads: os.cpus().length, graphOptimizationLevel: cached ? "disabled" : "all" };
  try {
    const warm = await ort.InferenceSession.create(file, options);
    const session = await ort.InferenceSession.create(file, { ...options, enableProfiling: true, profileFilePrefix: path.join(tmp, "decoder") });
    const feeds = {};
    session.inputNames.forEach((name, i) => {
      const shape = session.inputMetadata[i].shape.map((d, k) => (typeof d === "number" ? d : name === "input_boxes" && k === 1 ? 0 : 1));
      const n = shape.reduce((a, b) => a * b, 1);
      feeds[name] = name === "input_labels" ? new ort.Tensor("int64", BigInt64Array.from({ length: n }, () => 1n), shape)
        : name === "input_points" ? new ort.Tensor("float32", Float32Array.from({ length: n }, () => 500), shape)
          : new ort.Tensor("float32", Float32Array.from({ length: n }, () => Math.random() - 0.5), shape);
    });
    await warm.run(feeds);
    let ms = 0;
    for (let i = 0; i < N; ++i) {
      const t = performance.now();
      await session.run(feeds);
      ms += performance.now() - t;
    }
    session.endProfiling();
    await warm.release();
    await session.release();
    const written = readdirSync(tmp).find((f) => f.endsWith(".json"));
    return { file: path.relative(repo, file), ms: ms / N, ops: profileFileByOp(JSON.parse(readFileSync(path.join(tmp, written), "utf8"))) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

// Per-click operator times, native and each browser run, side by side (a Loop's time holds its
// body's kernels, listed too, so it is left out of the shares).
function profileTable(native, runs) {
  const ops = new Set([...Object.keys(native.ops), ...runs.flatMap((r) => Object.keys(r.ops))]);
  const share = (o, all, op) => (op === "Loop" ? "(its body)" : `${(100 * o / all).toFixed(1)}%`);
  const total = (x) => Object.entries(x).reduce((a, [op, o]) => a + (op === "Loop" ? 0 : o.ms), 0);
  const totals = [total(native.ops), ...runs.map((r) => total(r.ops))];
  const cell = (x, op, all) => (x[op] ? `${x[op].n / N} | ${(x[op].ms / N).toFixed(1)} | ${share(x[op].ms, all, op)}` : " | | ");
  const rows = [...ops].map((op) => [op, Math.max(native.ops[op]?.ms ?? 0, ...runs.map((r) => r.ops[op]?.ms ?? 0))])
    .sort((a, b) => b[1] - a[1]).filter(([, ms]) => ms / N >= 0.5).map(([op]) => op);
  const head = ["operator", "native kernels", "native ms", "share", ...runs.flatMap((r) => [`${r.label} kernels`, `${r.label} ms`, "share"])];
  const lines = [`| ${head.join(" | ")} |`, `|---|${head.slice(1).map(() => "---:").join("|")}|`];
  for (const op of rows) lines.push(`| ${op} | ${cell(native.ops, op, totals[0])} | ${runs.map((r, i) => cell(r.ops, op, totals[i + 1])).join(" | ")} |`);
  lines.push(`| all kernels | | ${(totals[0] / N).toFixed(1)} | | ${runs.map((r, i) => ` | ${(totals[i + 1] / N).toFixed(1)} | `).join(" | ")} |`);
  return lines.join("\n");
}

const imageDir = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-image-"));
writeFileSync(path.join(imageDir, "image"), readFileSync(args.image));
const { server, baseUrl } = await startStatic({
  routes: { "/web/ort/": args.ort, "/web/": args.web, "/models/": args.models, "/img/": imageDir },
  pages: { "/": "<!doctype html><title>sam3 click bench</title>" },
});
try {
  // Rounds alternate native and tab runs, so that each ratio compares runs made close in time
  // on a machine whose load changes (the median of the rounds' ratios is the reading).
  if (args.ab) {
    const runs = args.ab.split(",");
    const n = nativeRun();
    const load0 = os.loadavg()[0].toFixed(1);
    const { png, runs: [a, b] } = await abRun(runs, baseUrl);
    console.log(`${n.header}\nmodels ${args.models}; image ${W}x${H}; A/B in one page, clicks alternated, median of ${N} each; load ${load0} -> ${os.loadavg()[0].toFixed(1)}\n`);
    console.log("| run | click ms (median) | decoder run ms (median) | in the float kernel ms | click / native |");
    console.log("|---|---:|---:|---:|---:|");
    console.log(`| native (sam3-bench-clicks) | ${Math.round(n.click)} | | | 1.00 |`);
    for (const [run, r] of [[runs[0], a], [runs[1], b]]) {
      console.log(`| ${run} (float products: ${r.kernel?.build ? `the tab's kernel, ${r.kernel.build}, ${r.rewrites?.float_matmuls} products, ${r.rewrites?.segments} segments` : "ONNX Runtime Web's"}) | ${Math.round(r.click)} | ${Math.round(r.decode)} | ${r.floatMs.toFixed(1)} | ${(r.click / n.click).toFixed(2)} |`);
    }
    console.log(`\n${runs[1]} / ${runs[0]}: ${(b.click / a.click).toFixed(3)} (clicks)`);
    // Each run's first 3 clicks against the CLI's on the same pixels: same masks, mask IoU, largest score difference.
    const { maskIou } = await import(path.join(repo, "tests/web/coco_rle.mjs"));
    writeFileSync(path.join(imageDir, "stretched.png"), Buffer.from(png, "base64"));
    const cli = path.join(path.dirname(args.bench), "sam3");
    for (const [run, r] of [[runs[0], a], [runs[1], b]]) {
      let iou = 1, score = 0, same = true;
      CLICKS.slice(0, 3).forEach(([x, y], i) => {
        const out = spawnSync(cli, ["segment", "--models", args.models, "--image", path.join(imageDir, "stretched.png"), "--json",
          "--point", `${x},${y}`], { encoding: "utf8", maxBuffer: 1 << 28 });
        if (out.status !== 0) throw new Error(`sam3 segment failed: ${out.stderr}`);
        const want = JSON.parse(out.stdout).images[0].prompts[0], got = r.answers[i];
        same &&= want.instances.length === got.instances.length;
        score = Math.max(score, Math.abs((want.object_score ?? 0) - (got.object_score ?? 0)));
        want.instances.forEach((w, k) => {
          if (!got.instances[k]) return;
          iou = Math.min(iou, maskIou(got.instances[k].mask, w.mask));
          score = Math.max(score, Math.abs(got.instances[k].score - w.score));
        });
      });
      console.log(`${run} against the CLI (3 clicks): ${same ? "the same masks" : "a different number of masks"}, lowest mask IoU ${iou.toFixed(4)}, largest score difference ${score.toFixed(4)}`);
    }
  }
  const R = args.ab ? 0 : Number(args.rounds);
  const load = () => os.loadavg()[0].toFixed(1);
  const profiled = [];
  const ratios = {};
  for (let round = 1; round <= R; ++round) {
    const n = nativeRun();
    if (round === 1) {
      console.log(`${n.header}\nmodels ${args.models}; image ${W}x${H}; click: median of ${N}; everything: ${P}x${P} points; ${R} round(s), native then tab\n`);
      console.log("| round | run | encode_image ms | click ms (decoder run + core) | everything ms | click / native | load (1 min) |");
      console.log("|---:|---|---:|---:|---:|---:|---:|");
    }
    console.log(`| ${round} | native (sam3-bench-clicks) | ${Math.round(n.encode_image)} | ${Math.round(n.click)} | ${Math.round(n.everything)} | 1.00 | ${load()} |`);
    for (const device of args.devices.split(",")) {
      const r = await browserRun(device, baseUrl, args.profile && round === R);
      const how = r.device === "webgpu" ? "WebGPU (SwiftShader)"
        : `WASM (${r.threads} threads, attention: ${r.attention?.build ? `the tab's kernel, ${r.attention.build}` : "ONNX Runtime Web's"}, `
          + `float products: ${r.float?.build ? `the tab's kernel, ${r.float.build}` : "ONNX Runtime Web's"})`;
      (ratios[how] ??= []).push(r.click / n.click);
      console.log(`| ${round} | browser ${how} | ${Math.round(r.encode)} | ${Math.round(r.click)} (${Math.round(r.decode)} + ${Math.round(r.core)}) | ${Math.round(r.everything)} | ${(r.click / n.click).toFixed(2)} | ${load()} |`);
      if (r.ops) profiled.push({ label: r.device === "webgpu" ? "WebGPU" : r.float?.build ? "tab (float kernel)" : "tab", ops: r.ops });
    }
  }
  for (const [how, v] of Object.entries(ratios)) {
    v.sort((a, b) => a - b);
    const mid = v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    console.log(`\nclick / native, browser ${how}: median ${mid.toFixed(2)} of ${v.length} round(s) (${v.map((x) => x.toFixed(2)).join(", ")})`);
  }
  if (args.profile && !args.ab) {
    const native = await nativeProfile();
    console.log(`\nThe decoder per click, by operator (ONNX Runtime's profiles, mean of ${N} runs; native: ${native.file} on onnxruntime-node, ${os.cpus().length} threads, ${native.ms.toFixed(1)} ms a run)\n`);
    console.log(profileTable(native, profiled));
  }
  console.log(`\nCPU: ${os.cpus()[0]?.model} x ${os.cpus().length}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")} at the end`);
} finally {
  await stopStatic(server);
  rmSync(imageDir, { recursive: true, force: true });
}

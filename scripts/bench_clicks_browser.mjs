#!/usr/bin/env node
// Click latency in the browser tab against native: the interactive (sam3-tracker) model loaded
// by the WebAssembly module on ONNX Runtime Web in headless Chromium (cross-origin isolated,
// WASM with one thread per core), and sam3-bench-clicks (native, the same files, image size,
// clicks and grid), side by side: image encode, a click on the encoded image (median of N, one
// positive click each: decoder run plus the core's masks at the image's size) and "everything".
//
//   node scripts/bench_clicks_browser.mjs --models build/bench-models/quick-tracker \
//        [--width 1280 --height 960 --clicks 20 --points-per-side 16 --devices wasm]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(repo, "tests/web/package.json"));
const { chromium } = require("playwright-core");
const { startStatic, stopStatic } = await import(path.join(repo, "tests/web/static_server.mjs"));

const { values: args } = parseArgs({
  options: {
    models: { type: "string" }, web: { type: "string", default: path.join(repo, "build/web") },
    ort: { type: "string", default: path.join(repo, ".deps/onnxruntime-web") },
    bench: { type: "string", default: path.join(repo, "build/bin/sam3-bench-clicks") },
    image: { type: "string", default: path.join(repo, "examples/street.png") },
    width: { type: "string", default: "1280" }, height: { type: "string", default: "960" },
    clicks: { type: "string", default: "20" }, "points-per-side": { type: "string", default: "16" },
    devices: { type: "string", default: "wasm" },
  },
});
if (!args.models) {
  console.error("usage: bench_clicks_browser.mjs --models TRACKER_DIR [--width W --height H --clicks N --points-per-side P]");
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

async function browserRun(device, baseUrl) {
  const flags = ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking"];
  if (device === "webgpu") flags.push("--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader");
  const browser = await chromium.launch({ executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium", args: flags });
  try {
    const page = await browser.newPage();
    await page.goto(`${baseUrl}/`);
    return await page.evaluate(async ({ device, W, H, clicks, P }) => {
      const { Sam3 } = await import("/web/sam3-browser.mjs");
      const m = await Sam3.load("/models/", { device, cache: false });
      // The image stretched to W x H, as sam3-bench-clicks does.
      const bitmap = await createImageBitmap(await (await fetch("/img/image")).blob());
      const canvas = new OffscreenCanvas(W, H);
      canvas.getContext("2d").drawImage(bitmap, 0, 0, W, H);
      const image = canvas.getContext("2d").getImageData(0, 0, W, H);
      let t = performance.now();
      const e = await m.encode(image);
      const encode = performance.now() - t;
      const times = [], decodes = [], cores = [];
      for (const [x, y] of clicks) {
        t = performance.now();
        await m.segment(e, { points: [[x, y, "pos"]] });
        times.push(performance.now() - t);
        decodes.push(m.lastTimings.decode);
        cores.push(m.lastTimings.postprocess);
      }
      const median = (v) => {
        v.sort((a, b) => a - b);
        return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
      };
      const click = median(times), decode = median(decodes), core = median(cores);
      t = performance.now();
      const all = await m.segment(e, { everything: true, points_per_side: P });
      return { device: m.device, threads: crossOriginIsolated ? navigator.hardwareConcurrency : 1, encode, click, decode, core,
        everything: performance.now() - t, masks: all.instances.length };
    }, { device, W, H, clicks: CLICKS, P });
  } finally {
    await browser.close();
  }
}

const imageDir = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-image-"));
writeFileSync(path.join(imageDir, "image"), readFileSync(args.image));
const { server, baseUrl } = await startStatic({
  routes: { "/web/ort/": args.ort, "/web/": args.web, "/models/": args.models, "/img/": imageDir },
  pages: { "/": "<!doctype html><title>sam3 click bench</title>" },
});
try {
  const n = nativeRun();
  console.log(`${n.header}\nmodels ${args.models}; image ${W}x${H}; click: median of ${N}; everything: ${P}x${P} points\n`);
  console.log("| run | encode_image ms | click ms (decoder run + core) | everything ms | click / native |");
  console.log("|---|---:|---:|---:|---:|");
  console.log(`| native (sam3-bench-clicks) | ${Math.round(n.encode_image)} | ${Math.round(n.click)} | ${Math.round(n.everything)} | 1.00 |`);
  for (const device of args.devices.split(",")) {
    const r = await browserRun(device, baseUrl);
    const how = r.device === "webgpu" ? "WebGPU (SwiftShader)" : `WASM (${r.threads} threads)`;
    console.log(`| browser ${how} | ${Math.round(r.encode)} | ${Math.round(r.click)} (${Math.round(r.decode)} + ${Math.round(r.core)}) | ${Math.round(r.everything)} | ${(r.click / n.click).toFixed(2)} |`);
  }
} finally {
  await stopStatic(server);
  rmSync(imageDir, { recursive: true, force: true });
}

#!/usr/bin/env node
// sam3 in the browser against the native CLI on the same model files, image and prompts:
// load, preprocess, image encode, text encode, decode and postprocess (ms), and peak memory
// (the tab's renderer process against the CLI's), printed as a table. Headless Debian
// Chromium through playwright-core (tests/web/node_modules); WASM with threads (the page is
// cross-origin isolated), and WebGPU on SwiftShader's adapter when asked (correct, slow: it is
// the CPU). "webgpu" runs the int8 products rewritten into float operators (the module's
// default), "webgpu-int8" the files as written (their integer products on WASM).
//
//   node scripts/bench_browser.mjs --models DIR [--cli build/bin/sam3] [--web build/web]
//        [--devices wasm,webgpu,webgpu-int8] [--prompts 5] [--vocabulary data/clip/bpe_simple_vocab_16e6.txt.gz]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(repo, "tests/web/package.json"));
const { chromium } = require("playwright-core");
const { startStatic, stopStatic } = await import(path.join(repo, "tests/web/static_server.mjs"));
const { scenePng } = await import(path.join(repo, "tests/web/support.mjs"));

const { values: args } = parseArgs({
  options: {
    models: { type: "string" }, cli: { type: "string", default: path.join(repo, "build/bin/sam3") },
    web: { type: "string", default: path.join(repo, "build/web") },
    ort: { type: "string", default: path.join(repo, ".deps/onnxruntime-web") },
    devices: { type: "string", default: "wasm" }, prompts: { type: "string", default: "5" },
    vocabulary: { type: "string", default: path.join(repo, "data/clip/bpe_simple_vocab_16e6.txt.gz") },
  },
});
if (!args.models) {
  console.error("usage: bench_browser.mjs --models DIR [--devices wasm,webgpu] [--prompts N]");
  process.exit(2);
}
const TEXTS = ["car", "person", "road", "tree", "yellow school bus", "window", "dog", "sky"].slice(0, Number(args.prompts));
const tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-browser-"));
writeFileSync(path.join(tmp, "scene.png"), scenePng());

// The largest resident set among the processes of the Chromium whose profile is `profile`
// (the tab's renderer holds the WebAssembly memory), sampled every 100 ms.
function rendererPeak(profile) {
  let peak = 0;
  const timer = setInterval(() => {
    const parent = new Map(), rss = new Map();
    const ours = new Set();  // the processes started with our profile (browser, zygotes)
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const status = readFileSync(`/proc/${d}/status`, "utf8");
        parent.set(Number(d), Number(/PPid:\s+(\d+)/.exec(status)?.[1]));
        rss.set(Number(d), Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
        if (readFileSync(`/proc/${d}/cmdline`, "utf8").includes(`--user-data-dir=${profile}`)) ours.add(Number(d));
      } catch {
        // gone
      }
    }
    for (const [pid, value] of rss) {
      for (let p = pid, n = 0; p > 1 && n < 10; p = parent.get(p) ?? 0, n++) {
        if (ours.has(p)) {
          peak = Math.max(peak, value);
          break;
        }
      }
    }
  }, 100);
  return { stop: () => (clearInterval(timer), peak) };
}

async function browserRun(variant, baseUrl) {
  const device = variant.startsWith("webgpu") ? "webgpu" : variant;
  const int8AsFloat = variant !== "webgpu-int8";
  const flags = ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking"];
  if (device === "webgpu") flags.push("--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader");
  const profile = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium", args: flags });
  const memory = rendererPeak(profile);
  try {
    const page = await context.newPage();
    await page.goto(`${baseUrl}/`);
    return await page.evaluate(async ({ device, int8AsFloat, texts }) => {
      const { Sam3 } = await import("/web/sam3-browser.mjs");
      const t0 = performance.now();
      const m = await Sam3.load("/models/", { device, int8AsFloat, cache: false, vocabulary: "/vocab/bpe_simple_vocab_16e6.txt.gz" });
      const load = performance.now() - t0;
      const e = await m.encode(await (await fetch("/test/scene.png")).blob());
      const sum = { encode_text: 0, decode: 0, postprocess: 0 };
      for (const text of texts) {
        await m.segment(e, { text });
        for (const k of Object.keys(sum)) sum[k] += m.lastTimings[k];
      }
      return { device: m.device, rewritten: Object.values(m.rewrites).some((r) => r.matmuls + r.convs > 0), threads: crossOriginIsolated ? navigator.hardwareConcurrency : 1, load,
        preprocess: e.timings_ms.preprocess, encode_image: e.timings_ms.encode_image, ...sum };
    }, { device, int8AsFloat, texts: TEXTS });
  } finally {
    browserRun.peak = memory.stop();
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

// The CLI on the same image and prompts: its timings and its peak RSS (GNU time).
function nativeRun() {
  const r = spawnSync("/usr/bin/time", ["-f", "%M", args.cli, "segment", "--models", args.models, "--image",
    path.join(tmp, "scene.png"), "--json", ...TEXTS.flatMap((t) => ["--prompt", t])], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`native run failed: ${r.stderr}`);
  return { timings: JSON.parse(r.stdout).timings_ms, peak: Number(r.stderr.trim().split("\n").pop()) / 1024 };
}

const { server, baseUrl } = await startStatic({
  routes: { "/web/ort/": args.ort, "/web/": args.web, "/models/": args.models, "/test/": tmp,
    "/vocab/": path.dirname(args.vocabulary) },
  pages: { "/": "<!doctype html><title>sam3 bench</title>" },
});
try {
  // Native first (its first load prepares the files on this host; not counted).
  nativeRun();
  const { timings: n, peak: nativePeak } = nativeRun();
  console.log(`models ${args.models}; 400x240 image; ${TEXTS.length} prompts (ms; decode and text summed over them)\n`);
  console.log("| run | load | preprocess | encode_image | encode_text | decode | postprocess | peak RSS MB |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  const base = ["native CLI", n.load, n.preprocess, n.encode_image, n.encode_text, n.decode, n.postprocess, nativePeak];
  const row = (r) => console.log(`| ${r[0]} | ${r.slice(1).map((v) => Math.round(v)).join(" | ")} |`);
  row(base);
  const ratios = [];
  for (const device of args.devices.split(",")) {
    let r;
    try {
      r = await browserRun(device, baseUrl);
    } catch (e) {
      console.log(`| browser ${device} | failed: ${String(e.message).split("\n")[0]} (peak ${Math.round(browserRun.peak)} MB) |`);
      continue;
    }
    const how = r.device === "webgpu" ? ` (SwiftShader, ${r.rewritten ? "int8 products as float" : "files as written"})` : ` (${r.threads} threads)`;
    const cells = [`browser ${r.device}${how}`, r.load, r.preprocess,
      r.encode_image, r.encode_text, r.decode, r.postprocess, browserRun.peak];
    row(cells);
    const total = (x) => x[3] + x[4] + x[5] + x[6];
    ratios.push(`${cells[0]} / native: encode_image ${(cells[3] / base[3]).toFixed(2)}, total without load ${(total(cells) / total(base)).toFixed(2)}`);
  }
  console.log(`\n${ratios.join("\n")}`);
} finally {
  await stopStatic(server);
  rmSync(tmp, { recursive: true, force: true });
}

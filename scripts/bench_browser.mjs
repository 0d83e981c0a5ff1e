#!/usr/bin/env node
// sam3 in the browser against the native CLI on the same model files, image and prompts:
// load, preprocess, image encode, text encode, decode and postprocess (ms), and peak memory
// (the tab's renderer process against the CLI's; for the tab also from the end of the load on,
// the encode's and decodes' own), printed as a table. Headless Debian
// Chromium through playwright-core (tests/web/node_modules); WASM with threads (the page is
// cross-origin isolated), and WebGPU on SwiftShader's adapter when asked (correct, slow: it is
// the CPU). Runs ("--devices"):
//   wasm          the module as it loads by default: the graphs rewritten for the tab (attention
//                 fused, in query chunks), ONNX Runtime Web's CPU-only build
//   wasm-plain    the files as written on ort.all (what the module did before; the model card's
//                 own pipeline runs the same sessions on the same build: the fair peer)
//   webgpu        the module's default on WebGPU: ONNX Runtime's WebGPU provider build, attention
//                 fused, the int8 products as float operators
//   webgpu-plain  the files as written on ort.all's WebGPU (JSEP) provider
//   wasm-chunkN   the module on WASM with N queries per attention chunk (attentionChunk)
//   wasm-int8off  the module without its own int8 kernel (int8Kernel: "off": ONNX Runtime Web's
//                 DynamicQuantizeMatMul runs every product, as before the kernel)
//   wasm-novnni   the module in a Chromium whose V8 does not lower relaxed SIMD to VNNI
//                 (--js-flags=--no-enable-avx-vnni): the probe refuses the relaxed kernel
//   wasm-simd128  the module with the kernel's SIMD128 build forced (int8Kernel: "simd128")
//   wasm-attn     the module with its own attention kernel (attentionKernel: "auto"; off by default)
//   wasm-attnoff  the module without it (attentionKernel: "off", the default: the decoders'
//                 attention on ONNX Runtime Web, in query chunks)
//   wasm-attn-simd128  the attention kernel's SIMD128 build forced (attentionKernel: "simd128")
// Every tab run's results are compared with the CLI's (instances, scores, mask IoU).
// --profile adds ONNX Runtime's per-operator profile of each run's image encode and of its
// decodes (enableProfiling; the text encoder's runs are left out; the tab's own kernels' time
// as rows of their own), and native's decodes beside them: the decoder graph sam3 saved in the
// model folder's .sam3-cache on onnxruntime-node (the same ONNX Runtime, one thread per core),
// fed tensors of the tab's decoder inputs' shapes.
// --ab-decoder FILE (the decoder's file name in the folder, e.g. decoder.onnx) adds, in each
// run with the attention kernel (wasm-attn), the decoder's attention in the tab's kernel against ONNX Runtime Web's on the
// same inputs, alternating, 3 runs each: the module's decoder session (split at attention and
// int8 products) and the same file rewritten with attention in query chunks and only the int8
// products split (attentionKernel "off"'s graph), so both see the same load.
// --loads measures only Sam3.load on WASM: the peak memory of the tab's largest process for the
// files as written, the module without caches, its first load into an empty profile (the files
// and rewritten graphs then cached) and its second load in the same profile (from the caches).
//
//   node scripts/bench_browser.mjs --models DIR [--cli build/bin/sam3] [--web build/web]
//        [--devices wasm,wasm-plain,webgpu] [--prompts 5] [--profile] [--loads]
//        [--vocabulary data/clip/bpe_simple_vocab_16e6.txt.gz]
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
const { profileByOp } = await import(path.join(repo, "scripts/ort_profile.mjs"));
const { profileFileByOp } = await import(path.join(repo, "scripts/ort_profile.mjs"));
const { chromiumHomeEnv, scenePng } = await import(path.join(repo, "tests/web/support.mjs"));
const { maskIou } = await import(path.join(repo, "tests/web/coco_rle.mjs"));

const { values: args } = parseArgs({
  options: {
    models: { type: "string" }, cli: { type: "string", default: path.join(repo, "build/bin/sam3") },
    web: { type: "string", default: path.join(repo, "build/web") },
    ort: { type: "string", default: path.join(repo, ".deps/onnxruntime-web") },
    devices: { type: "string", default: "wasm,wasm-plain" }, prompts: { type: "string", default: "5" },
    profile: { type: "boolean", default: false }, loads: { type: "boolean", default: false },
    "ab-decoder": { type: "string", default: "" },
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
  let afterLoad = 0;  // the peak once the page says the model is loaded (the encode and decodes)
  let loaded = false;
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
          if (loaded) afterLoad = Math.max(afterLoad, value);
          break;
        }
      }
    }
  }, 100);
  return { loaded: () => { loaded = true; }, stop: () => (clearInterval(timer), { peak, afterLoad }),
    reset: () => { peak = 0; afterLoad = 0; }, peak: () => peak };
}

// What each run loads: its device and Sam3.load's options.
const VARIANTS = {
  wasm: { device: "wasm", options: {}, label: "module" },
  "wasm-plain": { device: "wasm", options: { fuseAttention: false, int8AsFloat: false, ortUrl: "/web/ort/ort.all.min.mjs" },
    label: "files as written, ort.all" },
  webgpu: { device: "webgpu", options: {}, label: "module" },
  "webgpu-plain": { device: "webgpu", options: { fuseAttention: false, int8AsFloat: false, ortUrl: "/web/ort/ort.all.min.mjs" },
    label: "files as written, ort.all JSEP" },
  "wasm-int8off": { device: "wasm", options: { int8Kernel: "off" }, label: "module, ONNX Runtime's int8 kernels" },
  "wasm-novnni": { device: "wasm", options: {}, flags: ["--js-flags=--no-enable-avx-vnni"], label: "module, V8 without VNNI lowering" },
  "wasm-simd128": { device: "wasm", options: { int8Kernel: "simd128" }, label: "module, the kernel's SIMD128 build" },
  "wasm-attn": { device: "wasm", options: { attentionKernel: "auto" }, label: "module, the attention kernel" },
  "wasm-attnoff": { device: "wasm", options: { attentionKernel: "off" }, label: "module, ONNX Runtime's attention" },
  "wasm-attn-simd128": { device: "wasm", options: { attentionKernel: "simd128" }, label: "module, the attention kernel's SIMD128 build" },
};

// "wasm-chunkN": the module on WASM with attentionChunk N (queries per chunk; the default 1024).
function variantOf(name) {
  const chunk = /^wasm-chunk(\d+)$/.exec(name);
  if (chunk) return { device: "wasm", options: { attentionChunk: Number(chunk[1]) }, label: `module, attention in chunks of ${chunk[1]} queries` };
  return VARIANTS[name] ?? (() => { throw new Error(`unknown run '${name}'`); })();
}

async function browserRun(variant, baseUrl) {
  const { device, options, label, flags: extra = [] } = variantOf(variant);
  const flags = ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking", ...extra];
  if (device === "webgpu") flags.push("--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader");
  const profile = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium", args: flags, env: chromiumHomeEnv(profile) });
  const memory = rendererPeak(profile);
  const lines = { encode: [], decode: [] };
  let phase = "encode";  // whose profile the console prints now
  try {
    const page = await context.newPage();
    page.on("console", (m) => {
      if (m.text() === "sam3-bench: loaded") memory.loaded();
      else if (m.text() === "sam3-bench: encode profiled") phase = "decode";
      else if (args.profile) lines[phase].push(m.text());
    });
    await page.goto(`${baseUrl}/`);
    const r = await page.evaluate(async ({ device, options, texts, profiling, abDecoder }) => {
      const { Sam3 } = await import("/web/sam3-browser.mjs");
      const t0 = performance.now();
      const m = await Sam3.load("/models/", { device, cache: false, vocabulary: "/vocab/bpe_simple_vocab_16e6.txt.gz", ...options,
        ...(profiling ? { sessionOptions: { enableProfiling: true } } : {}) });
      const load = performance.now() - t0;
      console.log("sam3-bench: loaded");
      const e = await m.encode(await (await fetch("/test/scene.png")).blob());
      if (profiling) {
        m.sessions.image.endProfiling();
        await new Promise((done) => setTimeout(done, 500));
        console.log("sam3-bench: encode profiled");
      }
      const sum = { encode_text: 0, decode: 0, postprocess: 0 };
      const decoder = m.sessions.decoder;
      let decoderFeeds = null;
      const run = decoder.run.bind(decoder);
      let lastFeeds = null;
      decoder.run = (feeds, ...rest) => {
        decoderFeeds ??= Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, { type: t.type, dims: [...t.dims] }]));
        lastFeeds = feeds;
        return run(feeds, ...rest);
      };
      let attentionKernelMs = 0, int8KernelMs = 0;
      const results = [];
      for (const text of texts) {
        results.push(await m.segment(e, { text }));
        for (const k of Object.keys(sum)) sum[k] += m.lastTimings[k];
        attentionKernelMs += decoder.lastTimings?.attention ?? 0;
        int8KernelMs += decoder.lastTimings?.linears ?? 0;
      }
      if (profiling) {
        m.sessions.decoder.endProfiling();
        await new Promise((done) => setTimeout(done, 500));
      }
      let ab = null;
      if (abDecoder && m.attentionKernel?.build && lastFeeds) {
        const core = await (await import("/web/sam3.mjs")).default();
        const bytes = new Uint8Array(await (await fetch(`/models/${abDecoder}`)).arrayBuffer());
        const p = core._malloc(bytes.byteLength);
        core.HEAPU8.set(bytes, p);
        const options = JSON.stringify({ fuse_attention: true, attention_chunk: 256, split_linears: true });
        const o = core._malloc(options.length + 1);
        core.stringToUTF8(options, o, options.length + 1);
        const answer = JSON.parse(core.UTF8ToString(core._sam3_rewrite_for_browser(p, bytes.byteLength, o)));
        const rewritten = core.HEAPU8.slice(answer.ptr, answer.ptr + answer.bytes);
        core._sam3_release_rewritten();
        const { SplitSession, readBundle } = await import("/web/sam3-int8.mjs");
        const ortOwn = await SplitSession.create(m.ort, readBundle(rewritten), { executionProviders: ["wasm"] }, decoder.kernel);
        ab = { kernel: [], ort: [] };
        for (let i = 0; i < 3; ++i) {
          for (const [name, session] of [["kernel", decoder], ["ort", ortOwn]]) {
            const t = performance.now();
            await session.run(lastFeeds);
            ab[name].push(performance.now() - t);
          }
        }
        for (const step of ortOwn.steps) await step.session?.release();
      }
      return { device: m.device, build: m.ortBuild, rewrites: m.rewrites, int8: m.int8Kernel, split: m.sessions.image.lastTimings ?? null,
        attention: m.attentionKernel, attentionKernelMs, int8KernelMs, decoderFeeds, results, ab,
        threads: crossOriginIsolated ? navigator.hardwareConcurrency : 1, load,
        preprocess: e.timings_ms.preprocess, encode_image: e.timings_ms.encode_image, ...sum };
    }, { device, options, texts: TEXTS, profiling: args.profile, abDecoder: args["ab-decoder"] });
    const decodes = args.profile ? profileByOp(lines.decode) : null;
    if (decodes && r.attentionKernelMs) decodes["(the tab's attention kernel, copies included)"] = { n: 0, ms: r.attentionKernelMs };
    if (decodes && r.int8KernelMs) decodes["(the tab's int8 kernel, copies included)"] = { n: 0, ms: r.int8KernelMs };
    return { ...r, label, ops: args.profile ? { "image encode": profileByOp(lines.encode), [`decodes (${TEXTS.length})`]: decodes } : null };
  } finally {
    ({ peak: browserRun.peak, afterLoad: browserRun.afterLoad } = memory.stop());
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

// Sam3.load alone on WASM, each of `loads` (Sam3.load's options) in a new tab of one browser
// profile (so the later ones find what the earlier ones cached), the first tab closed before
// the next opens -> [{load ms, peak MB, rewrites}].
async function loadRuns(baseUrl, loads) {
  const profile = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox", "--disable-quic", "--no-first-run"],
    env: chromiumHomeEnv(profile) });
  const memory = rendererPeak(profile);
  const out = [];
  try {
    for (const options of loads) {
      const page = await context.newPage();
      await page.goto(`${baseUrl}/`);
      await new Promise((done) => setTimeout(done, 1000));
      memory.reset();
      const r = await page.evaluate(async (options) => {
        const { Sam3 } = await import("/web/sam3-browser.mjs");
        const t0 = performance.now();
        const m = await Sam3.load("/models/", { device: "wasm", vocabulary: "/vocab/bpe_simple_vocab_16e6.txt.gz", ...options });
        return { load: performance.now() - t0, rewrites: m.rewrites, build: m.ortBuild };
      }, options);
      out.push({ ...r, peak: memory.peak() });
      await page.close();
      await new Promise((done) => setTimeout(done, 2000));
    }
  } finally {
    memory.stop();
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  return out;
}

// The CLI on the same image and prompts: its timings and its peak RSS (GNU time).
function nativeRun() {
  const r = spawnSync("/usr/bin/time", ["-f", "%M", args.cli, "segment", "--models", args.models, "--image",
    path.join(tmp, "scene.png"), "--json", ...TEXTS.flatMap((t) => ["--prompt", t])], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`native run failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout);
  return { timings: out.timings_ms, prompts: out.images[0].prompts, peak: Number(r.stderr.trim().split("\n").pop()) / 1024 };
}

// The tab's results against the CLI's: "same N instances, scores within D, mask IoU >= I" or
// what differs.
function compareResults(tab, cli) {
  let worstScore = 0, worstIou = 1, counts = true;
  cli.forEach((want, p) => {
    const got = tab[p];
    if (!got || got.instances.length !== want.instances.length) counts = false;
    want.instances.forEach((w, i) => {
      const g = got?.instances[i];
      if (!g) return;
      worstScore = Math.max(worstScore, Math.abs(g.score - w.score));
      worstIou = Math.min(worstIou, maskIou(g.mask, w.mask));
    });
  });
  const n = cli.reduce((a, p) => a + p.instances.length, 0), m = tab.reduce((a, p) => a + p.instances.length, 0);
  return `${counts ? `the same ${n} instances` : `OTHER INSTANCE COUNTS (tab ${m}, CLI ${n})`}, scores within ${worstScore.toFixed(4)}, mask IoU >= ${worstIou.toFixed(4)} (the instances both have)`;
}

// The decoder as sam3 runs it natively (the graph sam3 saved in .sam3-cache, loaded unoptimized
// as sam3 loads it), on onnxruntime-node with one thread per core, fed random tensors of the
// tab's decoder inputs' shapes, `runs` times after a warm-up run of another session -> {file, ms
// (all runs), ops}.
async function nativeDecoderProfile(feedShapes, runs) {
  const ort = require("onnxruntime-node");
  const cacheDir = path.join(args.models, ".sam3-cache");
  const cached = readdirSync(cacheDir).filter((d) => d.startsWith("decoder-")).map((d) => path.join(cacheDir, d, "optimized.onnx"))[0];
  const dir = mkdtempSync(path.join(os.tmpdir(), "sam3-bench-decoder-profile-"));
  const options = { intraOpNumThreads: os.cpus().length, graphOptimizationLevel: "disabled" };
  try {
    const feeds = {};
    for (const [name, { type, dims }] of Object.entries(feedShapes)) {
      const n = dims.reduce((a, b) => a * b, 1);
      feeds[name] = type === "int64" ? new ort.Tensor("int64", BigInt64Array.from({ length: n }, () => 1n), dims)
        : type === "bool" ? new ort.Tensor("bool", Uint8Array.from({ length: n }, () => 1), dims)
          : new ort.Tensor(type, Float32Array.from({ length: n }, () => Math.random() - 0.5), dims);
    }
    const warm = await ort.InferenceSession.create(cached, options);
    await warm.run(feeds);
    await warm.release();
    const session = await ort.InferenceSession.create(cached, { ...options, enableProfiling: true, profileFilePrefix: path.join(dir, "decoder") });
    const t0 = performance.now();
    for (let i = 0; i < runs; ++i) await session.run(feeds);
    const ms = performance.now() - t0;
    session.endProfiling();
    await session.release();
    const events = JSON.parse(readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith(".json"))), "utf8"));
    return { file: path.relative(repo, cached), ms, ops: profileFileByOp(events) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const { server, baseUrl } = await startStatic({
  routes: { "/web/ort/": args.ort, "/web/": args.web, "/models/": args.models, "/test/": tmp,
    "/vocab/": path.dirname(args.vocabulary) },
  pages: { "/": "<!doctype html><title>sam3 bench</title>" },
});
try {
  run: {
  if (args.loads) {
    const plain = await loadRuns(baseUrl, [{ cache: false, fuseAttention: false }]);
    const nocache = await loadRuns(baseUrl, [{ cache: false }]);
    const cached = await loadRuns(baseUrl, [{}, {}]);
    console.log(`models ${args.models}; Sam3.load on WASM alone: the largest process of the browser, sampled every 100 ms\n`);
    console.log("| load | ms | peak MB |\n|---|---:|---:|");
    const rows = [["files as written (no rewrite, no cache)", plain[0]], ["module, no cache (`cache: false`)", nocache[0]],
      ["module, first load (empty profile: downloads, rewrites, caches)", cached[0]],
      ["module, second load (the cached files and rewritten graphs)", cached[1]]];
    for (const [label, r] of rows) console.log(`| ${label} | ${Math.round(r.load)} | ${Math.round(r.peak)} |`);
    const from = (r) => Object.entries(r.rewrites).map(([k, v]) => `${k}: ${v.cached ? "cached" : `fused ${v.fused}`}`).join(", ");
    console.log(`\nrewrites: first load ${from(cached[0])}; second load ${from(cached[1])}`);
    console.log(`\nCPU: ${os.cpus()[0]?.model} x ${os.cpus().length}`);
    break run;
  }
  // Native first (its first load prepares the files on this host; not counted).
  nativeRun();
  const { timings: n, prompts: nativePrompts, peak: nativePeak } = nativeRun();
  console.log(`models ${args.models}; 400x240 image; ${TEXTS.length} prompts (ms; decode and text summed over them)\n`);
  console.log("| run | load | preprocess | encode_image | encode_text | decode | postprocess | peak RSS MB | after the load |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  const base = ["native CLI", n.load, n.preprocess, n.encode_image, n.encode_text, n.decode, n.postprocess, nativePeak, "-"];
  const row = (r) => console.log(`| ${r[0]} | ${r.slice(1).map((v) => (typeof v === "number" ? Math.round(v) : v)).join(" | ")} |`);
  row(base);
  const ratios = [];
  const profiles = [];
  const byRun = {};
  let nativeDecodes = null;  // --profile: native's decodes by operator
  for (const device of args.devices.split(",")) {
    let r;
    try {
      r = await browserRun(device, baseUrl);
    } catch (e) {
      console.log(`| browser ${device} | failed: ${String(e.message).split("\n")[0]} (peak ${Math.round(browserRun.peak)} MB) |`);
      continue;
    }
    const fused = Object.values(r.rewrites).reduce((n, x) => n + (x.fused ?? 0), 0);
    const kernel = r.int8?.build ? `, int8 kernel ${r.int8.build} (${r.rewrites.image.linears} products, ${r.rewrites.image.segments} segments)` : "";
    const how = `${r.label}: ${r.build}${r.device === "webgpu" ? ", SwiftShader" : `, ${r.threads} threads`}${fused ? `, ${fused} attention fused` : ""}${kernel}`;
    if (r.split) ratios.push(`${how}: image encode ${Math.round(r.split.segments)} ms in ONNX Runtime's segments, ${Math.round(r.split.linears)} ms in the int8 kernel (copies in and out included)`);
    if (r.int8 && !r.int8.build && r.device === "wasm") ratios.push(`${how}: no int8 kernel (${r.int8.reason})`);
    if (r.attention?.build || r.int8KernelMs) {
      ratios.push(`${how}: decodes ${Math.round(r.decode)} ms, of which ${Math.round(r.attentionKernelMs)} ms in the attention kernel (${r.attention?.build}; ${r.rewrites.decoder?.attention_steps} attention nodes) and ${Math.round(r.int8KernelMs)} ms in the int8 kernel (${r.rewrites.decoder?.linears} products; ${r.rewrites.decoder?.segments} segments; copies included)`);
    }
    if (!r.attention?.build && r.device === "wasm") ratios.push(`${how}: no attention kernel (${r.attention?.reason})`);
    ratios.push(`${how}: against the CLI: ${compareResults(r.results, nativePrompts)}`);
    if (r.ab) {
      const ms = (v) => v.map((x) => Math.round(x)).join(" / ");
      const median = (v) => [...v].sort((a, b) => a - b)[1];
      ratios.push(`${how}: the decoder, alternating in one page (ms, 3 runs each): attention in the tab's kernel ${ms(r.ab.kernel)}, on ONNX Runtime Web ${ms(r.ab.ort)}: median ${(median(r.ab.ort) / median(r.ab.kernel)).toFixed(2)}x faster with the kernel`);
    }
    if (args.profile && r.decoderFeeds && !nativeDecodes) nativeDecodes = await nativeDecoderProfile(r.decoderFeeds, TEXTS.length);
    const cells = [`browser ${r.device} (${how})`, r.load, r.preprocess,
      r.encode_image, r.encode_text, r.decode, r.postprocess, browserRun.peak, browserRun.afterLoad];
    row(cells);
    const total = (x) => x[3] + x[4] + x[5] + x[6];
    for (const [what, ops] of Object.entries(r.ops ?? {})) {
      if (!ops) continue;
      const all = Object.entries(ops).reduce((a, [op, o]) => a + (op === "Loop" ? 0 : o.ms), 0);
      profiles.push(`\n${cells[0]}: ${what} by operator (ONNX Runtime's profile; a Loop's time holds its body's, left out of the shares)\n\n`
        + "| operator | kernels | ms | share |\n|---|---:|---:|---:|\n"
        + Object.entries(ops).sort((a, b) => b[1].ms - a[1].ms).filter(([, o]) => o.ms >= 1)
          .map(([op, o]) => `| ${op} | ${o.n} | ${Math.round(o.ms)} | ${op === "Loop" ? "(its body)" : `${(100 * o.ms / all).toFixed(1)}%`} |`).join("\n"));
    }
    byRun[device] = cells;
    ratios.push(`${cells[0]} / native: encode_image ${(cells[3] / base[3]).toFixed(2)}, total without load ${(total(cells) / total(base)).toFixed(2)}`);
  }
  for (const d of ["wasm", "webgpu"]) {
    if (byRun[d] && byRun[`${d}-plain`]) {
      const [m, p] = [byRun[d], byRun[`${d}-plain`]];
      ratios.push(`${d}: files as written / module: encode_image ${(p[3] / m[3]).toFixed(2)}, decode ${(p[5] / m[5]).toFixed(2)}, peak memory ${(p[7] / m[7]).toFixed(2)}`);
    }
  }
  console.log(`\n${ratios.join("\n")}`);
  for (const p of profiles) console.log(p);
  if (nativeDecodes) {
    const { file, ms, ops } = nativeDecodes;
    const all = Object.values(ops).reduce((a, o) => a + o.ms, 0);
    console.log(`\nnative: decodes (${TEXTS.length}) by operator (${file} on onnxruntime-node, ${os.cpus().length} threads, ${Math.round(ms)} ms for the runs)\n`);
    console.log("| operator | kernels | ms | share |\n|---|---:|---:|---:|\n" + Object.entries(ops).sort((a, b) => b[1].ms - a[1].ms)
      .filter(([, o]) => o.ms >= 1).map(([op, o]) => `| ${op} | ${o.n} | ${Math.round(o.ms)} | ${(100 * o.ms / all).toFixed(1)}% |`).join("\n"));
  }
  console.log(`\nCPU: ${os.cpus()[0]?.model} x ${os.cpus().length}`);
  }
} finally {
  await stopStatic(server);
  rmSync(tmp, { recursive: true, force: true });
}

#!/usr/bin/env node
// The float product's ceiling per part, single thread (docs/browser.md, "The tab's own float
// product"): one product [M x K] x [K x N] by a constant weight, natively (ONNX Runtime on
// onnxruntime-node, one intra-op thread: MLAS's AVX-512 / AVX2 kernels with FMA), in headless
// Chromium on ONNX Runtime Web's MatMul (WASM, one thread: MLAS's 128-bit kernel) and in the tab's
// own kernel (apps/web/kernels/float_gemm.c, both builds, one thread), the page's runs
// interleaved; best of --rounds each, in ms and GFLOP/s. Inputs and outputs are copied in and out
// of each WebAssembly memory on every run (the kernel's as SplitSession does, ONNX Runtime Web's
// as any run does).
//
//   node scripts/bench_float_product.mjs [--shapes 5184x256x256,5184x256x2048] [--rounds 8] [--web build/web] [--tab-only]
//        [--threads N] [--kernels NAME=FILE.wasm,...]   (other builds of the kernels' module beside the two, e.g. other tile sizes)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
process.env.ORT_DISABLE_TELEMETRY ??= "1";

const { values: args } = parseArgs({ options: {
  shapes: { type: "string", default: "5184x256x256,5184x256x2048" }, rounds: { type: "string", default: "8" },
  web: { type: "string", default: path.join(repo, "build/web") }, "tab-only": { type: "boolean", default: false },
  kernels: { type: "string", default: "" }, threads: { type: "string", default: "1" }, ort: { type: "string", default: path.join(repo, ".deps/onnxruntime-web") },
} });
const shapes = args.shapes.split(",").map((s) => s.split("x").map(Number));
const rounds = Number(args.rounds);
const tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-float-product-"));

// One MatMul by a constant weight per shape (python3 with onnx and numpy, as tools/ uses).
const script = `
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
m, k, n, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
w = numpy_helper.from_array(np.random.default_rng(1).normal(0, 1 / np.sqrt(k), (k, n)).astype(np.float32), "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "product",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, k])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, n])], [w])
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]); model.ir_version = 8
onnx.save(model, out)`;
const files = shapes.map(([m, k, n]) => {
  const file = path.join(tmp, `product_${m}x${k}x${n}.onnx`);
  const r = spawnSync("/usr/bin/python3", ["-c", script, String(m), String(k), String(n), file], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return file;
});

async function native() {
  const ort = require("onnxruntime-node");
  const out = [];
  for (const [i, [m, k]] of shapes.entries()) {
    const s = await ort.InferenceSession.create(files[i], { intraOpNumThreads: Number(args.threads), interOpNumThreads: 1, executionMode: "sequential" });
    const x = new ort.Tensor("float32", Float32Array.from({ length: m * k }, (_, j) => Math.sin(j)), [1, m, k]);
    let best = Infinity;
    for (let r = 0; r < rounds + 2; ++r) {
      const t = performance.now();
      await s.run({ x });
      best = Math.min(best, performance.now() - t);
    }
    out.push(best);
    await s.release();
  }
  return out;
}

async function browser() {
  const extra = args.kernels ? args.kernels.split(",").map((e) => e.split("=")) : [];
  const routes = { "/web/ort/": args.ort, "/web/": args.web, "/files/": tmp };
  extra.forEach(([name, file]) => (routes[`/extra/${name}/`] = path.dirname(path.resolve(file))));
  const { server, baseUrl } = await startStatic({ routes,
    pages: { "/": "<!doctype html><title>float product bench</title>" } });
  const home = mkdtempSync(path.join(os.tmpdir(), "sam3-float-product-home-"));
  const b = await chromium.launch({ executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run"], env: chromiumHomeEnv(home) });
  try {
    const page = await b.newPage();
    await page.goto(`${baseUrl}/`);
    return await page.evaluate(async ({ shapes, names, rounds, extra, threads }) => {
      const ort = await import("/web/ort/ort.wasm.min.mjs");
      ort.env.wasm.wasmPaths = "/web/ort/";
      ort.env.wasm.numThreads = threads;
      const { Kernels } = await import("/web/sam3-int8.mjs");
      const kernels = {};
      const urls = [["relaxed", "/web/int8-relaxed.wasm"], ["simd128", "/web/int8-simd128.wasm"], ...extra];
      for (const [build, url] of urls) kernels[build] = await Kernels.create(new Uint8Array(await (await fetch(url)).arrayBuffer()), threads);
      const out = [];
      for (const [i, [m, k, n]] of shapes.entries()) {
        const bytes = new Uint8Array(await (await fetch(`/files/${names[i]}`)).arrayBuffer());
        const session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
        const data = Float32Array.from({ length: m * k }, (_, j) => Math.sin(j));
        const x = new ort.Tensor("float32", data, [1, m, k]);
        // A weight of the same size for the kernel (its values do not change the time).
        const weight = new Float32Array(k * n);
        { let s = 1; for (let j = 0; j < weight.length; ++j) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; weight[j] = (s / 2 ** 32 - 0.5) / 8; } }
        const packed = Object.fromEntries(Object.entries(kernels).map(([b, K]) => [b, K.addMatMul({ weight, k, n, bias: null })]));
        const best = { ort: Infinity, ...Object.fromEntries(Object.keys(kernels).map((b) => [b, Infinity])) };
        let worst = 0;
        for (let r = 0; r < rounds + 2; ++r) {  // (2 warm-up rounds: V8 optimizes a function after it ran a while)
          let t = performance.now();
          await session.run({ x });
          best.ort = Math.min(best.ort, performance.now() - t);
          for (const b of Object.keys(kernels)) {
            t = performance.now();
            const y = await kernels[b].matmul(packed[b], data, m);
            best[b] = Math.min(best[b], performance.now() - t);
            if (r === 0 && b === "relaxed") {  // (a check that the kernel computed the product: one row by hand)
              for (let c = 0; c < n; ++c) {
                let s = 0;
                for (let j = 0; j < k; ++j) s += data[j] * weight[j * n + c];
                worst = Math.max(worst, Math.abs(s - y[c]));
              }
            }
          }
        }
        await session.release();
        out.push({ ...best, worst });
      }
      return { out, ua: navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] };
    }, { shapes, names: files.map((f) => path.basename(f)), rounds,
      extra: extra.map(([name, file]) => [name, `/extra/${name}/${path.basename(file)}`]), threads: Number(args.threads) });
  } finally {
    await b.close();
    await stopStatic(server);
    rmSync(home, { recursive: true, force: true });
  }
}

try {
  const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "?";
  const load0 = os.loadavg()[0].toFixed(1);
  const n = args["tab-only"] ? shapes.map(() => NaN) : await native();
  const tab = await browser();
  const load1 = os.loadavg()[0].toFixed(1);
  console.log(`${cpu}, ${tab.ua}, ${args.threads} thread(s), best of ${rounds}; load average ${load0} -> ${load1}`);
  console.log("| product | native ONNX Runtime | ONNX Runtime Web MatMul | the kernel, relaxed | the kernel, SIMD128 |");
  console.log("|---|---:|---:|---:|---:|");
  for (const [i, [m, k, nn]] of shapes.entries()) {
    const gf = (ms) => `${ms.toFixed(1)} ms, ${(2 * m * k * nn / ms / 1e6).toFixed(1)} GFLOP/s`;
    const t = tab.out[i];
    if (t.worst > 1e-3) throw new Error(`the kernel's product is wrong (row 0 off by ${t.worst})`);
    const more = Object.keys(t).filter((b) => !["ort", "relaxed", "simd128", "worst"].includes(b)).map((b) => `${b}: ${gf(t[b])}`);
    console.log(`| [${m} x ${k}] x [${k} x ${nn}] | ${gf(n[i])} | ${gf(t.ort)} | ${gf(t.relaxed)} | ${gf(t.simd128)} |${more.length ? ` ${more.join(" | ")} |` : ""}`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

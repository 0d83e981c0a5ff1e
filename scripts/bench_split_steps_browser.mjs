#!/usr/bin/env node
// Where a split graph's run goes in the tab: one decoder graph (the interactive model's, by
// default) as ONNX Runtime Web runs it whole and as the tab runs it split at the float kernel's
// products (SplitSession), both in one Chromium page, runs alternated; each segment's run timed
// in its parts (ONNX Runtime's model_run and kernels from its profile, the rest around it), and
// optionally Chromium's CPU profile of the split runs (self time by function).
//
//   node scripts/bench_split_steps_browser.mjs --model build/bench-models/quick-tracker/onnx/prompt_encoder_mask_decoder.onnx
//        [--runs 6] [--cpu-profile] [--split '{"split_matmuls": true, "matmul_min_rows": 1024}']
import { mkdtempSync, rmSync } from "node:fs";
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

const { values: args } = parseArgs({
  options: {
    model: { type: "string" }, web: { type: "string", default: path.join(repo, "build/web") },
    ort: { type: "string", default: path.join(repo, ".deps/onnxruntime-web") },
    runs: { type: "string", default: "6" }, "cpu-profile": { type: "boolean", default: false },
    "ort-profile": { type: "boolean", default: false }, "feeds-experiment": { type: "string" },
    split: { type: "string", default: '{"split_matmuls": true, "matmul_min_rows": 1024}' },
    options: { type: "string", default: "{}" },
  },
});
if (!args.model) {
  console.error("usage: bench_split_steps_browser.mjs --model FILE.onnx [--runs N] [--cpu-profile] [--split JSON] [--options JSON]");
  process.exit(2);
}

const { server, baseUrl } = await startStatic({
  routes: { "/web/ort/": args.ort, "/web/": args.web, "/model/": path.dirname(path.resolve(args.model)),
    "/page/": path.join(repo, "tests/web/page") },
  pages: { "/": "<!doctype html><title>sam3 split steps</title>" },
});
const home = mkdtempSync(path.join(os.tmpdir(), "sam3-split-steps-home-"));
const browser = await chromium.launch({ executablePath: process.env.SAM3_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking"], env: chromiumHomeEnv(home) });
try {
  const page = await browser.newPage();
  const lines = [];
  page.on("console", (m) => lines.push(m.text()));
  await page.goto(`${baseUrl}/`);
  const load0 = os.loadavg()[0].toFixed(1);
  await page.evaluate(async ({ file, split, options }) => {
    const { loadRuntime, rewriteForBrowser } = await import("/page/split.mjs");
    const rt = await loadRuntime({ float: "auto", int8: "auto" });
    const bytes = new Uint8Array(await (await fetch(`/model/${file}`)).arrayBuffer());
    const base = { fuse_attention: true, attention_chunk: 256, int8_as_float: false };
    const whole = rewriteForBrowser(rt.core, bytes, base).rewritten ?? bytes;
    const { answer, rewritten } = rewriteForBrowser(rt.core, bytes, { ...base, ...split });
    if (!rewritten) throw new Error(`nothing split: ${JSON.stringify(answer)}`);
    const sessionOptions = { executionProviders: ["wasm"], logSeverityLevel: 3, ...options };
    const w = await rt.ort.InferenceSession.create(whole, sessionOptions);
    const s = await rt.SplitSession.create(rt.ort, rt.readBundle(rewritten), sessionOptions, rt.kernel);
    // A click's inputs: unknown sizes 1 (no boxes), points in the image.
    const feeds = {};
    w.inputNames.forEach((name, i) => {
      const meta = w.inputMetadata[i];
      const shape = meta.shape.map((d, k) => (typeof d === "number" ? d : name === "input_boxes" && k === 1 ? 0 : 1));
      const n = shape.reduce((a, b) => a * b, 1);
      feeds[name] = meta.type === "int64" ? new rt.ort.Tensor("int64", BigInt64Array.from({ length: n }, () => 1n), shape)
        : name === "input_points" ? new rt.ort.Tensor("float32", Float32Array.from({ length: n }, () => 500), shape)
          : new rt.ort.Tensor("float32", Float32Array.from({ length: n }, (_, j) => Math.sin(j) * 0.5), shape);
    });
    globalThis.bench = { rt, w, s, feeds, answer };
  }, { file: path.basename(args.model), split: JSON.parse(args.split), options: JSON.parse(args.options) });

  const R = Number(args.runs);
  const result = await page.evaluate(async (R) => {
    const { w, s, feeds, answer } = globalThis.bench;
    const whole = [], split = [], steps = [], products = [];
    for (let i = 0; i < R; ++i) {
      let t = performance.now();
      await w.run(feeds);
      whole.push(performance.now() - t);
      t = performance.now();
      await s.run(feeds);
      split.push(performance.now() - t);
      steps.push(s.lastTimings.steps.map((x) => Math.round(x)));
      products.push(s.lastTimings.matmuls + s.lastTimings.linears + s.lastTimings.attention);
    }
    const kinds = s.steps.map((st) => (st.segment ? `segment (${st.segment.inputs.length} in, ${st.segment.outputs?.length ?? "?"} out)`
      : st.matmul ? "float product" : st.linear ? "int8 product" : "attention"));
    // What crosses each boundary: a segment's inputs and outputs (MB of the last run).
    const sizes = new Map();
    let fresh = 0;  // bytes of the new arrays the segments' runs return
    const orig = s.steps.map((st) => st.session?.run.bind(st.session));
    s.steps.forEach((st, i) => {
      if (!st.session) return;
      st.session.run = async (feeds) => {
        const out = await orig[i](feeds);
        const mb = (t) => (t.data.byteLength / 1e6).toFixed(1);
        fresh += Object.values(out).reduce((a, t) => a + t.data.byteLength, 0);
        sizes.set(i, `in ${Object.entries(feeds).map(([n, t]) => `${n} ${mb(t)}${t.data.buffer instanceof SharedArrayBuffer ? " (view)" : ""}`).join(", ")}; out ${Object.entries(out).map(([n, t]) => `${n} ${mb(t)}`).join(", ")}`);
        return out;
      };
    });
    await s.run(feeds);
    s.steps.forEach((st, i) => { if (st.session) st.session.run = orig[i]; });
    return { whole, split, steps, kinds, stats: answer, sizes: [...sizes], fresh, kernelCopies: s.lastTimings.copiedOut, products };
  }, R);
  console.log(`model ${args.model}; split ${args.split}; session options ${args.options}; load ${load0} -> ${os.loadavg()[0].toFixed(1)}`);
  console.log(`rewrite: ${JSON.stringify(result.stats)}`);
  const med = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  console.log(`whole ms: ${result.whole.map(Math.round).join(" ")} (median ${Math.round(med(result.whole))})`);
  console.log(`split ms: ${result.split.map(Math.round).join(" ")} (median ${Math.round(med(result.split))}); `
    + `in the kernels: ${result.products.map(Math.round).join(" ")} (median ${Math.round(med(result.products))})`);
  result.kinds.forEach((k, i) => console.log(`  step ${i} ${k}: ${result.steps.map((r) => r[i]).join(" ")}`));
  for (const [i, text] of result.sizes) console.log(`  step ${i}: ${text}`);
  console.log(`a split run's segments return ${(result.fresh / 1e6).toFixed(1)} MB of new arrays; copied out of the kernels' memory: ${result.kernelCopies === undefined ? "(not counted)" : `${(result.kernelCopies / 1e6).toFixed(1)} MB`}`);

  if (args["feeds-experiment"] !== undefined) {
    // One segment run alone, its inputs given three ways (the run's own: ONNX Runtime's arrays and
    // views of the kernels' shared memory; all as arrays of their own; all in a SharedArrayBuffer),
    // and with every output fetched or only the smallest: ms a run, best and median of 7.
    const lines2 = await page.evaluate(async (i) => {
      const { s, feeds } = globalThis.bench;
      const step = s.steps[i];
      let captured = null;
      const run = step.session.run.bind(step.session);
      step.session.run = async (f, ...rest) => {
        captured = Object.fromEntries(Object.entries(f).map(([n, t]) => [n, t]));
        captured = Object.fromEntries(Object.entries(captured).map(([n, t]) => [n, new globalThis.bench.rt.ort.Tensor(t.type, t.data.slice(), t.dims)]));
        return run(f, ...rest);
      };
      await s.run(feeds);
      step.session.run = run;
      const ort = globalThis.bench.rt.ort;
      const shared = Object.fromEntries(Object.entries(captured).map(([n, t]) => {
        const sab = new t.data.constructor(new SharedArrayBuffer(t.data.byteLength));
        sab.set(t.data);
        return [n, new ort.Tensor(t.type, sab, t.dims)];
      }));
      const outputs = step.session.outputNames;
      const out = [];
      const timeIt = async (label, f, fetch) => {
        const ms = [];
        for (let r = 0; r < 7; ++r) {
          const t0 = performance.now();
          await (fetch ? step.session.run(f, fetch) : step.session.run(f));
          ms.push(performance.now() - t0);
        }
        ms.sort((a, b) => a - b);
        out.push(`  ${label}: best ${ms[0].toFixed(1)} ms, median ${ms[3].toFixed(1)}`);
      };
      const bytes = (f) => (Object.values(f).reduce((a, t) => a + t.data.byteLength, 0) / 1e6).toFixed(1);
      out.push(`step ${i}: inputs ${bytes(captured)} MB, outputs ${outputs.join(", ")}`);
      let smallest = null, least = Infinity;
      const all = await step.session.run(captured);
      for (const [n, t] of Object.entries(all)) if (t.data.byteLength < least) [smallest, least] = [n, t.data.byteLength];
      out.push(`  outputs ${(Object.values(all).reduce((a, t) => a + t.data.byteLength, 0) / 1e6).toFixed(1)} MB; the smallest ${smallest}`);
      for (let round = 0; round < 2; ++round) {
        await timeIt("inputs as arrays of their own, every output", captured);
        await timeIt("inputs in a SharedArrayBuffer, every output", shared);
        await timeIt(`inputs as arrays of their own, only ${smallest}`, captured, [smallest]);
      }
      return out;
    }, Number(args["feeds-experiment"]));
    console.log(lines2.join("\n"));
  }

  if (args["ort-profile"]) {
    // ONNX Runtime's own account of each session's runs (sessions made with enableProfiling):
    // model_run (its whole run), the kernels' sum, against the run as JavaScript timed it.
    const sessions = await page.evaluate(() => ["w", ...globalThis.bench.s.steps.map((st, i) => (st.session ? i : null)).filter((i) => i !== null)]);
    for (const which of sessions) {
      const from = lines.length;
      await page.evaluate((which) => (which === "w" ? globalThis.bench.w : globalThis.bench.s.steps[which].session).endProfiling(), which);
      await new Promise((done) => setTimeout(done, 500));
      const events = [];
      for (const line of lines.slice(from)) {
        for (const part of line.split("\n")) {
          try { events.push(JSON.parse(part.trim().replace(/,$/, ""))); } catch { /* not an event */ }
        }
      }
      const sum = (f) => events.filter(f).reduce((a, e) => a + e.dur / 1000, 0);
      const runs = events.filter((e) => e.name === "model_run").length || 1;
      // MatMuls over at least 1024 rows (what the float kernel takes), from their output shapes.
      const rows = (e) => {
        const shape = Object.values(e.args?.output_type_shape?.[0] ?? {})[0] ?? [];
        return shape.slice(0, -1).reduce((a, b) => a * b, 1);
      };
      const big = sum((e) => e.cat === "Node" && e.name.endsWith("_kernel_time") && e.args?.op_name === "MatMul" && rows(e) >= 1024);
      console.log(`  ${which === "w" ? "whole graph" : `step ${which}`}: ${runs} runs; model_run ${(sum((e) => e.name === "model_run") / runs).toFixed(1)} ms a run, `
        + `kernels ${(sum((e) => e.cat === "Node" && e.name.endsWith("_kernel_time")) / runs).toFixed(1)}, `
        + `SequentialExecutor ${(sum((e) => e.name === "SequentialExecutor::Execute") / runs).toFixed(1)}`
        + (big ? `; MatMul over >= 1024 rows ${(big / runs).toFixed(1)}` : ""));
    }
  }

  if (args["cpu-profile"]) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
    for (const which of ["w", "s"]) {
      await cdp.send("Profiler.start");
      await page.evaluate(async ({ which, R }) => {
        for (let i = 0; i < R; ++i) await globalThis.bench[which].run(globalThis.bench.feeds);
      }, { which, R: Math.max(2, Math.floor(R / 2)) });
      const { profile } = await cdp.send("Profiler.stop");
      const self = new Map();
      const dt = new Map();
      profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0)));
      for (const n of profile.nodes) {
        const f = n.callFrame;
        const key = `${f.functionName || "(anonymous)"} ${f.url ? `${f.url.split("/").pop()}:${f.lineNumber}` : ""}`;
        self.set(key, (self.get(key) ?? 0) + (dt.get(n.id) ?? 0) / 1000);
      }
      const total = [...self.values()].reduce((a, b) => a + b, 0);
      console.log(`\nCPU profile of the ${which === "w" ? "whole graph's" : "split graph's"} runs (main thread, self ms; ${total.toFixed(0)} ms sampled):`);
      for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${ms.toFixed(1).padStart(8)}  ${k}`);
    }
  }
  console.log(`\nCPU: ${os.cpus()[0]?.model} x ${os.cpus().length}; load ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
} finally {
  await browser.close();
  await stopStatic(server);
  rmSync(home, { recursive: true, force: true });
}

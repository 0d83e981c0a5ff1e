// The web page computing in the browser, as a user drives it: `sam3 serve`'s /app/ (models
// from /models/, cross-origin isolated) and the same app from `sam3 web export` on a plain
// static server. Same instances as the native CLI; no request carries the image.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { maskIou } from "./coco_rle.mjs";
import { startStatic, stopStatic } from "./static_server.mjs";
import { launchBrowser, scenePng, startServer, stopServer } from "./support.mjs";

const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;
const SHOTS = process.env.SAM3_WEB_OUT || os.tmpdir();

let tmp, browser;
let failedRequests = [];  // the last useApp's responses of status 400 or more (a line each in the console)

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-app-"));
  writeFileSync(path.join(tmp, "scene.png"), scenePng());
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function native(layout, text) {
  const out = execFileSync(CLI, ["segment", "--models", path.join(MODELS, layout), "--image", path.join(tmp, "scene.png"),
    "--prompt", text, "--threshold", "0.05", "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out).images[0].prompts[0];
}

// Opens the app, loads the scene, types "red"; returns the results JSON it downloads.
async function useApp(url, shot) {
  const page = await browser.newPage({ viewport: { width: 1366, height: 800 }, acceptDownloads: true });
  const requests = [];
  page.on("request", (r) => requests.push({ method: r.method(), url: r.url(), size: r.postDataBuffer()?.length ?? 0 }));
  failedRequests = [];
  page.on("response", (r) => { if (r.status() >= 400) failedRequests.push(`${r.status()} ${r.request().method()} ${r.url()}`); });
  await page.goto(url);
  await page.locator("#model-status.ready").waitFor({ timeout: 60000 });
  const pill = await page.locator("#model-status").innerText();
  assert.match(pill, /usls model ready · WASM in this browser/);
  assert.ok(await page.evaluate(() => crossOriginIsolated), "the app is cross-origin isolated");
  await page.setInputFiles("#file-input", path.join(tmp, "scene.png"));
  await page.locator("#prompt-input:not([disabled])").waitFor({ timeout: 60000 });
  await page.fill("#prompt-input", "red");
  await page.press("#prompt-input", "Enter");
  await page.waitForFunction(() => document.querySelectorAll("#instance-list li.visible").length === 2, null, { timeout: 60000 });
  await page.screenshot({ path: path.join(SHOTS, shot) });
  await page.fill("#threshold", "0.05");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-json")]);
  const saved = path.join(tmp, `${shot}.json`);
  await download.saveAs(saved);
  await page.close();
  const posts = requests.filter((r) => r.method !== "GET" && r.method !== "HEAD");
  assert.deepEqual(posts, [], "nothing is sent to a server: the image stays in the tab");
  assert.ok(!requests.some((r) => r.url.includes("/v1/")), "the server's API is not used");
  const answer = JSON.parse(readFileSync(saved, "utf8"));  // the module's answer as it came: the CLI's document
  assert.deepEqual(Object.keys(answer), ["model", "images", "timings_ms"]);
  assert.deepEqual(Object.keys(answer.images[0]), ["image_id", "width", "height", "prompts"]);
  return answer.images[0].prompts[0];
}

function assertSameAsNative(got, want) {
  assert.equal(got.instances.length, want.instances.length, "instance count");
  got.instances.forEach((g, i) => {
    const w = want.instances[i];
    assert.ok(Math.abs(g.score - w.score) <= 0.01, `#${i}: score ${g.score} vs native ${w.score}`);
    assert.ok(maskIou(g.mask, w.mask) >= 0.99, `#${i}: mask IoU`);
  });
}

test("sam3 serve's /app/ segments in the browser what sam3 segment finds", async () => {
  const { server, baseUrl } = await startServer();
  try {
    const head = await fetch(`${baseUrl}/models/decoder.onnx`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("accept-ranges"), "bytes");
    const part = await fetch(`${baseUrl}/models/decoder.onnx`, { headers: { Range: "bytes=0-3" } });
    assert.equal(part.status, 206);
    assert.equal((await part.arrayBuffer()).byteLength, 4);
    for (const escape of ["/models/%2e%2e/usls/decoder.onnx", "/models/.sam3-cache", "/app/%2e%2e%2fsam3.wasm"]) {
      assert.equal((await fetch(baseUrl + escape)).status, 404, escape);
    }
    const got = await useApp(`${baseUrl}/app/?device=wasm`, "sam3-app.png");
    assertSameAsNative(got, native("usls", "red"));
    // A new user's trial: the page probed ~81 candidate file names under /models/ (HEAD, 404s in
    // the console); config.json lists the model's files now.
    assert.deepEqual(failedRequests, [], "a fresh load of /app/ asks for no missing file");
  } finally {
    await stopServer(server);
  }
});

// docs/browser.md: in /app/ no request carries the image. A model that cannot load in the tab
// (WebGPU asked for where there is no adapter) must not quietly hand the image to the server.
test("/app/ whose model failed to load in the tab sends the image nowhere", async () => {
  const { server, baseUrl } = await startServer();
  const page = await browser.newPage();
  try {
    const requests = [];
    page.on("request", (r) => requests.push({ method: r.method(), url: r.url() }));
    await page.goto(`${baseUrl}/app/?device=webgpu`);  // this browser runs with --disable-gpu
    await page.locator("#model-status.error").waitFor({ timeout: 60000 });
    await page.setInputFiles("#file-input", path.join(tmp, "scene.png"));
    await page.waitForFunction(() => /no model is loaded in this browser/.test(document.getElementById("status").textContent),
      null, { timeout: 20000 });
    assert.ok(!requests.some((r) => r.url.includes("/v1/")), `nothing reaches the server's API: ${JSON.stringify(requests)}`);
    assert.ok(await page.locator("#drop-zone").isVisible(), "no image on the stage");
  } finally {
    await page.close();
    await stopServer(server);
  }
});

test("sam3 web export: the same app from a plain static server, and never over files it did not write", async () => {
  const site = path.join(tmp, "site");
  execFileSync(CLI, ["web", "export", site], { stdio: "ignore" });
  assert.match(readFileSync(path.join(site, "_headers"), "utf8"), /Cross-Origin-Embedder-Policy: require-corp/);
  const nginx = readFileSync(path.join(site, "nginx.conf"), "utf8");
  assert.match(nginx, /add_header Cross-Origin-Opener-Policy "same-origin"/);
  // A types block alone would replace the server's whole MIME map: nginx's own map comes first.
  assert.ok(nginx.indexOf("include mime.types;") >= 0 && nginx.indexOf("include mime.types;") < nginx.indexOf("types {"), nginx);
  execFileSync(CLI, ["web", "export", site], { stdio: "ignore" });  // again over its own files
  const foreign = path.join(tmp, "foreign");
  execFileSync("mkdir", [foreign]);
  writeFileSync(path.join(foreign, "index.html"), "mine");
  const refused = spawnSync(CLI, ["web", "export", foreign], { encoding: "utf8" });
  assert.equal(refused.status, 6, refused.stderr);
  assert.match(refused.stderr, /was not written by sam3 web export/);
  assert.equal(readFileSync(path.join(foreign, "index.html"), "utf8"), "mine");
  // Stopped half-way (files over 64 KB refused, as on a full disk): the small files are written,
  // sam3.wasm is not; run again, it finishes over its own files.
  const stopped = path.join(tmp, "stopped");
  const partial = spawnSync("bash", ["-c", `trap '' XFSZ; ulimit -f 64; exec "$0" web export "$1"`, CLI, stopped],
                            { encoding: "utf8" });
  assert.equal(partial.status, 6, partial.stderr);
  assert.match(partial.stderr, /cannot write/);
  assert.ok(existsSync(path.join(stopped, "index.html")) && !existsSync(path.join(stopped, "sam3.wasm")));
  const resumed = spawnSync(CLI, ["web", "export", stopped], { encoding: "utf8" });
  assert.equal(resumed.status, 0, resumed.stderr);
  assert.ok(existsSync(path.join(stopped, "sam3.wasm")));

  const { server, baseUrl } = await startStatic({ routes: { "/models/": MODELS, "/": site } });
  try {
    const got = await useApp(`${baseUrl}/index.html?models=/models/usls/&device=wasm`, "sam3-web-export.png");
    assertSameAsNative(got, native("usls", "red"));
  } finally {
    await stopStatic(server);
  }
});

// Before an encode in the tab the page shows an estimate (the last encode of this model here,
// remembered by the module) and a bar of the time elapsed against it. The encode's run holds
// the page's thread, so what the page shows is recorded inside it as it changes (a
// MutationObserver), not read from outside during the run; no assertion on times.
test("/app/ shows the image encode's estimate and a progress bar while it runs", async () => {
  const { server, baseUrl } = await startServer();
  try {
    const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    await page.goto(`${baseUrl}/app/?device=wasm`);
    await page.locator("#model-status.ready").waitFor({ timeout: 60000 });
    await page.evaluate(() => {
      window.shown = [];
      const box = document.getElementById("encode-progress");
      new MutationObserver(() => {
        if (box.hidden) return;
        window.shown.push({
          text: document.getElementById("busy-text").textContent,
          eta: document.getElementById("encode-eta").textContent,
          estimate: box.dataset.estimateMs,
          bar: document.getElementById("encode-bar").getAnimations().map((a) => ({
            duration: a.effect.getTiming().duration, delay: a.effect.getTiming().delay,
            iterations: a.effect.getTiming().iterations, state: a.playState })),
        });
      }).observe(document.getElementById("busy"), { subtree: true, attributes: true, childList: true, characterData: true });
    });
    const encode = async (name) => {  // a new name: choosing the same file again changes nothing
      copyFileSync(path.join(tmp, "scene.png"), path.join(tmp, name));
      await page.evaluate(() => { window.shown = []; document.getElementById("status").textContent = ""; });
      await page.setInputFiles("#file-input", path.join(tmp, name));
      await page.waitForFunction(() => /Image encoded in this browser/.test(document.getElementById("status").textContent)
        && document.getElementById("busy").hidden, null, { timeout: 60000 });
      return page.evaluate(() => ({ shown: window.shown, status: document.getElementById("status").textContent,
        hidden: document.getElementById("encode-progress").hidden,
        remembered: Object.values(JSON.parse(localStorage.getItem("sam3-encode-ms") ?? "{}")) }));
    };

    const first = await encode("first.png");
    assert.ok(first.shown.length > 0, "the progress was shown during the first encode");
    assert.match(first.shown[0].text, /Encoding image in this browser: the first encode of this model here/);
    assert.match(first.shown[0].eta, /no estimate yet/);
    assert.equal(first.shown[0].estimate, "");
    assert.deepEqual(first.shown[0].bar.map((a) => a.iterations), [Infinity], "an endless busy bar without an estimate");
    assert.ok(first.hidden, "the bar is gone once the image is encoded");
    assert.equal(first.remembered.length, 1, "the encode's time is remembered for this model");
    const took = first.remembered[0].ms;

    const second = await encode("second.png");
    assert.ok(second.shown.length > 0, "the progress was shown during the second encode");
    const { text, eta, estimate, bar } = second.shown[0];
    assert.match(text, /Encoding image in this browser: about \d/);
    assert.match(eta, /the last image encode of this model on this device took/);
    assert.equal(Number(estimate), took, "the estimate is the first encode's time");
    assert.equal(bar.length, 2, "the bar's fill, and its pulse past the estimate");
    const [fill, pulse] = bar;
    assert.equal(fill.duration, Math.max(took, 1), "the bar fills over the estimate");
    assert.equal(fill.iterations, 1);
    assert.equal(fill.state, "running");
    assert.equal(pulse.delay, Math.max(took, 1), "and pulses once the estimate is past");
    assert.equal(pulse.iterations, Infinity);
    assert.match(second.status, /Image encoded in this browser in [\d.]+ s \(estimated [\d.]+ s\)\./);
    assert.ok(second.hidden);
    await page.close();
  } finally {
    await stopServer(server);
  }
});

// The web page computing in the browser, as a user drives it: `sam3 serve`'s /app/ (models
// from /models/, cross-origin isolated) and the same app from `sam3 web export` on a plain
// static server. Same instances as the native CLI; no request carries the image.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  return JSON.parse(readFileSync(saved, "utf8")).prompts[0];
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
  } finally {
    await stopServer(server);
  }
});

test("sam3 web export: the same app from a plain static server, and never over files it did not write", async () => {
  const site = path.join(tmp, "site");
  execFileSync(CLI, ["web", "export", site], { stdio: "ignore" });
  assert.match(readFileSync(path.join(site, "_headers"), "utf8"), /Cross-Origin-Embedder-Policy: require-corp/);
  assert.match(readFileSync(path.join(site, "nginx.conf"), "utf8"), /add_header Cross-Origin-Opener-Policy "same-origin"/);
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

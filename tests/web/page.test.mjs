// The sam3 serve web page in headless Chromium, as a user drives it: pick an image, type a
// prompt, see the overlay, move the threshold slider, draw a negative box, download results.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SCENE, scenePng, startServer, stopServer, launchBrowser } from "./support.mjs";

const OUT = process.env.SAM3_WEB_OUT || os.tmpdir();

let server, browser, page, baseUrl;
const segmentRequests = [];
const failedRequests = [];  // responses of status 400 or more: a line each in the console

before(async () => {
  ({ server, baseUrl } = await startServer());
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1366, height: 800 }, acceptDownloads: true });
  page.on("request", (r) => { if (r.url().endsWith("/v1/segment")) segmentRequests.push(r.url()); });
  page.on("response", (r) => { if (r.status() >= 400) failedRequests.push(`${r.status()} ${r.url()}`); });
  page.on("pageerror", (e) => { throw e; });
});

after(async () => {
  await browser?.close();
  await stopServer(server);
});

const visibleCount = () => page.locator("#instance-list li.visible").count();

async function canvasPixel(x, y) {
  return page.evaluate(([px, py]) => Array.from(document.getElementById("view").getContext("2d").getImageData(px, py, 1, 1).data), [x, y]);
}

test("upload, prompt, overlay, threshold, negative box, download", async () => {
  await page.goto(baseUrl);
  await page.locator("#model-status.ready").waitFor({ timeout: 20000 });
  assert.match(await page.locator("#model-status").innerText(), /usls model ready/);
  // A new user's trial: the page at / asked for /config.json (the same page as /app/'s), a 404.
  assert.deepEqual(failedRequests, [], "a fresh load asks for no missing file");

  const file = path.join(OUT, "sam3-web-scene.png");
  fs.writeFileSync(file, scenePng());
  await page.setInputFiles("#file-input", file);
  await page.locator("#prompt-input:not([disabled])").waitFor();
  assert.deepEqual((await canvasPixel(100, 60)).slice(0, 3), [255, 0, 0], "the image is drawn before any prompt");

  await page.fill("#prompt-input", "red");
  await page.press("#prompt-input", "Enter");
  await page.waitForFunction(() => document.querySelectorAll("#instance-list li.visible").length === 2);
  const [r, g, b] = await canvasPixel(100, 60);
  assert.ok(b > 20 && r < 250, `the big red box is tinted by the overlay, got ${[r, g, b]}`);
  assert.equal(await page.locator(".chip").count(), 1);
  await page.screenshot({ path: path.join(OUT, "sam3-web-overlay.png") });

  // The slider filters locally: the small square (score ~0.7) disappears, no new request.
  const before = segmentRequests.length;
  await page.fill("#threshold", "0.9");
  assert.equal(await visibleCount(), 1);
  assert.equal(await page.locator("#threshold-value").innerText(), "0.90");
  await page.fill("#threshold", "0.5");
  assert.equal(await visibleCount(), 2);
  assert.equal(segmentRequests.length, before, "moving the slider must not recompute");

  // Hovering an instance row highlights it.
  await page.locator("#instance-list li.visible").first().hover();
  assert.equal(await page.locator("#instance-list li.hover").count(), 1);

  // Shift-drag a negative box around the big red box: only the small square remains.
  const box = await page.locator("#view").boundingBox();
  const sx = box.width / SCENE.width, sy = box.height / SCENE.height;
  await page.mouse.move(box.x + 30 * sx, box.y + 10 * sy);
  await page.keyboard.down("Shift");
  await page.mouse.down();
  await page.mouse.move(box.x + 175 * sx, box.y + 112 * sy, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await page.waitForFunction(() => document.querySelectorAll("#instance-list li.visible").length === 1);
  assert.match(await page.locator("#boxes-label").innerText(), /1 exemplar box \(1 negative\)/);
  await page.screenshot({ path: path.join(OUT, "sam3-web-negative-box.png") });

  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-json")]);
  const saved = path.join(OUT, "sam3-web-results.json");
  await download.saveAs(saved);
  // The download is POST /v1/segment's answer as it came, for every prompt at the slider's threshold.
  const results = JSON.parse(fs.readFileSync(saved, "utf8"));
  assert.deepEqual(Object.keys(results), ["model", "images", "timings_ms"]);
  assert.equal(results.images[0].image_id.length, 32);
  const prompts = results.images[0].prompts;
  assert.equal(prompts[0].text, "red");
  assert.equal(prompts[0].instances.length, 1);
  assert.deepEqual(prompts[0].boxes[0].slice(4), ["neg"]);

  const [maskDownload] = await Promise.all([page.waitForEvent("download"), page.click("#download-masks")]);
  assert.equal(maskDownload.suggestedFilename(), "sam3-masks.png");
});

test("API errors are shown to the user", async () => {
  await page.goto(baseUrl);
  await page.locator("#model-status.ready").waitFor();
  const bad = path.join(OUT, "sam3-web-not-an-image.txt");
  fs.writeFileSync(bad, "this is text");
  await page.setInputFiles("#file-input", bad);
  await page.locator("#status.error").waitFor();
  assert.match(await page.locator("#status").innerText(), /unrecognised image format|unsupported/i);
});

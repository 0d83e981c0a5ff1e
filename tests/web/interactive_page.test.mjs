// The web page's click mode in headless Chromium, on a server holding the text model and the
// generated interactive model: words find every red thing, clicks pick and refine one object.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { startServer, stopServer, launchBrowser } from "./support.mjs";

// The C++ tests' click scene (tests/support/test_images.h make_click_scene).
const W = 640, H = 480;

let server, browser, page, baseUrl, dir;
const segmentBodies = [];

before(async () => {
  ({ server, baseUrl } = await startServer(["--interactive-models", path.join(process.env.SAM3_TEST_MODELS, "tracker")]));
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  page.on("request", (r) => { if (r.url().endsWith("/v1/segment")) segmentBodies.push(JSON.parse(r.postData())); });
  page.on("pageerror", (e) => { throw e; });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "sam3-click-page-"));
});

after(async () => {
  await browser?.close();
  await stopServer(server);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function tinted(x, y) {
  const [r, g, b] = await page.evaluate(([px, py]) =>
    Array.from(document.getElementById("view").getContext("2d").getImageData(px, py, 1, 1).data), [x, y]);
  return !(r === 255 && g === 0 && b === 0);  // red under an overlay is no longer pure red
}

// A click at image pixel (x, y); shift: held down, button: "left" or "right". Returns once the
// object's new mask is in.
async function clickAt(x, y, { shift = false, button = "left" } = {}) {
  const box = await page.locator("#view").boundingBox();
  const before = segmentBodies.length;
  if (shift) await page.keyboard.down("Shift");
  await page.mouse.click(box.x + (x + 0.5) * box.width / W, box.y + (y + 0.5) * box.height / H, { button });
  if (shift) await page.keyboard.up("Shift");
  await page.waitForFunction(() => !document.querySelector(".chip.pending"));
  assert.equal(segmentBodies.length, before + 1, "one request per click");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("object score"));
}

test("click, Shift-click and a word on one image", async () => {
  await page.goto(baseUrl);
  await page.locator("#model-status.ready").waitFor({ timeout: 20000 });
  await page.locator("#click-row:not([hidden])").waitFor();
  const px = Buffer.alloc(W * H * 3);
  for (const [[x0, y0, x1, y1], rgb] of [[[100, 100, 220, 220], [255, 0, 0]], [[400, 100, 520, 220], [255, 0, 0]],
    [[200, 300, 500, 420], [0, 0, 255]]]) {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) px.set(rgb, (y * W + x) * 3);
  }
  const file = path.join(dir, "scene.png");
  await sharp(px, { raw: { width: W, height: H, channels: 3 } }).png().toFile(file);
  await page.setInputFiles("#file-input", file);
  await page.locator("#prompt-input:not([disabled])").waitFor();

  await page.check("#click-mode");
  await clickAt(160, 160);
  assert.deepEqual(segmentBodies.at(-1).prompts, [{ points: [[160, 160, "pos"]], box: null }]);
  assert.ok(await tinted(160, 200), "the clicked square is masked");
  assert.ok(!(await tinted(460, 160)), "the other red square is another object");
  assert.equal(await page.locator("#instance-list li.visible").count(), 1);

  // Shift-click near a corner: "not here"; the same object is decoded again with both points.
  await clickAt(105, 105, { shift: true });
  assert.deepEqual(segmentBodies.at(-1).prompts[0].points, [[160, 160, "pos"], [105, 105, "neg"]]);
  assert.ok(!(await tinted(110, 110)), "cut around the negative click");
  assert.ok(await tinted(200, 200));
  assert.equal(await page.locator(".chip").count(), 1, "still one object");
  await clickAt(215, 215, { button: "right" });
  assert.deepEqual(segmentBodies.at(-1).prompts[0].points.at(-1), [215, 215, "neg"], "a right-click is negative too");

  // A new object by a box alone; then a word beside the clicks.
  await page.click("#new-object");
  const box = await page.locator("#view").boundingBox();
  const at = (x, y) => [box.x + x * box.width / W, box.y + y * box.height / H];
  await page.mouse.move(...at(380, 80));
  await page.mouse.down();
  await page.mouse.move(...at(540, 240), { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => document.querySelectorAll(".chip").length === 2 && !document.querySelector(".chip.pending"));
  assert.deepEqual(segmentBodies.at(-1).prompts[0].points, []);
  assert.ok(await tinted(460, 160), "the box's object");

  await page.fill("#prompt-input", "red");
  await page.press("#prompt-input", "Enter");
  await page.waitForFunction(() => document.querySelectorAll(".chip").length === 3 && !document.querySelector(".chip.pending"));
  assert.equal(segmentBodies.at(-1).prompts[0].text, "red");
  await page.screenshot({ path: path.join(dir, "clicks.png") });
});

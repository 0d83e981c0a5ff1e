// The sam3 serve page where a new user's trial found it wrong: on a server with only the clicks
// model it left text prompts on (a typed "car" got an error); with --api-key it showed the
// message meant for programs and read "ready" though /v1/info answered 401; a TIFF (which
// Chromium cannot draw) left the overlays on a white canvas; /app/'s drop zone promised TIFF.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SCENE, startServer, stopServer, launchBrowser } from "./support.mjs";

const OUT = process.env.SAM3_WEB_OUT || os.tmpdir();

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

// The scene's pixels as a baseline uncompressed RGB TIFF (no browser draws one; the server reads it).
function sceneTiff() {
  const { width, height } = SCENE;
  const px = Buffer.alloc(width * height * 3);
  for (const [[x0, y0, x1, y1], rgb] of [[SCENE.redBig, [255, 0, 0]], [SCENE.redSmall, [255, 0, 0]], [[240, 140, 380, 220], [0, 0, 255]]]) {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) px.set(rgb, (y * width + x) * 3);
  }
  const entries = [[256, 4, 1, width], [257, 4, 1, height], [258, 3, 3, 122], [259, 3, 1, 1], [262, 3, 1, 2], [273, 4, 1, 128],
    [277, 3, 1, 3], [278, 4, 1, height], [279, 4, 1, px.length]];
  const head = Buffer.alloc(128);
  head.write("II", 0, "latin1");
  head.writeUInt16LE(42, 2);
  head.writeUInt32LE(8, 4);
  head.writeUInt16LE(entries.length, 8);
  entries.forEach(([tag, type, count, value], i) => {
    const at = 10 + i * 12;
    head.writeUInt16LE(tag, at);
    head.writeUInt16LE(type, at + 2);
    head.writeUInt32LE(count, at + 4);
    if (type === 3 && count === 1) head.writeUInt16LE(value, at + 8);
    else head.writeUInt32LE(value, at + 8);
  });
  head.writeUInt32LE(0, 10 + entries.length * 12);  // no next IFD; ends at 122
  for (let i = 0; i < 3; i++) head.writeUInt16LE(8, 122 + 2 * i);  // BitsPerSample 8, 8, 8
  return Buffer.concat([head, px]);
}

async function withServer(args, models, use) {
  const { server, baseUrl } = await startServer(args, models);
  const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  page.on("pageerror", (e) => { throw e; });
  try {
    await use(page, baseUrl);
  } finally {
    await page.close();
    await stopServer(server);
  }
}

const canvasPixel = (page, x, y) =>
  page.evaluate(([px, py]) => Array.from(document.getElementById("view").getContext("2d").getImageData(px, py, 1, 1).data), [x, y]);

function writeScene(name, bytes) {
  const file = path.join(OUT, name);
  fs.writeFileSync(file, bytes);
  return file;
}

test("a server with only the clicks model starts the page in click mode", async () => {
  await withServer([], "tracker", async (page, baseUrl) => {
    await page.goto(baseUrl);
    await page.locator("#model-status.ready").waitFor({ timeout: 20000 });
    assert.equal(await page.locator("#click-mode").isChecked(), true, "click mode is on");
    assert.equal(await page.locator("#click-mode").isDisabled(), true, "and cannot be turned off: no words for this model");
    assert.match(await page.locator("#prompt-input").getAttribute("placeholder"), /clicks, not words/);
    await page.setInputFiles("#file-input", writeScene("sam3-web-modes-scene.tif", sceneTiff()));
    await page.locator("#stage-hint:not([hidden])").waitFor();
    await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Image encoded"));
    assert.equal(await page.locator("#prompt-input").isDisabled(), true, "the text field stays off after an upload");
  });
});

test("with --api-key the page asks for the key, keeps it for the tab and retries the upload", async () => {
  await withServer(["--api-key", "s3cret"], "usls", async (page, baseUrl) => {
    await page.goto(baseUrl);
    await page.locator("#model-status.error").waitFor({ timeout: 20000 });
    assert.match(await page.locator("#model-status").innerText(), /API key needed/, "not \"ready\" while /v1/info says 401");
    assert.equal(await page.locator("#api-key").isVisible(), true);
    await page.setInputFiles("#file-input", writeScene("sam3-web-modes-scene.tif", sceneTiff()));
    await page.locator("#status.error").waitFor();
    const said = await page.locator("#status").innerText();
    assert.match(said, /API key/);
    assert.doesNotMatch(said, /Authorization|Bearer/, "not the message meant for programs");
    await page.fill("#api-key", "s3cret");
    await page.press("#api-key", "Tab");
    await page.locator("#model-status.ready").waitFor();
    await page.locator("#prompt-input:not([disabled])").waitFor({ timeout: 20000 });  // the upload was retried
    assert.equal(await page.evaluate(() => sessionStorage.getItem("sam3-api-key")), "s3cret");
    assert.equal(await page.evaluate(() => localStorage.getItem("sam3-api-key")), null, "kept for this tab's session only");
  });
});

test("a TIFF is shown as the server decoded it; /app/ does not promise TIFF", async () => {
  await withServer([], "usls", async (page, baseUrl) => {
    await page.goto(baseUrl);
    await page.locator("#model-status.ready").waitFor({ timeout: 20000 });
    assert.match(await page.locator("#drop-zone span").innerText(), /TIFF/, "the server reads TIFF");
    await page.setInputFiles("#file-input", writeScene("sam3-web-modes-scene.tif", sceneTiff()));
    await page.locator("#prompt-input:not([disabled])").waitFor();
    assert.deepEqual((await canvasPixel(page, 100, 60)).slice(0, 3), [255, 0, 0], "the image is drawn, not a white canvas");
    await page.fill("#prompt-input", "red");
    await page.press("#prompt-input", "Enter");
    await page.waitForFunction(() => document.querySelectorAll("#instance-list li.visible").length === 2);
    await page.screenshot({ path: path.join(OUT, "sam3-web-tiff.png") });

    await page.goto(`${baseUrl}/app/`);
    await page.waitForFunction(() => !document.querySelector("#drop-zone span").textContent.includes("TIFF"));
    assert.doesNotMatch(await page.locator("#file-input").getAttribute("accept"), /tif/);
  });
});

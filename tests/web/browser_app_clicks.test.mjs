// The app's click mode computing in the tab, as a user drives it: `sam3 serve --models
// tracker`'s /app/ loads the interactive model from /models/ into the tab; a click, a
// Shift-click ("not this"), an undo and a dragged box give `sam3 segment --point/--box`'s
// masks, and no request
// carries the image or reaches /v1/.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { maskIou } from "./coco_rle.mjs";
import { CLICK_SCENE, clickScenePng, launchBrowser, startServer, stopServer } from "./support.mjs";

const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;
const SHOTS = process.env.SAM3_WEB_OUT || os.tmpdir();
const { width: W, height: H } = CLICK_SCENE;

let tmp, browser, server, baseUrl;

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "sam3-app-clicks-"));
  writeFileSync(path.join(tmp, "scene.png"), clickScenePng());
  browser = await launchBrowser();
  ({ server, baseUrl } = await startServer([], "tracker"));
});

after(async () => {
  await browser?.close();
  await stopServer(server);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function native(args) {
  const out = execFileSync(CLI, ["segment", "--models", path.join(MODELS, "tracker"), "--image", path.join(tmp, "scene.png"),
    "--json", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out).images[0].prompts[0];
}

function assertSameObject(got, want, label) {
  assert.deepEqual(got.points, want.points, `${label}: points`);
  assert.deepEqual(got.box, want.box, `${label}: box`);
  assert.ok(Math.abs(got.object_score - want.object_score) <= 0.01, `${label}: object score`);
  assert.equal(got.instances.length, want.instances.length, `${label}: masks`);
  got.instances.forEach((g, i) => {
    assert.ok(Math.abs(g.score - want.instances[i].score) <= 0.01, `${label} #${i}: score ${g.score} vs ${want.instances[i].score}`);
    const iou = maskIou(g.mask, want.instances[i].mask);
    assert.ok(iou >= 0.99, `${label} #${i}: mask IoU with the CLI ${iou}`);
  });
}

test("/app/'s click mode segments in the tab what sam3 segment --point/--box finds; undo takes a click back", async () => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 800 }, acceptDownloads: true });
  const requests = [];
  page.on("request", (r) => requests.push({ method: r.method(), url: r.url() }));
  page.on("pageerror", (e) => { throw e; });
  try {
    await page.goto(`${baseUrl}/app/`);
    await page.locator("#model-status.ready").waitFor({ timeout: 60000 });
    assert.match(await page.locator("#model-status").innerText(), /sam3-tracker model ready · WASM in this browser/);
    assert.ok(await page.locator("#click-mode").isChecked(), "the interactive model opens in click mode");
    await page.setInputFiles("#file-input", path.join(tmp, "scene.png"));
    await page.waitForFunction(() => document.getElementById("status").textContent.includes("encoded in this browser"),
      null, { timeout: 60000 });
    assert.ok(await page.locator("#prompt-input").isDisabled(), "no words for the interactive model");
    const view = await page.locator("#view").boundingBox();
    const at = (x, y) => [view.x + (x + 0.5) * view.width / W, view.y + (y + 0.5) * view.height / H];
    const answered = async (n) => page.waitForFunction((n) => {
      const s = document.getElementById("status").textContent;
      return s.includes("object score") && s.includes(`${n} point`) && !document.querySelector(".chip.pending");
    }, n, { timeout: 60000 });
    const downloaded = async (name) => {
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-json")]);
      const saved = path.join(tmp, name);
      await download.saveAs(saved);
      return JSON.parse(readFileSync(saved, "utf8")).images[0].prompts[0];
    };

    await page.mouse.click(...at(160, 160));
    await answered(1);
    assertSameObject(await downloaded("one.json"), native(["--point", "160,160"]), "one click");

    await page.keyboard.down("Shift");
    await page.mouse.click(...at(105, 105));
    await page.keyboard.up("Shift");
    await answered(2);
    await page.screenshot({ path: path.join(SHOTS, "sam3-app-clicks.png") });
    assertSameObject(await downloaded("two.json"), native(["--point", "160,160", "--point", "105,105,neg"]), "a negative click");

    await page.click("#undo-click");
    await answered(1);
    assertSameObject(await downloaded("undone.json"), native(["--point", "160,160"]), "after undo");

    // Another object, by a dragged box (model pixels: the right square and some margin).
    await page.click("#new-object");
    await page.mouse.move(...at(380, 80));
    await page.mouse.down();
    await page.mouse.move(...at(460, 160), { steps: 4 });
    await page.mouse.move(...at(540, 240), { steps: 4 });
    await page.mouse.up();
    await answered(0);
    const boxed = JSON.parse(await (async () => {
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-json")]);
      const saved = path.join(tmp, "boxed.json");
      await download.saveAs(saved);
      return readFileSync(saved, "utf8");
    })()).images[0].prompts;
    assert.equal(boxed.length, 2, "the clicked object and the boxed one");
    assertSameObject(boxed[1], native(["--box", `${boxed[1].box.join(",")}`]), "a dragged box");

    const posts = requests.filter((r) => r.method !== "GET" && r.method !== "HEAD");
    assert.deepEqual(posts, [], "nothing is sent to the server: the image stays in the tab");
    assert.ok(!requests.some((r) => r.url.includes("/v1/")), "the server's API is not used");
  } finally {
    await page.close();
  }
});

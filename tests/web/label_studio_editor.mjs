// Label Studio's own editor (@heartexlabs/label-studio's built bundle) in headless Chromium:
// a loopback page serves the bundle and the task image, a prediction is loaded as the editor
// shows it, and what the editor serializes is read back. The editor re-rasterizes each brush
// from its canvas when it serializes, so what comes back is what a user sees.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const editorBuild = path.join(here, "node_modules/@heartexlabs/label-studio/build/static");

// A page with the editor at "/" and the task image at "/task.png".
export async function startEditorPage(taskPng) {
  const files = {
    "/main.js": [path.join(editorBuild, "js/main.js"), "text/javascript"],
    "/main.css": [path.join(editorBuild, "css/main.css"), "text/css"],
  };
  const server = http.createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(`<!doctype html><html><head><link rel="stylesheet" href="/main.css"><script src="/main.js"></script></head>
        <body><div id="label-studio"></div></body></html>`);
    } else if (req.url === "/task.png") {
      res.writeHead(200, { "Content-Type": "image/png" });
      res.end(taskPng);
    } else if (files[req.url]) {
      res.writeHead(200, { "Content-Type": files[req.url][1] });
      res.end(fs.readFileSync(files[req.url][0]));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

// Shows `prediction` (a /predict result) in the editor and waits until its `brushes` brush
// regions are drawn. Returns {serialized (the editor's result list), regions (region types),
// errors (page errors)}; `screenshot` names a PNG to write.
export async function showPrediction(browser, pageUrl, { config, prediction, brushes, screenshot }) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  try {
    await page.goto(pageUrl);
    await page.evaluate(({ config, prediction }) => {
      window.sam3Loaded = new Promise((resolve) => {
        new window.LabelStudio("label-studio", {
          config,
          interfaces: ["panel", "controls", "side-column", "predictions:menu", "annotations:menu"],
          user: { id: 1, username: "test" },
          task: { id: 1, data: { image: "/task.png" }, annotations: [], predictions: [{ id: 1, ...prediction }] },
          onLabelStudioLoad(ls) {
            // The editor adds the task's predictions after this callback and shows the first.
            const poll = setInterval(() => {
              const shown = ls.annotationStore.selected;
              if (shown?.type !== "prediction") return;
              clearInterval(poll);
              window.sam3Annotation = shown;
              resolve("");
            }, 50);
          },
        });
      });
    }, { config, prediction });
    const loadError = await Promise.race([page.evaluate(() => window.sam3Loaded),
      new Promise((done) => setTimeout(() => done(`the editor did not show the prediction: ${errors.join("; ")}`), 20000))]);
    if (loadError) throw new Error(loadError);
    await page.waitForFunction(() => window.sam3Annotation.names.get("image").naturalWidth > 0, null, { timeout: 20000 });
    // Brush regions draw their decoded image asynchronously; serialize once all are on the canvas.
    const serialized = await page.waitForFunction((count) => {
      const result = window.sam3Annotation.serializeAnnotation();
      const drawn = result.filter((r) => r.type === "brushlabels");
      return drawn.length === count && drawn.every((b) => b.value.rle?.length > 0) ? result : null;
    }, brushes, { timeout: 20000, polling: 200 }).then((h) => h.jsonValue());
    const regions = await page.evaluate(() => window.sam3Annotation.regionStore.regions.map((r) => r.type));
    // A picture for a person to look at, beside the build's other outputs (none without SAM3_WEB_OUT).
    if (screenshot && process.env.SAM3_WEB_OUT) await page.screenshot({ path: path.join(process.env.SAM3_WEB_OUT, screenshot) });
    return { serialized, regions, errors };
  } finally {
    await page.close();
  }
}

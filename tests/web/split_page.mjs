// The split-graph tests' page (the tab's own kernels against ONNX Runtime Web): the built module
// and kernels, ONNX Runtime Web, the generated models and page/split.mjs, served on loopback to
// a blank page in headless Chromium.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { startStatic, stopStatic } from "./static_server.mjs";
import { launchBrowserWith } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, "../..");
const WEB = path.join(process.env.SAM3_WEB_OUT ?? "", "web");
const ORT_WEB = process.env.SAM3_ORT_WEB ?? path.join(repo, ".deps/onnxruntime-web");
export const KERNELS_BUILT = existsSync(path.join(WEB, "int8-relaxed.wasm")) && existsSync(path.join(WEB, "int8-simd128.wasm"));

// -> {baseUrl, pages: [page per flag set], close()}; `routes` adds folders to serve.
export async function openSplitPages(title, { routes = {}, browserFlags = [[]] } = {}) {
  const { server, baseUrl } = await startStatic({
    routes: { "/web/ort/": ORT_WEB, "/web/": WEB, "/models/": process.env.SAM3_TEST_MODELS, "/page/": path.join(here, "page"), ...routes },
    pages: { "/": `<!doctype html><title>${title}</title>` },
  });
  const browsers = [], pages = [];
  try {
    for (const flags of browserFlags) {
      const browser = await launchBrowserWith(flags);
      browsers.push(browser);
      const page = await browser.newPage();
      page.on("console", (m) => { if (m.type() === "error" && !/status of 404/.test(m.text())) console.error("[page]", m.text()); });
      await page.goto(`${baseUrl}/`);
      pages.push(page);
    }
  } catch (e) {
    for (const b of browsers) await b.close();
    await stopStatic(server);
    throw e;
  }
  return {
    baseUrl,
    pages,
    async close() {
      for (const b of browsers) await b.close();
      await stopStatic(server);
    },
  };
}

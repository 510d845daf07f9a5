// drive.mjs: runs one browser test in Debian's chromium through playwright-core and prints its
// result as one JSON line.
//   engine: the bare @cloudflare/speedtest engine (its default sequence of transfers, less the
//           TURN packet-loss phase, which needs a TURN server) with downloadApiUrl/uploadApiUrl
//           pointed at the daemon's /__down and /__up. This script serves the engine and its
//           harness page itself on 127.0.0.1 in the client namespace: another origin, so the
//           daemon's CORS is exercised, and loopback, since Chromium's Private Network Access
//           lets a page reach the lab's private address only from an equally or more private
//           one (a page playwright fulfils from nowhere counts as public and is refused).
//   page:   the daemon's own page at /?autostart; waits for window.bloatmeterResult.
// Usage: node drive.mjs engine|page DAEMON_URL ENGINE_JS|- SCREENSHOT|-
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [mode, base, engineJs, shot] = process.argv.slice(2);
const MEASUREMENTS = [
  { type: 'latency', numPackets: 2 }, { type: 'download', bytes: 1e5, count: 1, bypassMinDuration: true },
  { type: 'latency', numPackets: 20 }, { type: 'download', bytes: 1e5, count: 9 },
  { type: 'latency', numPackets: 2 }, { type: 'download', bytes: 1e6, count: 8 },
  { type: 'latency', numPackets: 2 }, { type: 'upload', bytes: 1e5, count: 8 },
  { type: 'latency', numPackets: 2 }, { type: 'upload', bytes: 1e6, count: 6 },
  { type: 'latency', numPackets: 2 }, { type: 'download', bytes: 1e7, count: 6 },
  { type: 'latency', numPackets: 2 }, { type: 'upload', bytes: 1e7, count: 4 },
  { type: 'latency', numPackets: 2 }, { type: 'download', bytes: 25e6, count: 4 },
  { type: 'latency', numPackets: 2 }, { type: 'upload', bytes: 25e6, count: 4 },
  { type: 'latency', numPackets: 2 }, { type: 'download', bytes: 1e8, count: 3 },
  { type: 'latency', numPackets: 2 }, { type: 'upload', bytes: 5e7, count: 3 },
  { type: 'latency', numPackets: 2 }, { type: 'download', bytes: 25e7, count: 2 },
];

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-proxy-server'],
});
try {
  const page = await browser.newPage({ viewport: { width: 720, height: 640 } });
  page.on('console', (m) => console.error(`[browser] ${m.text()}`));
  page.on('pageerror', (e) => console.error(`[browser error] ${e.message}`));
  let result;
  if (mode === 'engine') {
    const engine = readFileSync(engineJs, 'utf8');
    const harness = createServer((req, res) => {
      const js = req.url === '/speedtest.js';
      res.writeHead(200, { 'Content-Type': js ? 'text/javascript' : 'text/html' });
      res.end(js ? engine : '<!doctype html><title>engine</title>');
    });
    await new Promise((ok) => harness.listen(0, '127.0.0.1', ok));
    harness.unref();
    const at = `http://127.0.0.1:${harness.address().port}/`;
    await page.goto(at);
    result = await page.evaluate(async ({ at, base, measurements }) => {
      const { default: SpeedTest } = await import(new URL('speedtest.js', at).href);
      return new Promise((resolve) => {
        const st = new SpeedTest({
          downloadApiUrl: new URL('__down', base).href, uploadApiUrl: new URL('__up', base).href,
          logAimApiUrl: null, logMeasurementApiUrl: null, measurements,
        });
        st.onFinish = (r) => resolve({
          down_mbps: r.getDownloadBandwidth() / 1e6, up_mbps: r.getUploadBandwidth() / 1e6,
          idle_ms: r.getUnloadedLatency(), down_loaded_ms: r.getDownLoadedLatency(),
          up_loaded_ms: r.getUpLoadedLatency(),
        });
        st.onError = (e) => resolve({ error: String(e) });
      });
    }, { at, base, measurements: MEASUREMENTS });
  } else {
    await page.goto(new URL('?autostart', base).href);
    await page.waitForFunction(() => window.bloatmeterResult !== undefined, null, { timeout: 120000 });
    result = await page.evaluate(() => window.bloatmeterResult);
    if (shot !== '-') await page.screenshot({ path: shot, fullPage: true });
  }
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}

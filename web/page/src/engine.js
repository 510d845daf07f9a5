// engine.js: the @cloudflare/speedtest engine, pointed at this daemon, measures the idle latency
// (its latency phase: bytes=0 requests with Resource Timing and Server-Timing). Its bandwidth
// phases are single transfers in sequence and do not fill a queue, so load.js drives the load.
import SpeedTest from '@cloudflare/speedtest';

export function engineConfig(base, measurements) {
  return {
    autoStart: false,
    downloadApiUrl: new URL('__down', base).href,
    uploadApiUrl: new URL('__up', base).href,
    logMeasurementApiUrl: null,
    logAimApiUrl: null,      // results go to this daemon, not to Cloudflare
    measurements,
  };
}

export function idleLatency(base, numPackets = 20) {
  return new Promise((resolve, reject) => {
    const st = new SpeedTest(engineConfig(base, [{ type: 'latency', numPackets }]));
    st.onFinish = (res) => resolve(res.getUnloadedLatencyPoints());
    st.onError = (msg) => reject(new Error(`speed test engine: ${msg}`));
    st.play();
  });
}

export { SpeedTest };

/**
 * autocannon in its own process, so the load generator never shares an event loop with the
 * harness or the server. argv[2] is a JSON object: autocannon's options plus
 *   untilStopped  run until stdin ends (the harness says when), instead of `duration`
 *   expect        {includes?: string, excludes?: string[]} checked on every response body;
 *                 a body that fails it is counted in `bad_bodies` (a 200 carrying an error).
 * Logs "cannon: started" on stderr once the run begins; prints a JSON summary on stdout.
 */
import autocannon from 'autocannon';

const config = JSON.parse(process.argv[2] ?? '{}');
const { untilStopped, expect, ...options } = config;

let badBodies = 0;
let firstBad = null;
let checked = 0;
if (expect && Array.isArray(options.requests)) {
  for (const request of options.requests) {
    request.onResponse = (status, body) => {
      checked += 1;
      const text = typeof body === 'string' ? body : String(body ?? '');
      const ok =
        (expect.includes === undefined || text.includes(expect.includes)) &&
        !(expect.excludes ?? []).some((bad) => text.includes(bad));
      if (!ok) {
        badBodies += 1;
        firstBad ??= `${status} ${text.slice(0, 300)}`;
      }
    };
  }
}

if (untilStopped) options.duration = 24 * 3600;

const started = Date.now();
const instance = autocannon(options, (error, result) => {
  if (error) {
    process.stderr.write(`cannon: failed: ${error.stack ?? error}\n`);
    process.exit(1);
  }
  const elapsed = (Date.now() - started) / 1000;
  const summary = {
    url: options.url,
    connections: options.connections,
    duration_s: +elapsed.toFixed(2),
    requests_total: result.requests.total,
    rps: +(result.requests.total / elapsed).toFixed(1),
    rps_mean_per_second_samples: result.requests.average,
    latency_ms: {
      mean: result.latency.mean,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    status_codes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
    bodies_checked: checked,
    bad_bodies: badBodies,
    first_bad_body: firstBad,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exit(0);
});
instance.once('start', () => process.stderr.write('cannon: started\n'));
if (untilStopped) {
  process.stdin.on('end', () => instance.stop());
  process.stdin.on('error', () => instance.stop());
  process.stdin.resume();
}

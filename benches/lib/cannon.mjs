/**
 * autocannon in its own process, so the load generator never shares an event loop with the
 * harness or the server. argv[2] is the path of a JSON file: autocannon's options plus
 *   untilStopped  run until stdin ends (the harness says when), instead of `duration`
 *   expect        {includes?: string | string[], excludes?: string[]} checked on every response
 *                 body of every request
 *   requests[i].expect  the same, for that request alone (checked as well as `expect`): each
 *                 request carries the answer it must get
 *   warmAfter     log "cannon: warm" on stderr once this many responses have arrived
 * A body that fails a check is counted in `bad_bodies` (a 200 carrying an error or a wrong
 * answer); the first one is kept. Logs "cannon: started" on stderr once the run begins; prints a
 * JSON summary on stdout.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { untilStopped, expect, warmAfter, ...options } = config;

const asList = (value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
/**
 * autocannon decodes each chunk of a body as UTF-8 on its own (`body += chunk`), so a character
 * split across two reads arrives as replacement characters. Bodies and expectations are compared
 * without their non-ASCII characters: everything else is checked byte for byte.
 */
const ascii = (text) => text.replace(/[^\x00-\x7f]/g, '');

let badBodies = 0;
let firstBad = null;
let checked = 0;
if (Array.isArray(options.requests)) {
  options.requests.forEach((request, index) => {
    const includes = [...asList(expect?.includes), ...asList(request.expect?.includes)].map(ascii);
    const excludes = [...asList(expect?.excludes), ...asList(request.expect?.excludes)].map(ascii);
    delete request.expect;
    if (includes.length === 0 && excludes.length === 0) return;
    request.onResponse = (status, body) => {
      checked += 1;
      const text = ascii(typeof body === 'string' ? body : String(body ?? ''));
      const ok = includes.every((good) => text.includes(good)) && !excludes.some((bad) => text.includes(bad));
      if (!ok) {
        badBodies += 1;
        firstBad ??= `request #${index} ${request.method ?? 'GET'} ${request.path ?? ''}: ${status} ${text.slice(0, 300)}`;
      }
    };
  });
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
if (warmAfter > 0) {
  let responses = 0;
  const onResponse = () => {
    responses += 1;
    if (responses < warmAfter) return;
    instance.off('response', onResponse);
    process.stderr.write('cannon: warm\n');
  };
  instance.on('response', onResponse);
}
if (untilStopped) {
  process.stdin.on('end', () => instance.stop());
  process.stdin.on('error', () => instance.stop());
  process.stdin.resume();
}

/**
 * The HTTP engine's choice (src/http/engine.ts), the part that needs no server: the one line that
 * says why uWebSockets.js cannot load, from its loader's error.
 * Covers:
 * - a missing glibc symbol version is named with the runtime whose binary needs it;
 * - any other loader error is named by its last line (uws.js puts its advice first).
 */
import { describe, expect, it } from 'vitest';
import { whyUwsCannotLoad } from '../../../src/platform/uws.js';

const ADVICE = 'This version of uWS.js (v20.51.0) supports only Node.js versions 18, 20, 22 and 23 on (glibc) Linux, macOS and Windows, on Tier 1 platforms (https://github.com/nodejs/node/blob/master/BUILDING.md#platform-list).';
const major = process.versions.node.split('.')[0];

describe('whyUwsCannotLoad', () => {
  it('names the glibc version the binary needs and the runtime it is for', () => {
    const message = `${ADVICE}\n\nError: /lib/x86_64-linux-gnu/libc.so.6: version \`GLIBC_2.38' not found (required by /pkg/node_modules/@based/uws/uws_linux_x64_137.node)`;
    expect(whyUwsCannotLoad(message)).toBe(`uWebSockets.js cannot load on this system (its binary for Node.js ${major} needs GLIBC_2.38)`);
  });

  it('names any other loader error by its first line after the advice', () => {
    const message = `${ADVICE}\n\nError: Cannot find module './uws_linux_x64_141.node'\nRequire stack:\n- /pkg/uws.js`;
    expect(whyUwsCannotLoad(message)).toBe(`uWebSockets.js cannot load on this system (Node.js ${major}: Error: Cannot find module './uws_linux_x64_141.node')`);
  });
});

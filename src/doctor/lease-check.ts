/**
 * The checkout's lease (SPEC §6): whether a shared server runs, judged as the election judges it,
 * the file's mode, and that it carries a token. The token itself is never printed: the report says
 * where it is and who can read it.
 */
import { lstat } from 'node:fs/promises';
import { errorMessage } from '../platform/errors.js';
import { BIND_GRACE_MS, judgeLease } from '../shared/election.js';
import { readLease } from '../shared/lease.js';
import { locateCheckout } from '../shared/locate.js';
import { finding, type Finding } from './findings.js';

const LEASE_MODE = 0o600;

async function modeFinding(path: string): Promise<Finding | null> {
  try {
    const mode = (await lstat(path)).mode & 0o777;
    if (mode === LEASE_MODE) return null;
    return finding('lease', 'warn', `the lease ${path} has mode ${mode.toString(8)}, not 600: other users of this machine may read its token`, `chmod 600 ${path}`);
  } catch {
    return null; // gone since it was read
  }
}

export async function leaseFindings(root: string): Promise<Finding[]> {
  let path: string;
  try {
    const checkout = await locateCheckout(root);
    path = checkout.leasePath;
    const reading = await readLease(path);
    const verdict = await judgeLease(reading, checkout, BIND_GRACE_MS, Date.now());
    const findings: Finding[] = [];
    if (reading.state === 'document') {
      const mode = await modeFinding(path);
      if (mode !== null) findings.push(mode);
      if (reading.doc.token.length < 16) findings.push(finding('lease', 'warn', `the lease ${path} carries no usable token`, `stop the server that wrote it (pid ${reading.doc.pid}); the next start writes a new lease`));
    }
    switch (verdict.kind) {
      case 'absent':
        findings.unshift(finding('lease', 'info', `no shared server is running (no lease at ${path}): the first client to start becomes the server`));
        break;
      case 'binding':
        findings.unshift(finding('lease', 'info', `a shared server is starting (its lease ${path} has no URL yet)`));
        break;
      case 'live': {
        const doc = reading.state === 'document' ? reading.doc : null;
        const what = doc === null ? '' : `pid ${doc.pid}, version ${doc.version}, `;
        findings.unshift(finding('lease', 'ok', `a shared server is running (${what}${verdict.url}); clients attach to it. Its token is in ${path} (mode 600: your user only); the doctor never prints it`));
        break;
      }
      default:
        findings.unshift(finding('lease', 'info', `the lease ${path} is ${verdict.kind} (${verdict.detail}): the next client to start takes it over`));
    }
    return findings;
  } catch (error) {
    return [finding('lease', 'warn', `cannot read the lease: ${errorMessage(error)}`, 'check the permissions of .ai/local/state/mcp/; a server that cannot write its lease serves its client alone')];
  }
}

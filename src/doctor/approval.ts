/** The approval or trust each client needs before it starts a project's server, and what it records (one module per client). */
import type { ChildEnv } from '../platform/child-env.js';
import type { ClientId } from '../init/clients.js';
import { claudeApproval } from './approval-claude.js';
import { codexTrust } from './approval-codex.js';
import { geminiTrust } from './approval-gemini.js';
import type { FindingStatus } from './findings.js';

export interface Approval {
  status: Exclude<FindingStatus, 'info'>;
  message: string;
  fix?: string;
}

export function approvalFor(client: ClientId, root: string, env: ChildEnv): Promise<Approval> {
  switch (client) {
    case 'claude':
      return claudeApproval(root, env);
    case 'codex':
      return codexTrust(root, env);
    case 'gemini':
      return geminiTrust(root, env);
    case 'opencode':
      return Promise.resolve({ status: 'ok', message: 'opencode needs no approval for a project server' });
  }
}

/**
 * The git guard's capabilities (docs/GUARD.md): install, remove and report the `pre-commit` and
 * `pre-push` hooks that refuse a commit touching a path another live peer claimed exclusively.
 * They read the layer for its root only; the hooks directory is git's. Install and uninstall
 * write the repository's hooks directory — the only commands that change files of the checkout.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { PACKAGE_ROOT } from '../platform/package-root.js';
import type { CapabilityDescriptor } from '../registry/descriptor.js';
import { capability } from './context.js';
import { GUARD_HOOKS, GUARD_MODES, guardStatus, installHooks, uninstallHooks } from '../guard/hooks.js';

const hookName = z.enum(GUARD_HOOKS);

const HookStateSchema = z.object({
  hook: hookName,
  state: z.enum(['absent', 'ours', 'foreign']).describe('absent: no hook; ours: the guard; foreign: a hook of somebody else.'),
  mode: z.enum(GUARD_MODES).nullable().describe('What our hook does on a conflict unless MAJORDOMUS_GUARD says otherwise; null unless ours.'),
  chained: z.boolean().describe('A user\'s own hook (<name>.user) runs before ours.'),
  launcher_found: z.boolean().nullable().describe('Whether the node and majordomus executables our hook runs still exist; null unless ours.'),
});

const StatusSchema = z.object({
  directory: z.string().describe('The hooks directory git uses, relative to the checkout\'s root.'),
  hooks: z.array(HookStateSchema),
});

export const guardInstall = capability({
  id: 'guard.install',
  kind: 'command',
  title: 'Install the git guard',
  description:
    'Installs the pre-commit and pre-push hooks that refuse (or, in warn mode, warn about) a commit or push touching a path another live peer claimed exclusively. A hook of your own is moved to <name>.user and still runs first; installing again is harmless.',
  input: z
    .object({
      mode: z.enum(GUARD_MODES).default('refuse').describe('refuse (default) or warn; MAJORDOMUS_GUARD overrides it for one command.'),
      hooks: z.array(hookName).min(1).max(GUARD_HOOKS.length).default([...GUARD_HOOKS]).describe('Which hooks (default both).'),
    })
    .strict(),
  output: StatusSchema.extend({ moved: z.array(hookName).describe('Hooks of yours this install moved to <name>.user.') }),
  exposure: {
    mcp: { tool: 'majordomus_guard_install' },
    http: { method: 'POST', path: '/api/v1/guard/install' },
    cli: { path: 'guard install' },
  },
  stability: 'experimental',
  reads: 'layer',
  handler: ({ mode, hooks }, { layer }) =>
    installHooks(layer.index.root, { mode, hooks, launcher: { node: process.execPath, main: join(PACKAGE_ROOT, 'dist/src/cli/main.js') } }),
});

export const guardUninstall = capability({
  id: 'guard.uninstall',
  kind: 'command',
  title: 'Remove the git guard',
  description: 'Removes the guard\'s hooks and puts back the hooks of yours they had moved to <name>.user; other hooks are left alone.',
  input: z.object({}).strict(),
  output: StatusSchema.extend({
    removed: z.array(hookName).describe('Hooks of the guard that were removed.'),
    restored: z.array(hookName).describe('Hooks of yours put back from <name>.user.'),
  }),
  exposure: {
    mcp: { tool: 'majordomus_guard_uninstall' },
    http: { method: 'POST', path: '/api/v1/guard/uninstall' },
    cli: { path: 'guard uninstall' },
  },
  stability: 'experimental',
  reads: 'layer',
  handler: (_input, { layer }) => uninstallHooks(layer.index.root),
});

export const guardStatusCapability = capability({
  id: 'guard.status',
  kind: 'query',
  title: 'Git guard status',
  description: 'For pre-commit and pre-push: no hook, the guard (with its mode), or a hook of somebody else; and whether a hook of yours runs before the guard.',
  input: z.object({}).strict(),
  output: StatusSchema,
  exposure: {
    mcp: { tool: 'majordomus_guard_status' },
    http: { method: 'GET', path: '/api/v1/guard' },
    cli: { path: 'guard status' },
  },
  stability: 'experimental',
  reads: 'layer',
  volatile: true,
  handler: (_input, { layer }) => guardStatus(layer.index.root),
});

export const GUARD_CAPABILITIES: readonly CapabilityDescriptor[] = Object.freeze([guardInstall, guardUninstall, guardStatusCapability]);

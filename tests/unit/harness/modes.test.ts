/**
 * A spawn narrows a profile's mode, never widens it (src/harness/modes.ts): the profile's own mode
 * (or the CLI's default) and every narrower one of the vendor's order pass; a wider one, or one the
 * order does not know, is refused with mode_not_allowed naming what is allowed — unless the profile
 * lists it in allowed_modes.
 */
import { describe, expect, it } from 'vitest';
import { checkMode } from '../../../src/harness/modes.js';
import type { Profile } from '../../../src/harness/profiles.js';
import { adapterFor } from '../../../src/harness/vendors/index.js';

const profile = (agent: Profile['agent'], extra: Partial<Profile> = {}): Profile => ({ id: `team/${agent}`, agent, harness: { enabled: true }, ...extra });

function refusal(run: () => void): { code?: string; message: string } | null {
  try {
    run();
    return null;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

describe('checkMode', () => {
  it('passes no mode, the profile\'s own and every narrower one', () => {
    const planner = profile('claude', { mode: 'default' });
    for (const mode of [undefined, 'default', 'dontAsk', 'plan']) expect(refusal(() => checkMode(adapterFor('claude'), planner, mode))).toBeNull();
    expect(refusal(() => checkMode(adapterFor('codex'), profile('codex'), 'read-only'))).toBeNull();
    expect(refusal(() => checkMode(adapterFor('executor'), profile('executor'), 'read-only'))).toBeNull();
  });

  it('refuses a wider mode with mode_not_allowed, naming the profile\'s mode and what is allowed', () => {
    const denied = refusal(() => checkMode(adapterFor('claude'), profile('claude', { mode: 'plan' }), 'bypassPermissions'));
    expect(denied).toMatchObject({ code: 'mode_not_allowed' });
    expect(denied?.message).toContain('profile "team/claude" runs in mode "plan"');
    expect(denied?.message).toContain('allowed: "plan"');
    expect(refusal(() => checkMode(adapterFor('codex'), profile('codex'), 'danger-full-access'))).toMatchObject({ code: 'mode_not_allowed' });
    expect(refusal(() => checkMode(adapterFor('gemini'), profile('gemini'), 'yolo'))).toMatchObject({ code: 'mode_not_allowed' });
    expect(refusal(() => checkMode(adapterFor('opencode'), profile('opencode', { mode: 'plan' }), 'build'))).toMatchObject({ code: 'mode_not_allowed' });
  });

  it('refuses a mode the vendor\'s order does not know, unless the profile allows it', () => {
    expect(refusal(() => checkMode(adapterFor('opencode'), profile('opencode'), 'my-agent'))?.message).toContain('is not one of the opencode modes');
    expect(refusal(() => checkMode(adapterFor('opencode'), profile('opencode', { allowed_modes: ['my-agent'] }), 'my-agent'))).toBeNull();
  });

  it('lets allowed_modes widen, and nothing beyond them', () => {
    const reviewer = profile('claude', { mode: 'default', allowed_modes: ['plan', 'default', 'acceptEdits'] });
    expect(refusal(() => checkMode(adapterFor('claude'), reviewer, 'acceptEdits'))).toBeNull();
    const denied = refusal(() => checkMode(adapterFor('claude'), reviewer, 'bypassPermissions'));
    expect(denied).toMatchObject({ code: 'mode_not_allowed' });
    expect(denied?.message).toContain('"acceptEdits"');
  });
});

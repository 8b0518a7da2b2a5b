/**
 * A spawn or a turn may narrow its profile's permission mode, never widen it: a caller of `spawn`
 * gets at most what the repository nominated. The order is the vendor's (its adapter's `modes`,
 * narrowest first); a profile's `allowed_modes` lists what it may choose beyond narrowing.
 */
import type { Profile } from './profiles.js';
import { HarnessRefusal } from './types.js';
import type { VendorAdapter } from './vendors/adapter.js';

/** Refuses `requested` with `mode_not_allowed` unless it is the profile's mode, narrower, or allowed. */
export function checkMode(adapter: VendorAdapter, profile: Profile, requested: string | undefined): void {
  const base = profile.mode ?? adapter.defaultMode;
  if (requested === undefined || requested === base) return;
  if (profile.allowed_modes?.includes(requested)) return;
  const baseRank = adapter.modes.indexOf(base);
  const rank = adapter.modes.indexOf(requested);
  if (baseRank >= 0 && rank >= 0 && rank <= baseRank) return;
  const narrower = baseRank >= 0 ? adapter.modes.slice(0, baseRank + 1) : [base];
  const allowed = [...new Set([...narrower, ...(profile.allowed_modes ?? [])])];
  const why = rank < 0 ? `is not one of the ${profile.agent} modes this harness can rank (${adapter.modes.join(', ')})` : 'is wider than the profile\'s';
  throw new HarnessRefusal(
    `mode "${requested}" ${why}: profile "${profile.id}" runs in mode "${base}", and a spawn may narrow it but never widen it; allowed: ${allowed.map((mode) => `"${mode}"`).join(', ')} (a profile widens only through allowed_modes)`,
    'mode_not_allowed',
  );
}

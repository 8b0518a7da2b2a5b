/**
 * The harness's view of the layer: the nominated profiles (`harness.enabled: true`), the policy's
 * limits and scope globs. A profile that is not nominated does not exist for the harness (default
 * deny: spawning runs programs as the user).
 */
import type { LayerView } from '../layer/view.js';
import type { KindMetadata } from '../layer/kinds.js';
import { HarnessRefusal, type AgentName } from './types.js';

export type ProfileMetadata = KindMetadata['profile'];

export interface HarnessLimits {
  /** Finished sessions kept; older ones are reaped. */
  maxSessions: number;
  /** Sessions with a turn in flight at once; null: no ceiling (the default, as hyprpilot's). */
  maxLiveSessions: number | null;
  /** How deep delegation may go (`MAJORDOMUS_SPAWN_DEPTH` of the caller). */
  maxDepth: number;
}

export const DEFAULT_LIMITS: HarnessLimits = Object.freeze({ maxSessions: 64, maxLiveSessions: null, maxDepth: 1 });

/** `*` matches any run of characters, `/` included; `?` one character; the rest is literal. */
export function globMatches(glob: string, value: string): boolean {
  const pattern = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*+/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${pattern}$`).test(value);
}

export interface HarnessPolicy {
  limits: HarnessLimits;
  /** Whether the scope globs let the harness start this profile. */
  inScope(profileId: string): boolean;
  defaultProfile: string | null;
}

export function harnessPolicy(layer: LayerView): HarnessPolicy {
  const policy = layer.list({ kind: 'policy' })[0]?.metadata as KindMetadata['policy'] | undefined;
  const harness = policy?.harness ?? {};
  const include = harness.include_profiles;
  const exclude = harness.exclude_profiles ?? [];
  return {
    limits: {
      maxSessions: harness.max_sessions ?? DEFAULT_LIMITS.maxSessions,
      // How many agents are worth running at once is the machine's and the work's: 0 or unset, no ceiling.
      maxLiveSessions: harness.max_live_sessions === undefined || harness.max_live_sessions === 0 ? DEFAULT_LIMITS.maxLiveSessions : harness.max_live_sessions,
      maxDepth: harness.max_depth ?? DEFAULT_LIMITS.maxDepth,
    },
    inScope: (id) => !exclude.some((glob) => globMatches(glob, id)) && (include === undefined || include.some((glob) => globMatches(glob, id))),
    defaultProfile: harness.default_profile ?? null,
  };
}

export interface Profile extends ProfileMetadata {
  agent: AgentName;
}

/** Every profile of the layer, nominated or not, by id. */
export function profilesOf(layer: LayerView): Map<string, Profile> {
  const profiles = new Map<string, Profile>();
  for (const object of layer.list({ kind: 'profile' })) {
    const metadata = object.metadata as unknown as Profile;
    profiles.set(metadata.id, metadata);
  }
  return profiles;
}

/**
 * The profile a spawn may start, checked in HARNESS.md's order after capacity and `with_config`:
 * scope, then nomination. An unknown id and a profile that is not nominated get the same answer,
 * so the list of the layer's profiles does not leak through spawn.
 */
export function nominatedProfile(layer: LayerView, policy: HarnessPolicy, id: string): Profile {
  if (!policy.inScope(id)) {
    throw new HarnessRefusal(`spawn refused: profile "${id}" is outside the policy's harness scope (include_profiles / exclude_profiles in policy.yaml); call list_profiles for the ones you may start`);
  }
  const profile = profilesOf(layer).get(id);
  if (profile === undefined || !profile.harness.enabled) {
    throw new HarnessRefusal(`profile "${id}" is not nominated for the harness (it needs harness: {enabled: true} in .ai profiles); call list_profiles for the ones you may start`);
  }
  return profile;
}

/**
 * What list_profiles answers: every nominated profile the policy's scope lets the harness start,
 * each with why it cannot start yet when that is already known (its CLI is not found, its cwd is
 * not inside the checkout) — so a caller learns it before a spawn is refused.
 */
import type { LayerView } from '../layer/view.js';
import type { ChildEnv } from '../platform/child-env.js';
import { childPath, resolveCwd } from './prepare.js';
import { resolveCommand } from './process.js';
import { profilesOf, type HarnessPolicy, type Profile } from './profiles.js';
import type { ProfileList } from './schemas.js';
import { adapterFor } from './vendors/index.js';

/** What the list is read from: the serving layer and its policy, the checkout, what agents inherit. */
export interface ProfileSource {
  readonly layer: LayerView;
  readonly policy: HarnessPolicy;
  readonly root: string;
  readonly env: ChildEnv | undefined;
}

/** The nominated profiles in scope, sorted by id, the policy's default marked. */
export function listProfiles(source: ProfileSource): ProfileList {
  const profiles: ProfileList['profiles'] = [];
  for (const profile of profilesOf(source.layer).values()) {
    if (!profile.harness.enabled || !source.policy.inScope(profile.id)) continue;
    const error = profileProblem(source, profile);
    profiles.push({
      id: profile.id,
      agent: profile.agent,
      ...(profile.model === undefined ? {} : { model: profile.model }),
      ...(profile.effort === undefined ? {} : { effort: profile.effort }),
      ...(profile.mode === undefined ? {} : { mode: profile.mode }),
      ...(profile.cwd === undefined ? {} : { cwd: profile.cwd }),
      ...(profile.description === undefined ? {} : { description: profile.description }),
      isDefault: source.policy.defaultProfile === profile.id,
      ...(error === null ? {} : { error }),
    });
  }
  profiles.sort((a, b) => String(a.id).localeCompare(String(b.id)));
  return { profiles };
}

function profileProblem(source: ProfileSource, profile: Profile): string | null {
  try {
    const cwd = resolveCwd(source.root, profile.cwd ?? '');
    const command = profile.command ?? adapterFor(profile.agent).defaultCommand;
    if (resolveCommand(command, cwd, childPath(profile, source.env)) === null) return `the ${profile.agent} CLI "${command}" was not found (install it, or set command in the profile)`;
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** `init --dry-run`: the plan as one unified diff (a/ and b/ prefixes, /dev/null for a new file), as git prints it. */
import { createTwoFilesPatch } from 'diff';
import type { InitPlan } from './plan.js';

export function planDiff(plan: InitPlan): string {
  return plan.files
    .filter((file) => file.state !== 'unchanged')
    .map((file) =>
      createTwoFilesPatch(file.before === null ? '/dev/null' : `a/${file.path}`, `b/${file.path}`, file.before ?? '', file.after, undefined, undefined, {
        headerOptions: { includeIndex: false, includeUnderline: false, includeFileHeaders: true },
      }),
    )
    .join('');
}

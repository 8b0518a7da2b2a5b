/**
 * Work that must finish before the process exits. The HTTP thread registers its stop here: a
 * uWS app still open in a thread when the process exits aborts it, whatever path led there.
 */

const hooks = new Set<() => Promise<void>>();

export function onExit(hook: () => Promise<void>): () => void {
  hooks.add(hook);
  return () => hooks.delete(hook);
}

export async function runExitHooks(): Promise<void> {
  await Promise.allSettled([...hooks].map((hook) => hook()));
  hooks.clear();
}

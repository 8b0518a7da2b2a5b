/**
 * The permission floor: what never goes to a model — no executor tool reads, writes, lists the
 * content of or lets bash show it, and the harness gives no agent a prompt read from it — whatever
 * the mode or the policy (docs/EXECUTOR-FLOOR.md). Three families of rules:
 *
 * - the layer's **local half** (`.ai/local/` unless the manifest says otherwise): the lease and its
 *   token, the harness's sessions and transcripts, the gateway's config, the journals. Always,
 *   whatever the policy says: it is the server's own state, and its token opens every route;
 * - built-in rules on a file's **basename**, at any depth, case-insensitive (over-protecting
 *   `Credentials.json` costs nothing; missing it leaks a key);
 * - the policy's `deny` globs on the path **relative to the root** (`**` style, dotfiles
 *   included). A glob without a `/` matches a basename at any depth, as in .gitignore, and a glob
 *   that matches a directory protects everything beneath it.
 *
 * One matcher (picomatch) serves the floor, the glob tool and grep's file filter alike.
 */
import picomatch from 'picomatch';

/** A built-in rule: the label a refusal names and the basename globs it covers. */
interface BuiltinRule {
  label: string;
  globs: string[];
}

const BUILTIN_RULES: readonly BuiltinRule[] = [
  { label: '.env*', globs: ['.env', '.env.*'] },
  { label: '*.pem', globs: ['*.pem'] },
  { label: '*.key', globs: ['*.key'] },
  { label: 'credentials*', globs: ['credentials*'] },
  { label: 'secrets*', globs: ['secrets*'] },
  { label: 'SSH private key', globs: ['id_rsa', 'id_ed25519', 'id_ecdsa', 'id_dsa'] },
];

/** Templates that document a configuration without holding it. */
const ALLOWED_BASENAMES = ['.env.example', '.env.sample'];

/** The labels of the built-in rules, for docs and tests. */
export const BUILTIN_FLOOR_RULES: readonly string[] = BUILTIN_RULES.map((rule) => rule.label);

export interface FloorMatch {
  /** `local` for the local half, `floor` for a built-in rule, `deny` for a policy glob. */
  kind: 'local' | 'floor' | 'deny';
  /** The local half (`.ai/local/`), the rule's label (`.env*`) or the deny glob itself. */
  rule: string;
}

/** What a floor protects beyond its built-in rules. */
export interface FloorRules {
  /** The manifest's `local.path`, relative to the root with `/` separators (`.ai/local`). */
  localPath: string;
  /** The policy's `permissions.deny` globs. */
  deny: readonly string[];
}

/** Decides whether a path under the root is protected. Build once per tool set; cheap to call. */
export class Floor {
  #builtin: { label: string; test: (basename: string) => boolean }[];
  #allowed: (basename: string) => boolean;
  #deny: { glob: string; test: (path: string) => boolean; basenameOnly: boolean }[];
  /** The local half's segments, compared with a path's first ones. */
  readonly #local: readonly string[];
  /** The local half, relative to the root (`.ai/local`). */
  readonly localPath: string;

  constructor(rules: FloorRules) {
    const { deny } = rules;
    this.localPath = rules.localPath.replace(/^\.\//, '').replace(/\/+$/, '');
    this.#local = this.localPath.toLowerCase().split('/').filter((segment) => segment !== '' && segment !== '.');
    const options = { dot: true, nocase: true };
    this.#builtin = BUILTIN_RULES.map((rule) => ({ label: rule.label, test: picomatch(rule.globs, options) }));
    this.#allowed = picomatch(ALLOWED_BASENAMES, options);
    this.#deny = deny.map((glob) => {
      const normalised = glob.replace(/^\.\//, '').replace(/\/+$/, '');
      return { glob, test: picomatch(normalised, { dot: true }), basenameOnly: !normalised.includes('/') };
    });
  }

  /**
   * The rule protecting `relativePath` (POSIX separators, relative to the root), or undefined.
   * The built-in rules look at the basename; deny globs at the path and each of its ancestors.
   */
  match(relativePath: string): FloorMatch | undefined {
    const segments = relativePath.split('/').filter((segment) => segment !== '' && segment !== '.');
    if (this.#local.length > 0 && segments.length >= this.#local.length && this.#local.every((segment, index) => segments[index]?.toLowerCase() === segment)) {
      return { kind: 'local', rule: `${this.localPath}/` };
    }
    const basename = segments.at(-1) ?? '';
    if (basename !== '' && !this.#allowed(basename)) {
      const rule = this.#builtin.find((candidate) => candidate.test(basename));
      if (rule) return { kind: 'floor', rule: rule.label };
    }
    for (const deny of this.#deny) {
      for (let end = segments.length; end > 0; end--) {
        const candidate = deny.basenameOnly ? (segments[end - 1] as string) : segments.slice(0, end).join('/');
        if (deny.test(candidate)) return { kind: 'deny', rule: deny.glob };
      }
    }
    return undefined;
  }

  /** Whether `relativePath` is the local half or inside it (a walk does not enter it). */
  isLocal(relativePath: string): boolean {
    return this.match(relativePath)?.kind === 'local';
  }
}

/** The refusal a tool answers with, naming the rule that refused. */
export function floorReason(match: FloorMatch): string {
  switch (match.kind) {
    case 'local':
      return `inside the layer's local half (${match.rule}: the server's lease, sessions and config), which never goes to a model`;
    case 'floor':
      return `protected by the permission floor (${match.rule})`;
    case 'deny':
      return `protected by the policy's deny glob (${match.rule})`;
  }
}

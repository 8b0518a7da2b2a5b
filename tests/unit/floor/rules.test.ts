/**
 * The permission floor's rules: the built-in basenames at any depth (case-insensitive, the
 * .env templates allowed) and the policy's deny globs on the path from the root.
 */
import { describe, expect, it } from 'vitest';
import { Floor, floorReason } from '../../../src/floor/rules.js';

const builtin = new Floor({ localPath: '.ai/local', deny: [] });

describe('the permission floor', () => {
  it.each([
    ['.env', '.env*'],
    ['.env.local', '.env*'],
    ['.env.production', '.env*'],
    ['app/.env', '.env*'],
    ['a/b/.ENV.Local', '.env*'],
    ['server.pem', '*.pem'],
    ['certs/server.key', '*.key'],
    ['credentials', 'credentials*'],
    ['config/credentials.json', 'credentials*'],
    ['secrets.yaml', 'secrets*'],
    ['id_rsa', 'SSH private key'],
    ['a/b/id_ed25519', 'SSH private key'],
    ['home/.ssh/id_ecdsa', 'SSH private key'],
    ['id_dsa', 'SSH private key'],
  ])('protects %s by the rule %s', (path, rule) => {
    expect(builtin.match(path)).toEqual({ kind: 'floor', rule });
  });

  it.each(['.env.example', '.env.sample', 'config/.env.example', 'env', 'src/environment.ts', 'id_rsa.pub', 'keys.ts', 'monkey.txt', 'my-credentials.txt', 'docs/secret.md', 'README.md'])(
    'leaves %s alone',
    (path) => {
      expect(builtin.match(path)).toBeUndefined();
    },
  );

  it('applies deny globs to the path from the root, dotfiles included, and to everything under a denied directory', () => {
    const floor = new Floor({ localPath: '.ai/local', deny: ['private/**', 'config/*.yaml', 'vault', './build/'] });
    expect(floor.match('private/notes.txt')).toEqual({ kind: 'deny', rule: 'private/**' });
    expect(floor.match('private/.hidden/x')).toEqual({ kind: 'deny', rule: 'private/**' });
    expect(floor.match('config/prod.yaml')).toEqual({ kind: 'deny', rule: 'config/*.yaml' });
    expect(floor.match('config/sub/prod.yaml')).toBeUndefined();
    expect(floor.match('src/vault/key.txt')).toEqual({ kind: 'deny', rule: 'vault' });
    expect(floor.match('vault')).toEqual({ kind: 'deny', rule: 'vault' });
    expect(floor.match('build/out.js')).toEqual({ kind: 'deny', rule: './build/' });
    expect(floor.match('src/build.ts')).toBeUndefined();
    expect(floor.match('src/index.ts')).toBeUndefined();
  });

  it('always protects the local half and everything in it, whatever the policy says', () => {
    for (const path of ['.ai/local', '.ai/local/state/mcp/server.json', '.ai/local/executor.yaml', '.AI/Local/x', './.ai/local/state/harness/s/turns/1/transcript.jsonl']) {
      expect(builtin.match(path)).toEqual({ kind: 'local', rule: '.ai/local/' });
    }
    for (const path of ['.ai', '.ai/manifest.yaml', '.ai/localized.md', '.ai/repo/local/x.md']) expect(builtin.match(path)).toBeUndefined();
    const elsewhere = new Floor({ localPath: 'state/', deny: [] });
    expect(elsewhere.match('state/mcp/server.json')).toEqual({ kind: 'local', rule: 'state/' });
    expect(elsewhere.isLocal('state')).toBe(true);
    expect(elsewhere.isLocal('.ai/local')).toBe(false);
  });

  it('names the rule in the reason a tool gives', () => {
    expect(floorReason({ kind: 'local', rule: '.ai/local/' })).toMatch(/local half \(\.ai\/local\/.*never goes to a model/);
    expect(floorReason({ kind: 'floor', rule: '.env*' })).toBe('protected by the permission floor (.env*)');
    expect(floorReason({ kind: 'deny', rule: 'private/**' })).toBe("protected by the policy's deny glob (private/**)");
  });
});

/**
 * The conversation file. Covers:
 * - a new conversation has a fresh UUID and the system prompt; save then load gives it back;
 * - the file is 0600 in a 0700 directory, and a save replaces it whole (no temporary left);
 * - an unknown id, a file that is not JSON, one that breaks the schema, one holding another id:
 *   each a ConversationError naming the id; an id that is not a UUID is never joined to a path;
 * - where conversations live: MAJORDOMUS_EXECUTOR_STATE's directory, else <local>/state/executor.
 */
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConversationError, ConversationStore, conversationDir, isConversationId } from '../../../src/executor/conversation.js';
import { readExecutorSettings } from '../../../src/platform/settings.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';

const temps: { cleanup(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((t) => t.cleanup()));
});

async function store(): Promise<ConversationStore> {
  const dir = await makeTempDir('majordomus-conv-');
  temps.push(dir);
  return new ConversationStore(join(dir.path, 'state', 'executor'));
}

async function failure(run: Promise<unknown>): Promise<ConversationError> {
  const error = await run.then(() => null, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(ConversationError);
  return error as ConversationError;
}

describe('ConversationStore', () => {
  it('creates a conversation with a fresh UUID and the system prompt, and loads back what it saved', async () => {
    const s = await store();
    const a = s.create('be brief');
    const b = s.create('be brief');
    expect(isConversationId(a.id)).toBe(true);
    expect(a.id).not.toBe(b.id);
    expect(a.messages).toEqual([{ role: 'system', content: 'be brief' }]);
    a.messages.push({ role: 'user', content: 'task' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ask', arguments: '{}' } }] });
    a.pendingAsk = { callId: 'c1', question: 'which?', options: ['x', 'y'] };
    a.readFiles = ['/r/a.txt'];
    a.baseline = { promptTokens: 120, chars: 300 };
    await s.save(a);
    expect(await s.load(a.id)).toEqual(a);
  });

  it('keeps the file 0600 in a 0700 directory and leaves no temporary file behind', async () => {
    const s = await store();
    const c = s.create('p');
    await s.save(c);
    await s.save(c);
    expect((await stat(s.pathOf(c.id))).mode & 0o777).toBe(0o600);
    expect((await stat(s.dir)).mode & 0o777).toBe(0o700);
    expect(await readdir(s.dir)).toEqual([`${c.id}.json`]);
  });

  it('names an unknown id', async () => {
    const s = await store();
    const id = '00000000-0000-4000-8000-000000000000';
    const error = await failure(s.load(id));
    expect(error.reason).toBe('unknown');
    expect(error.message).toBe(`no conversation ${id} in ${s.dir}`);
  });

  it('names a corrupt file: not JSON, against the schema, or holding another id', async () => {
    const s = await store();
    await mkdir(s.dir, { recursive: true });
    const id = '11111111-1111-4111-8111-111111111111';
    await writeFile(s.pathOf(id), '{"half": ');
    const notJson = await failure(s.load(id));
    expect([notJson.reason, notJson.message]).toEqual(['corrupt', expect.stringMatching(new RegExp(`^the conversation ${id} is corrupt \\(not JSON: `))]);

    const good = s.create('p');
    await writeFile(s.pathOf(id), JSON.stringify({ ...good, id, messages: [{ role: 'robot', content: 'x' }] }));
    expect((await failure(s.load(id))).message).toMatch(new RegExp(`^the conversation ${id} is corrupt \\(messages\\.0`));

    await writeFile(s.pathOf(id), JSON.stringify(good));
    expect((await failure(s.load(id))).message).toBe(`the conversation ${id} is corrupt (it holds ${good.id})`);
  });

  it('never joins an id that is not a UUID to a path', async () => {
    const s = await store();
    for (const id of ['../../etc/passwd', '', 'abc', '11111111-1111-4111-8111-11111111111Z']) {
      expect(isConversationId(id)).toBe(false);
      expect((await failure(s.load(id))).message).toBe(`"${id}" is not a conversation id`);
    }
  });
});

describe('where conversations live', () => {
  it('uses MAJORDOMUS_EXECUTOR_STATE when set, else <root>/<local>/state/executor', () => {
    expect(conversationDir('/sessions/s1', '/repo', '.ai/local')).toBe('/sessions/s1');
    expect(conversationDir(null, '/repo', 'custom/local')).toBe('/repo/custom/local/state/executor');
    expect(readExecutorSettings({ MAJORDOMUS_EXECUTOR_STATE: '/x', MAJORDOMUS_TASK_ID: 't1' })).toEqual({ stateDir: '/x', taskId: 't1' });
    expect(readExecutorSettings({ MAJORDOMUS_EXECUTOR_STATE: '' })).toEqual({ stateDir: null, taskId: null });
  });
});

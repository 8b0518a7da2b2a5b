/**
 * The opencode adapter:
 * - argv of a first turn and a resumed one (`--session`), model, effort as `--variant`, mode as
 *   `--agent`, profile args last, and the prompt on stdin (opencode quotes message arguments that
 *   hold spaces, so a positional prompt would reach the model changed);
 * - a turn's events: the session id on every event, the answer from the text parts joined, tool
 *   parts summarized, an error event; no terminal event, so `ended` stays false.
 */
import { describe, expect, it } from 'vitest';
import { adapterFor } from '../../../../src/harness/vendors/index.js';

const opencode = adapterFor('opencode');
const shape = { prompt: 'say "hi" twice', cwd: '/repo', args: [] as string[] };
const SESSION = 'ses_5e0fb9c0dffeyZ2c5Ct1Zr6Mkd';

function feed(lines: unknown[]) {
  const parser = opencode.turnParser();
  const entries = lines.map((line) => parser.line(typeof line === 'string' ? line : JSON.stringify(line)));
  return { parser, entries };
}

describe('opencode invocation', () => {
  it('runs with JSON events and the prompt on stdin, exactly as given', () => {
    expect(opencode.invocation(shape, null)).toEqual({ args: ['run', '--format', 'json'], stdin: 'say "hi" twice', hidden: [] });
    expect(opencode.defaultCommand).toBe('opencode');
  });

  it('continues a session and maps model, effort (variant) and mode (agent), profile args last', () => {
    const invocation = opencode.invocation({ ...shape, model: 'x/m1', effort: 'high', mode: 'plan', args: ['--title', 'review'] }, SESSION);
    expect(invocation.args).toEqual(['run', '--format', 'json', '--session', SESSION, '--model', 'x/m1', '--variant', 'high', '--agent', 'plan', '--title', 'review']);
    expect(invocation.hidden.map((i) => invocation.args[i])).toEqual([SESSION]);
  });

  it('names -p, the short form of --password, as secret-bearing', () => {
    expect(opencode.secretFlags).toEqual(['-p']);
  });
});

describe('opencode events', () => {
  it('reads a whole turn: session id, steps, a tool, the texts joined; the turn never says it ended', () => {
    const part = { sessionID: SESSION, messageID: 'msg_1' };
    const { parser, entries } = feed([
      { type: 'step_start', timestamp: 1764526159000, sessionID: SESSION, part: { ...part, type: 'step-start' } },
      { type: 'text', timestamp: 1764526159100, sessionID: SESSION, part: { ...part, type: 'text', text: 'Listing files.', time: { start: 1, end: 2 } } },
      { type: 'tool_use', timestamp: 1764526159200, sessionID: SESSION, part: { ...part, type: 'tool', tool: 'bash', callID: 'c1', state: { status: 'completed', input: { command: 'ls' }, output: 'a.txt\n', title: 'ls' } } },
      { type: 'step_finish', timestamp: 1764526159300, sessionID: SESSION, part: { ...part, type: 'step-finish', reason: 'tool-calls', tokens: { input: 10, output: 5 } } },
      { type: 'reasoning', timestamp: 1764526159350, sessionID: SESSION, part: { ...part, type: 'reasoning', text: 'one file' } },
      { type: 'text', timestamp: 1764526159400, sessionID: SESSION, part: { ...part, type: 'text', text: 'One file: a.txt.', time: { start: 3, end: 4 } } },
      { type: 'step_finish', timestamp: 1764526159500, sessionID: SESSION, part: { ...part, type: 'step-finish', reason: 'stop', tokens: { input: 12, output: 6 } } },
    ]);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['system', 'step started'],
      ['assistant', 'Listing files.'],
      ['tool_use', 'bash {"command":"ls"}'],
      ['system', 'step finished (tool-calls)'],
      ['other', 'one file'],
      ['assistant', 'One file: a.txt.'],
      ['system', 'step finished (stop)'],
    ]);
    expect(parser.vendorId).toBe(SESSION);
    expect(parser.answer).toBe('Listing files.\nOne file: a.txt.');
    expect(parser.ended).toBe(false);
    expect(parser.error).toBeNull();
  });

  it('reads what opencode 1.18.33 printed for a turn against a scripted chat-completions API', () => {
    const { parser, entries } = feed([
      '{"type":"step_start","timestamp":1796062786133,"sessionID":"ses_dd250eb6effeM2VDVsQgG99kIx","part":{"id":"prt_22daf31ff0013RGV7f65nlLr2q","messageID":"msg_22daf23a5001TImFI9rgp8IMGI","sessionID":"ses_dd250eb6effeM2VDVsQgG99kIx","snapshot":"285268244a7f257f99f3e02650b4e54fde747d4d","type":"step-start"}}',
      '{"type":"text","timestamp":1796062786133,"sessionID":"ses_dd250eb6effeM2VDVsQgG99kIx","part":{"id":"prt_22daf320a001JRTPiri3KM4v5M","messageID":"msg_22daf23a5001TImFI9rgp8IMGI","sessionID":"ses_dd250eb6effeM2VDVsQgG99kIx","type":"text","text":"pong 2","time":{"start":1796062786058,"end":1796062786085}}}',
      '{"type":"step_finish","timestamp":1796062786384,"sessionID":"ses_dd250eb6effeM2VDVsQgG99kIx","part":{"id":"prt_22daf32f8001YkL7Rysxe499XQ","reason":"stop","snapshot":"285268244a7f257f99f3e02650b4e54fde747d4d","messageID":"msg_22daf23a5001TImFI9rgp8IMGI","sessionID":"ses_dd250eb6effeM2VDVsQgG99kIx","type":"step-finish","tokens":{"total":5,"input":3,"output":2,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}}',
    ]);
    expect(entries.map((e) => [e.kind, e.text])).toEqual([
      ['system', 'step started'],
      ['assistant', 'pong 2'],
      ['system', 'step finished (stop)'],
    ]);
    expect(parser.vendorId).toBe('ses_dd250eb6effeM2VDVsQgG99kIx');
    expect(parser.answer).toBe('pong 2');
    expect(parser.ended).toBe(false);
    expect(parser.error).toBeNull();
  });

  it('takes the message of an error event, and a failed tool says so', () => {
    const { parser, entries } = feed([
      { type: 'tool_use', sessionID: SESSION, part: { type: 'tool', tool: 'edit', state: { status: 'error', input: {}, error: 'file not found' } } },
      { type: 'error', timestamp: 1764526159600, sessionID: SESSION, error: { name: 'ProviderAuthError', data: { providerID: 'x', message: 'invalid api key' } } },
      { type: 'error', sessionID: SESSION, error: { name: 'UnknownError' } },
    ]);
    expect(entries.map((e) => e.text)).toEqual(['edit: error: file not found', 'invalid api key', 'UnknownError']);
    expect(parser.error).toBe('invalid api key');
    expect(parser.answer).toBeNull();
  });
});

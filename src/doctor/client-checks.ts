/**
 * One client's findings, in the order a connection needs them: its configuration names
 * majordomus, the command resolves here, the command starts a server that answers `initialize`,
 * and the client has the approval or trust it needs to start a project's server at all.
 */
import type { ChildEnv } from '../platform/child-env.js';
import type { ClientConfig, EntryCommand } from '../init/clients.js';
import { isPathCommand, resolveCommand } from '../init/command-path.js';
import { approvalFor } from './approval.js';
import { readClientEntry } from './client-entry.js';
import { finding, type Finding } from './findings.js';
import type { StartResult } from './server-start.js';

/** Starts a command once and remembers the answer (`again`: it was started for an earlier client): four clients usually name the same one. */
export type StartOnce = (entry: EntryCommand) => Promise<StartResult & { again: boolean }>;

export interface ClientCheckContext {
  root: string;
  env: ChildEnv;
  start: StartOnce;
}

function shown(entry: EntryCommand): string {
  return [entry.command, ...entry.args].join(' ');
}

function commandFix(entry: EntryCommand): string {
  if (isPathCommand(entry.command)) {
    return 'run `majordomus init --force` to write the portable entry (`majordomus mcp`, found on PATH), or `init --local --force` for this machine\'s launcher';
  }
  if (entry.command === 'npx') return 'install npm (it comes with Node.js) where the client runs';
  return `install it (npm install -g majordomus) or put the directory holding ${entry.command} on the PATH the client starts with; or run \`majordomus init --npx --force\``;
}

/** The findings of `config` in the repository `context.root`; none but one `info` when the client is not configured. */
export async function clientFindings(config: ClientConfig, context: ClientCheckContext): Promise<{ configured: boolean; findings: Finding[] }> {
  const at = (found: Finding): Finding => ({ ...found, client: config.id });
  const reading = await readClientEntry(context.root, config);
  if (reading.state === 'absent' || reading.state === 'no-entry') {
    const where = reading.state === 'absent' ? `no ${reading.file}` : `no majordomus entry in ${reading.file}`;
    return { configured: false, findings: [at(finding('client.config', 'info', `not configured (${where})`, 'majordomus init'))] };
  }
  if (reading.state === 'unparsable') {
    return { configured: true, findings: [at(finding('client.config', 'fail', `${reading.file} cannot be read by ${config.client}: ${reading.why}`, `fix ${reading.file}; majordomus init names what it cannot parse`))] };
  }
  const entry = reading.command;
  if (entry === null) {
    return { configured: true, findings: [at(finding('client.config', 'fail', `the majordomus entry of ${reading.file} names no command`, 'majordomus init --force'))] };
  }
  if (!entry.enabled) {
    return { configured: true, findings: [at(finding('client.config', 'warn', `the majordomus entry of ${reading.file} is switched off`, `enable it in ${reading.file}`))] };
  }
  const findings: Finding[] = [at(finding('client.config', 'ok', `${reading.file} starts \`${shown(entry)}\``))];
  const resolution = await resolveCommand(entry.command, context.root, { ...context.env, ...entry.env }.PATH);
  if (!resolution.found) {
    findings.push(at(finding('client.command', 'fail', `${resolution.why}, so ${config.client} cannot start majordomus`, commandFix(entry))));
  } else {
    findings.push(at(finding('client.command', 'ok', `${entry.command} resolves to ${resolution.path}`)));
    const started = await context.start(entry);
    if (started.ok) {
      const named = started.server.startsWith('majordomus') ? 'ok' : 'warn';
      const again = started.again ? '; started once for every client naming this command' : '';
      findings.push({ ...at(finding('client.start', named, `starts and answers initialize in ${started.ms} ms (${started.server}${again})`, named === 'ok' ? undefined : 'the command starts another server: point the entry at majordomus')), ms: started.ms });
    } else {
      findings.push({ ...at(finding('client.start', 'fail', `\`${shown(entry)}\` ${started.why}`, `run \`${shown(entry)}\` in ${context.root} to see why`)), ms: started.ms });
    }
  }
  const approval = await approvalFor(config.id, context.root, context.env);
  findings.push(at(finding('client.approval', approval.status, approval.message, approval.fix)));
  if (config.id === 'gemini') {
    findings.push(at(finding('client.note', 'info', 'Gemini CLI reads .gemini/settings.json only in the directory it starts in: start gemini at the repository\'s root')));
  }
  return { configured: true, findings };
}

/** The doctor's report as text: each client's findings under its name, then what every client shares, then the verdict. */
import type { ClientConfig } from '../init/clients.js';
import type { DoctorReport, Finding } from './findings.js';

const LABELS = { ok: 'ok  ', info: 'info', warn: 'warn', fail: 'FAIL' } as const;
const INDENT = '        ';

function indented(text: string): string {
  return text.split('\n').join(`\n${INDENT}`);
}

function line(found: Finding): string {
  const head = `  ${LABELS[found.status]}  ${indented(found.message)}`;
  if (found.fix === undefined || found.status === 'ok') return head;
  return `${head}\n${INDENT}${found.status === 'info' ? 'hint' : 'fix'}: ${indented(found.fix)}`;
}

function count(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** The verdict: every configured client would connect, or each problem with its fix. */
function verdict(report: DoctorReport, names: ReadonlyMap<string, string>): string[] {
  const failed = report.findings.filter((found) => found.status === 'fail');
  const warned = report.findings.filter((found) => found.status === 'warn');
  if (failed.length === 0) {
    return [`every configured client would connect${warned.length === 0 ? '' : ` (${count(warned.length, 'warning')} above)`}`];
  }
  return [
    `${count(failed.length, 'problem')} keep${failed.length === 1 ? 's' : ''} a client from connecting:`,
    ...failed.map((found) => `  ${found.client === undefined ? '' : `${names.get(found.client) ?? found.client}: `}${indented(found.message)}${found.fix === undefined ? '' : `\n${INDENT}fix: ${indented(found.fix)}`}`),
  ];
}

export function renderReport(report: DoctorReport, clients: readonly Pick<ClientConfig, 'id' | 'client'>[]): string {
  const names = new Map(clients.map((config) => [config.id as string, config.client]));
  const lines = [`majordomus doctor ${report.version}${report.root === null ? '' : ` in ${report.root}`}`];
  const general = report.findings.filter((found) => found.client === undefined && found.check === 'repository');
  lines.push(...general.filter((found) => found.status !== 'ok').map(line));
  for (const config of clients) {
    const own = report.findings.filter((found) => found.client === config.id);
    if (own.length > 0) lines.push('', config.client, ...own.map(line));
  }
  const shared = report.findings.filter((found) => found.client === undefined && found.check !== 'repository');
  lines.push('', 'Every client', ...shared.map(line), '', ...verdict(report, names));
  return lines.join('\n');
}

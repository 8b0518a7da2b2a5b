/**
 * The real agent CLIs, for black-box tests that drive them offline against a scripted model API
 * (./model-api.ts). `installedAgentBin` installs them once (tests/helpers/install-real-clients.sh,
 * which holds the one list of versions with tests/helpers/real-clients.versions); `agentEnvironment`
 * prepares a throwaway HOME for one vendor and answers the environment that points it at the model
 * API and keeps it from the internet, from login, trust and onboarding prompts, and from telemetry.
 *
 * What each needs, found by running them under strace (only loopback connections remain):
 * - claude: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY; CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
 *   stops telemetry, error reports and update checks. `-p` asks no trust or onboarding question.
 * - codex: a config.toml naming a Responses provider; a model whose metadata codex knows (an
 *   unknown one makes it print an `error` item first); the `plugins` feature off (it runs
 *   `git ls-remote https://github.com/openai/plugins.git` otherwise); analytics off.
 * - gemini: an API key, GOOGLE_GEMINI_BASE_URL, settings.json choosing API-key auth and a model
 *   (the default "auto" first asks a router model with `generateContent` for a JSON verdict),
 *   usage statistics and telemetry off (they resolve Google hosts otherwise), and a trusted
 *   workspace (headless gemini exits 55 in an untrusted folder): GEMINI_CLI_TRUST_WORKSPACE=true.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { AgentName } from '../../src/harness/types.js';
import { withoutCoverage } from './coverage-env.js';

const execFileAsync = promisify(execFile);

/** The agents this helper can drive against the scripted model API. */
export type DrivableAgent = Extract<AgentName, 'claude' | 'codex' | 'gemini'>;

export const DRIVABLE_AGENTS: readonly DrivableAgent[] = ['claude', 'codex', 'gemini'];

const INSTALLER = fileURLToPath(new URL('./install-real-clients.sh', import.meta.url));
/** Generous: a fresh machine downloads four CLIs (hundreds of MB) from npm. */
export const INSTALL_TIMEOUT_MS = 600_000;

/** The models named by default: ones each CLI knows (codex warns about an unknown one). */
export const DEFAULT_MODELS: Readonly<Record<DrivableAgent, string>> = {
  claude: 'claude-opus-5-5',
  codex: 'gpt-5.5',
  gemini: 'gemini-2.5-flash',
};

/** The (fake) key every vendor is given; the model API never checks it and never records it. */
export const SCRIPTED_API_KEY = 'sk-scripted-model-api';

/** The variables of ours a child keeps; everything else (a developer's keys, HOME) stays out. */
const INHERITED = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'SYSTEMROOT'];

let installing: Promise<string> | null = null;

/** The directory holding the installed CLIs (node_modules/.cache/majordomus-real-clients). */
export function installedAgentClis(): Promise<string> {
  // npm is not ours: no coverage variable.
  installing ??= execFileAsync('bash', [INSTALLER], { env: withoutCoverage(), encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 })
    .then(({ stdout }) => stdout.trim())
    .catch((error: unknown) => {
      installing = null;
      throw new Error(`installing the real agent CLIs failed (${INSTALLER}): ${String(error)}`);
    });
  return installing;
}

/** The directory of the installed CLIs' executables (claude, codex, gemini, opencode). */
export async function installedAgentBinDir(): Promise<string> {
  return join(await installedAgentClis(), 'node_modules', '.bin');
}

/** The absolute path of one installed CLI. */
export async function installedAgentBin(agent: DrivableAgent): Promise<string> {
  return join(await installedAgentBinDir(), agent);
}

export interface AgentEnvironmentOptions {
  /** A throwaway directory used as HOME; the vendor's configuration is written into it. */
  home: string;
  /** The model API's root URL (`ModelApi.url`, `http://127.0.0.1:PORT`). */
  modelApiUrl: string;
  /** The model named in the configuration (codex, gemini). Default DEFAULT_MODELS. */
  model?: string;
}

export interface AgentEnvironment {
  /** The child's whole environment: PATH and locale of ours, nothing else of ours. */
  env: NodeJS.ProcessEnv;
  /** Only what the vendor needs besides HOME (for a harness profile's `env`). */
  vendorEnv: Readonly<Record<string, string>>;
  /** Where the CLIs are; first on the env's PATH, so the bare name resolves. */
  binDir: string;
  /** The vendor's executable, absolute. */
  command: string;
  /** The model the configuration names (codex, gemini); claude's own default for claude. */
  model: string;
}

/** Writes the vendor's configuration into `home` and answers the environment to run it with. */
export async function agentEnvironment(agent: DrivableAgent, options: AgentEnvironmentOptions): Promise<AgentEnvironment> {
  const binDir = await installedAgentBinDir();
  const model = options.model ?? DEFAULT_MODELS[agent];
  const vendorEnv = await VENDORS[agent](options.home, options.modelApiUrl.replace(/\/+$/, ''), model);
  // No coverage either: node would hand a CLI its own NODE_V8_COVERAGE unless the name is there.
  const env: NodeJS.ProcessEnv = withoutCoverage({});
  for (const name of INHERITED) if (process.env[name] !== undefined) env[name] = process.env[name];
  const home = options.home;
  Object.assign(env, {
    PATH: [binDir, process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
    HOME: home,
    // Caches, sockets and state the CLIs keep outside HOME land in the throwaway directory too.
    TMPDIR: await ensureDir(join(home, 'tmp')),
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    NO_COLOR: '1',
    ...vendorEnv,
  });
  return { env, vendorEnv, binDir, command: join(binDir, agent), model };
}

type VendorSetup = (home: string, apiUrl: string, model: string) => Promise<Record<string, string>>;

const VENDORS: Record<DrivableAgent, VendorSetup> = {
  async claude(_home, apiUrl) {
    return {
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: SCRIPTED_API_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    };
  },

  async codex(home, apiUrl, model) {
    const codexHome = await ensureDir(join(home, '.codex'));
    const config = [
      `model = ${JSON.stringify(model)}`,
      'model_provider = "scripted"',
      '',
      '[model_providers.scripted]',
      'name = "scripted model API"',
      `base_url = ${JSON.stringify(`${apiUrl}/v1`)}`,
      'env_key = "SCRIPTED_MODEL_API_KEY"',
      'wire_api = "responses"',
      '',
      '[features]',
      'plugins = false',
      'remote_plugin = false',
      'shell_snapshot = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
    ].join('\n');
    await writeFile(join(codexHome, 'config.toml'), config);
    return { CODEX_HOME: codexHome, SCRIPTED_MODEL_API_KEY: SCRIPTED_API_KEY };
  },

  async gemini(home, apiUrl, model) {
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      // Without a model gemini's default "auto" first asks a router model for a JSON verdict.
      model: { name: model },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    };
    await writeFile(join(await ensureDir(join(home, '.gemini')), 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
    return { GEMINI_API_KEY: SCRIPTED_API_KEY, GOOGLE_GEMINI_BASE_URL: apiUrl, GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  },
};

export interface AgentTurnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; null closes stdin at once (codex waits for its end). */
  stdin: string | null;
  /** Past it the turn's process group is killed and the result says `timedOut`. Default 120 s. */
  timeoutMs?: number;
  /** Called with each piece of stdout as it arrives (to watch a turn in flight). */
  onStdout?: (chunk: string) => void;
}

export interface AgentTurnResult {
  /** The CLI's pid, which is also its process group's id. */
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/** Every turn still running, by process group, so a test's cleanup can end them all. */
const running = new Set<ChildProcess>();

/** A turn in flight. */
export interface AgentTurn {
  /** The CLI's pid, which is also its process group's id. */
  readonly pid: number;
  /** Settles when the CLI has exited and its output is closed. */
  readonly done: Promise<AgentTurnResult>;
  /** Signals the whole process group (what the harness does to kill or steer a turn). */
  signalGroup(signal: NodeJS.Signals): void;
}

/**
 * Starts one turn of a CLI in its own process group (codex's node wrapper starts a native child;
 * a timeout kills the whole group).
 */
export function startAgentTurn(command: string, args: readonly string[], options: AgentTurnOptions): AgentTurn {
  const started = Date.now();
  const child = spawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  if (child.pid === undefined) {
    return { pid: -1, done: new Promise((_resolve, reject) => child.once('error', reject)), signalGroup: () => {} };
  }
  const pid = child.pid;
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    options.onStdout?.(chunk);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A CLI that exits before reading its stdin closes the pipe: not an error of the turn.
  child.stdin.on('error', () => {});
  child.stdin.end(options.stdin ?? undefined);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    signalGroup(pid, 'SIGKILL');
  }, options.timeoutMs ?? 120_000);
  const done = new Promise<AgentTurnResult>((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ pid, code, signal, timedOut, stdout, stderr, ms: Date.now() - started });
    });
  });
  return { pid, done, signalGroup: (signal) => signalGroup(pid, signal) };
}

/** Runs one turn of a CLI to its exit (see startAgentTurn). */
export function runAgentTurn(command: string, args: readonly string[], options: AgentTurnOptions): Promise<AgentTurnResult> {
  return startAgentTurn(command, args, options).done;
}

/** Kills the process group of every turn still running (a test's cleanup). */
export function killAgentTurns(): void {
  for (const child of running) if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group has already gone.
  }
}

async function ensureDir(path: string): Promise<string> {
  await mkdir(path, { recursive: true });
  return path;
}

/**
 * What the executor's loop knows of a tool: a name, a description and a JSON Schema for the model,
 * and `run`, which never throws for anything the model got wrong — a bad input, a refused path,
 * a failing command are outcomes the model reads and acts on.
 */

/** The JSON Schema of a tool's input (an object schema), as chat completions take it. */
export type ToolParameters = Record<string, unknown>;

/** What every tool run is given. */
export interface ToolContext {
  /** The checkout's root (realpath): nothing outside it is read, written or run in. */
  root: string;
  /** The session's working directory (realpath, inside root): relative paths resolve here. */
  cwd: string;
  /** Files read in this conversation (absolute paths): edit_file edits only those. */
  readFiles: Set<string>;
  /** Aborts a running tool (the turn is being cancelled). */
  signal: AbortSignal;
}

export interface ToolOutcome {
  /** False for every failure, refusals included. */
  ok: boolean;
  /** What the model reads: the result, or why there is none. Never holds a protected file's content. */
  output: string;
  /** Set when the permission floor (or the policy's deny globs) refused: the reason, for the transcript. */
  refused?: string;
  /** Set by `ask`: the turn ends waiting for the orchestrator's answer. */
  ask?: { question: string; options: string[] };
}

export interface ExecutorTool {
  name: string;
  description: string;
  parameters: ToolParameters;
  run(input: unknown, context: ToolContext): Promise<ToolOutcome>;
}

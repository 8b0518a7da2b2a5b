/**
 * What every tool shares: input validation with zod (a bad input is an outcome the model reads,
 * never a throw) and the environment a run gets — the floor and, scanned for this run, the
 * protected files and the redactor built from them.
 */
import { z } from 'zod';
import type { Floor } from '../../floor/rules.js';
import type { ProtectedScan } from '../../floor/protected-files.js';
import type { ToolContext, ToolOutcome, ToolParameters } from '../tool.js';

export interface ToolEnvironment {
  floor: Floor;
  /** This run's scan of the checkout: protected files and the redactor of their values. */
  scan: ProtectedScan;
}

/** A tool before the floor's redaction is wrapped around it (see index.ts). */
export interface ToolDefinition<Schema extends z.ZodType> {
  name: string;
  description: string;
  schema: Schema;
  run(input: z.output<Schema>, context: ToolContext, environment: ToolEnvironment): Promise<ToolOutcome>;
}

/** Defines a tool; the type parameter ties `run`'s input to the schema. */
export function defineTool<Schema extends z.ZodType>(definition: ToolDefinition<Schema>): ToolDefinition<Schema> {
  return definition;
}

/** The schema as chat completions take it: JSON Schema without the dialect line. */
export function toParameters(schema: z.ZodType): ToolParameters {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return parameters;
}

/** Parses a tool's input, or says what is wrong with it in words the model can act on. */
export function parseInput<Schema extends z.ZodType>(name: string, schema: Schema, input: unknown): { ok: true; value: z.output<Schema> } | { ok: false; outcome: ToolOutcome } {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'input'}: ${issue.message}`);
  return { ok: false, outcome: { ok: false, output: `invalid input for ${name}: ${problems.join('; ')}` } };
}

/** Cuts a line longer than `max` characters, saying so. */
export function cutLine(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [line cut at ${max} of ${line.length} characters]`;
}

/** A failure the model reads (not a refusal). */
export function failure(output: string): ToolOutcome {
  return { ok: false, output };
}

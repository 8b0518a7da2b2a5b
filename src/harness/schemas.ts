/**
 * The shapes the harness answers with, as zod schemas: the capabilities publish them (OpenAPI, MCP
 * output schemas) and the session table's methods are typed by them.
 */
import { z } from 'zod';

/** A turn's files (paths relative to the checkout's root): the session's and this turn's. */
export const TurnFilesSchema = z
  .object({
    dir: z.string().describe('The session\'s directory.'),
    turnsDir: z.string().describe('Where every turn\'s directory lives.'),
    turn: z.number().int().describe('The turn the paths below belong to.'),
    turnDir: z.string(),
    transcript: z.string(),
    stderr: z.string(),
    done: z.string().describe('Written once the turn has ended: a shell can wait for it.'),
    breadcrumb: z.string().describe('session.json, what a successor server adopts.'),
  })
  .describe('Paths may vanish: a reaped session takes its directory with it.');

export const SessionInfoSchema = z
  .object({
    profile: z.string(),
    agent: z.string(),
    model: z.string().optional(),
    effort: z.string().optional(),
    mode: z.string().optional(),
    cwd: z.string(),
    startedAt: z.string(),
    turnStartedAt: z.string(),
    pid: z.number().int().nullable(),
    files: TurnFilesSchema,
    argv: z.array(z.string()).describe('The command line, secret-looking values redacted.'),
    env: z.array(z.string()).describe('The names (only) of the variables the profile and the harness set.'),
    promptBytes: z.number().int(),
  })
  .describe('How the session\'s current turn runs. The vendor\'s own session id is never shown.');

export const TurnStatusSchema = z.enum(['running', 'exited', 'killed', 'steered', 'lost']);

export const LaunchAnswerSchema = z.object({
  session: z.string(),
  profile: z.string(),
  agent: z.string(),
  status: z.enum(['running', 'exited']),
  turn: z.number().int(),
  exitCode: z.number().int().optional(),
  timedOut: z.boolean().optional().describe('wait ended at its deadline while the turn still runs.'),
  sessionInfo: SessionInfoSchema,
  text: z.string().describe('The answer (capped), why there is none, or how to follow a running turn.'),
  nextCursor: z.string().optional(),
  answer: z.string().optional(),
});

export const ProfileListSchema = z.object({
  profiles: z.array(
    z.object({
      id: z.string(),
      agent: z.string(),
      model: z.string().optional(),
      effort: z.string().optional(),
      mode: z.string().optional(),
      cwd: z.string().optional(),
      description: z.string().optional(),
      isDefault: z.boolean(),
      error: z.string().optional(),
    }),
  ),
});

export const SendAnswerSchema = LaunchAnswerSchema.extend({ delivery: z.enum(['resumed', 'steered']) });

export const SessionListSchema = z.object({
  sessions: z.array(
    z.object({
      session: z.string(),
      profile: z.string(),
      agent: z.string(),
      status: TurnStatusSchema,
      createdAt: z.string(),
      lastTurnAt: z.string(),
      exitCode: z.number().int().optional(),
    }),
  ),
});

export const SessionStatusSchema = z.object({
  session: z.string(),
  status: TurnStatusSchema,
  turn: z.number().int(),
  turnFinished: z.boolean(),
  transcriptBytes: z.number().int(),
  hasResult: z.boolean(),
  exitCode: z.number().int().optional(),
  files: TurnFilesSchema,
  turns: z
    .array(z.object({ turn: z.number().int(), status: TurnStatusSchema, exitCode: z.number().int().optional(), uri: z.string().describe('Where that turn\'s result is read.') }))
    .describe('Every turn of the session and how it ended.'),
});

export const ReadAnswerSchema = z.object({
  session: z.string(),
  lines: z.array(z.string()).describe('Transcript lines: JSON objects {at, kind, text?, event} as text.'),
  nextCursor: z.string().optional().describe('Absent only when the session has exited and everything was read.'),
  stderr: z.string().optional().describe('The last 2,000 characters of the turn\'s stderr.'),
});

export const KillAnswerSchema = z.object({ session: z.string(), action: z.enum(['terminated', 'reaped', 'gone']), wasRunning: z.boolean() });

export const ResourceAnswerSchema = z.object({ text: z.string(), mimeType: z.string() });

export type ProfileList = z.input<typeof ProfileListSchema>;
export type LaunchAnswer = z.input<typeof LaunchAnswerSchema>;
export type SendAnswer = z.input<typeof SendAnswerSchema>;
export type SessionList = z.input<typeof SessionListSchema>;
export type SessionStatus = z.input<typeof SessionStatusSchema>;
export type ReadAnswer = z.input<typeof ReadAnswerSchema>;
export type KillAnswer = z.input<typeof KillAnswerSchema>;
export type ResourceAnswer = z.input<typeof ResourceAnswerSchema>;

/** The shapes the task capabilities answer with (HermitAgent's, plus what we report honestly). */
import { z } from 'zod';
import { TURN_STATES } from '../executor/events.js';

export const TaskStatusSchema = z.enum(['running', ...TURN_STATES]).describe(
  'running; completed (it answered); waiting (it asked a question: reply_task); max_turns, loop, error (it did not finish, and says why); cancelled.',
);

const counts = z.object({
  requests: z.number().int(),
  failed: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  failovers: z.number().int(),
});

export const TaskStateSchema = z.object({
  task_id: z.string(),
  status: TaskStatusSchema,
  turns: z.number().int().describe('Model requests the executor made for this task so far (finished turns).'),
  last_tool: z.string().optional().describe('The last tool the executor called.'),
  question: z.string().optional().describe('While waiting: what it asks.'),
  options: z.array(z.string()).optional().describe('While waiting: the answers it offers, if any.'),
  token_totals: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }).describe('As the model endpoint reported them, summed over the task.'),
  result: z.string().optional().describe('The answer (head 2,000 + tail 1,000 characters unless full), or why there is none.'),
  error: z.string().optional().describe('Why the task did not complete.'),
  gateway: counts.extend({ by_provider: z.record(z.string(), counts) }).optional().describe('What the gateway counted for this task since the server started.'),
});

export const CancelAnswerSchema = z.object({ task_id: z.string(), status: TaskStatusSchema, was_running: z.boolean() });

export const UsageSnapshotSchema = z.object({
  since: z.string().describe('When counting started (the server\'s start).'),
  providers: z.record(z.string(), counts),
  tasks: z.record(z.string(), counts.extend({ by_provider: z.record(z.string(), counts) })),
});

export type TaskState = z.input<typeof TaskStateSchema>;
export type CancelAnswer = z.input<typeof CancelAnswerSchema>;

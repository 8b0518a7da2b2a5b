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
  priced_requests: z.number().int().optional().describe('Requests whose model has a price in the gateway\'s config; absent when none had.'),
  cost: z.number().optional().describe('What the priced requests cost (prices per million tokens in executor.yaml), in the currency given beside it.'),
  saved: z.number().optional().describe('What the priced requests saved against the config\'s reference price (prices.reference); absent without one.'),
});

const taskUsage = counts.extend({
  by_provider: z.record(z.string(), counts),
  currency: z.string().optional().describe('The currency of cost and saved, when there is a cost.'),
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
  gateway: taskUsage.optional().describe('What the gateway counted for this task since the server started, with its cost where the models are priced.'),
});

export const CancelAnswerSchema = z.object({ task_id: z.string(), status: TaskStatusSchema, was_running: z.boolean() });

export const UsageSnapshotSchema = z.object({
  since: z.string().describe('When counting started (the server\'s start).'),
  currency: z.string().nullable().describe('The currency of every cost and saved; null while no request had a price.'),
  reference: z.string().nullable().describe('What saved is measured against (prices.reference.name), or null.'),
  total: counts,
  providers: z.record(z.string(), counts),
  keys: z.record(z.string(), counts).describe('By caller: lease (the lease\'s token) or the name of a key of gateway.keys.'),
  tasks: z.record(z.string(), taskUsage),
});

export type TaskState = z.input<typeof TaskStateSchema>;
export type CancelAnswer = z.input<typeof CancelAnswerSchema>;

/** ask: ends the turn with a question for the orchestrator; the loop does the waiting, this does nothing else. */
import { z } from 'zod';
import { defineTool } from './common.js';

const schema = z.object({
  question: z.string().trim().min(1).describe('The question, complete enough to answer without the conversation.'),
  options: z.array(z.string().min(1)).max(20).optional().describe('Answers to choose from, if the question has a few.'),
});

export const askTool = defineTool({
  name: 'ask',
  description: 'Ask the person who gave you the task a question and stop until they answer. Use it only when you cannot go on without a decision.',
  schema,
  async run(input) {
    const options = input.options ?? [];
    return { ok: true, output: 'The question was asked; the turn ends until it is answered.', ask: { question: input.question, options } };
  },
});

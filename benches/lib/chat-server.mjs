/**
 * A lean OpenAI-compatible chat-completions server for the executor benchmark: every request is
 * answered by `reply(body, index)` — `{text, chunks?}` or `{tool: {name, input}}` — streamed as
 * SSE chunks (a usage chunk, then `[DONE]`) or answered whole. It counts the bytes it received and
 * sent, so a benchmark can weigh what an executor exchanged with its model. Deliberately minimal
 * (the tests' scripted server, tests/helpers/model-api.ts, is the full one): its own cost must not
 * drown what is measured.
 */
import { createServer } from 'node:http';

export async function startChatServer(reply) {
  let index = 0;
  const stats = { requests: 0, bytesIn: 0, bytesOut: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      stats.requests += 1;
      stats.bytesIn += raw.length;
      if (req.method === 'GET' && req.url === '/v1/models') return send(res, 200, { object: 'list', data: [{ id: 'bench-model', object: 'model', owned_by: 'bench' }] });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(res, 404, { error: { message: `no route ${req.url}` } });
      const body = JSON.parse(raw.toString('utf8'));
      const answer = reply(body, index++);
      if (body.stream) stream(res, answer);
      else send(res, 200, whole(answer));
    });
  });
  const send = (res, status, value) => {
    const text = JSON.stringify(value);
    stats.bytesOut += Buffer.byteLength(text);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const write = (res, text) => {
    stats.bytesOut += Buffer.byteLength(text);
    res.write(text);
  };
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const stream = (res, answer) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (answer.tool) {
      write(res, chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: answer.tool.name, arguments: JSON.stringify(answer.tool.input) } }] }));
      write(res, chunk({}, 'tool_calls'));
    } else {
      const pieces = answer.chunks ?? 1;
      for (let i = 0; i < pieces; i += 1) write(res, chunk(i === 0 ? { role: 'assistant', content: answer.text } : { content: answer.text }));
      write(res, chunk({}, 'stop'));
    }
    write(res, `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'bench-model', choices: [], usage: usageOf(answer) })}\n\n`);
    write(res, 'data: [DONE]\n\n');
    res.end();
  };
  const whole = (answer) => ({
    id: 'c',
    object: 'chat.completion',
    created: 0,
    model: 'bench-model',
    choices: [{ index: 0, message: answer.tool ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: answer.tool.name, arguments: JSON.stringify(answer.tool.input) } }] } : { role: 'assistant', content: answer.text }, finish_reason: answer.tool ? 'tool_calls' : 'stop' }],
    usage: usageOf(answer),
  });
  const usageOf = (answer) => ({ prompt_tokens: answer.promptTokens ?? 10, completion_tokens: answer.completionTokens ?? 5, total_tokens: (answer.promptTokens ?? 10) + (answer.completionTokens ?? 5) });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stats,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

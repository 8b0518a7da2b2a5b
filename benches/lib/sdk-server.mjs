/**
 * The reference: the MCP SDK's own Streamable HTTP server, as its documentation sets it up —
 * node:http, one WebStandardStreamableHTTPServerTransport + McpServer per session,
 * `enableJsonResponse: true` — registering the tools the HTTP bench calls (`majordomus_capability`,
 * `majordomus_get`, `majordomus_list`, `majordomus_search`) with zod input schemas like ours, so the
 * SDK validates every call's input as it does. Each tool answers from a table: argv[2] is the path
 * of a JSON file `{answers: {"<tool> <canonical JSON of the arguments>": structuredContent}}`,
 * what our server answered for each call the bench makes (fetched from it first). A call it has
 * no answer for is answered `isError` (the bench counts that as a bad body).
 * Listens on 127.0.0.1:0; logs "sdk-server: listening PORT" on stderr; stdin EOF closes it.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { answerKey } from './canonical-json.mjs';

const { answers } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const transports = new Map();

const OBJECT_KINDS = ['rule', 'skill', 'prompt', 'workflow', 'adr', 'document', 'profile', 'policy'];
const TOOLS = {
  majordomus_capability: { id: z.string().min(1).max(200) },
  majordomus_get: { uri: z.string().max(2048).regex(/^majordomus:\/\//, 'must start with majordomus://') },
  majordomus_list: { kind: z.enum(OBJECT_KINDS).optional(), tag: z.string().min(1).max(200).optional() },
  majordomus_search: {
    query: z.string().max(1000).refine((q) => q.trim().length > 0, 'a blank query is refused'),
    kind: z.enum(OBJECT_KINDS).optional(),
    limit: z.number().int().min(1).max(200).default(20),
  },
};

function newServer() {
  const server = new McpServer({ name: 'sdk-reference', version: '0.0.0' });
  for (const [name, inputSchema] of Object.entries(TOOLS)) {
    server.registerTool(name, { description: name, inputSchema }, async (args) => {
      const key = answerKey(name, args);
      const output = answers[key];
      if (output === undefined) return { content: [{ type: 'text', text: `not_found: no answer for ${key}` }], isError: true };
      return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
    });
  }
  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function send(res, response) {
  const headers = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 204 && response.status !== 202) headers['content-length'] = String(body.byteLength);
  res.writeHead(response.status, headers);
  res.end(body);
}

function reply(res, status, object) {
  const body = JSON.stringify(object);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const http = createServer(async (req, res) => {
  try {
    const raw = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
    const parsed = raw.byteLength > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(parsed)) {
        reply(res, sessionId === undefined ? 400 : 404, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'no valid session' } });
        return;
      }
      transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await newServer().connect(transport);
    }
    const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : v === undefined ? [] : [[k, v]])),
      body: raw.byteLength > 0 ? raw : undefined,
    });
    await send(res, await transport.handleRequest(request, { parsedBody: parsed }));
  } catch (error) {
    if (!res.headersSent) reply(res, 500, { error: String(error) });
  }
});
http.keepAliveTimeout = 60_000;
http.listen(0, '127.0.0.1', () => process.stderr.write(`sdk-server: listening ${http.address().port}\n`));
process.stdin.on('end', () => {
  http.closeAllConnections?.();
  http.close(() => process.exit(0));
});
process.stdin.resume();

/**
 * The ceiling: a raw uWebSockets.js hello world (the same uWS package the product uses), in its
 * own process, on 127.0.0.1 with an exclusive port (no SO_REUSEPORT sharing). It answers a small
 * JSON body with Content-Length, like the product does. Logs "uws-hello: listening PORT" on
 * stderr; stdin EOF closes it. argv[2], when given, is the nice value it takes (the benchmark
 * gives it the nice of majordomus's HTTP thread).
 */
import { setPriority } from 'node:os';
import uWS from '@based/uws';

if (process.argv[2]) setPriority(0, Number(process.argv[2]));

const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;
const body = JSON.stringify({ hello: 'world' });
let listenSocket = null;
const app = uWS.App().any('/*', (res) => {
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'application/json');
    res.end(body);
  });
});
app.listen('127.0.0.1', 0, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
  if (!socket) {
    process.stderr.write('uws-hello: cannot listen\n');
    process.exit(1);
  }
  listenSocket = socket;
  process.stderr.write(`uws-hello: listening ${uWS.us_socket_local_port(socket)}\n`);
});
process.stdin.on('end', () => {
  if (listenSocket) uWS.us_listen_socket_close(listenSocket);
  app.close?.();
  process.exit(0);
});
process.stdin.resume();

// comlink ships its Node adapter as an .mjs file without a matching .d.mts; this declares it.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  export default function nodeEndpoint(endpoint: unknown): Endpoint;
}

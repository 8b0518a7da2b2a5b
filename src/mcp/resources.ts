/**
 * The resources of a session: the layer's objects (listed in pages with an opaque cursor, read as
 * they are), capabilities read at a URI or a URI template, and the client's subscriptions — to
 * objects, told when a new generation of the layer changed one, and to what a capability reads
 * (a session, a turn), told when its host says it changed (a turn started or ended).
 */
import { RPC } from '../platform/jsonrpc.js';
import type { McpBackend } from './backend.js';
import { resourceOf, type McpResource } from './projection.js';
import { isObject, requiredString, RequestError, type Params } from './request.js';

const RESOURCE_PAGE = 500;

/** Sends a notification on the session's own stream (false when nobody hears it). */
export type StreamSend = (method: string, params?: Record<string, unknown>) => boolean;

/**
 * A capability read as a resource answers `{text, mimeType}` (its content as it is) or any other
 * JSON (served as application/json).
 */
function resourceContent(uri: string, value: unknown, json: string): { uri: string; mimeType: string; text: string } {
  if (isObject(value) && typeof value.text === 'string' && typeof value.mimeType === 'string' && Object.keys(value).length === 2) {
    return { uri, mimeType: value.mimeType, text: value.text };
  }
  return { uri, mimeType: 'application/json', text: json };
}

export class SessionResources {
  readonly #backend: McpBackend;
  /** URIs of layer objects the client subscribed to (`resources/subscribe`). */
  readonly #subscriptions = new Set<string>();

  constructor(backend: McpBackend) {
    this.#backend = backend;
  }

  list(params: Params): unknown {
    const objects = this.#backend.objects();
    let offset = 0;
    if (params.cursor !== undefined) {
      offset = typeof params.cursor === 'string' ? Number.parseInt(Buffer.from(params.cursor, 'base64url').toString(), 10) : Number.NaN;
      if (!Number.isInteger(offset) || offset < 0 || offset > objects.length) {
        throw new RequestError(RPC.invalidParams, 'Invalid params: unknown cursor');
      }
    }
    const page = objects.slice(offset, offset + RESOURCE_PAGE);
    const resources: Array<McpResource | Omit<McpResource, 'size'>> = page.map(resourceOf);
    // Capabilities read at a fixed URI (the sessions index) head the first page.
    if (offset === 0) {
      for (const route of this.#backend.tools.resources) {
        if (!route.templated) resources.unshift({ uri: route.uriTemplate, name: route.capabilityId, title: route.title, description: route.description, mimeType: 'application/json' });
      }
    }
    const next = offset + RESOURCE_PAGE;
    return next < objects.length ? { resources, nextCursor: Buffer.from(String(next)).toString('base64url') } : { resources };
  }

  templates(): unknown {
    return {
      resourceTemplates: this.#backend.tools.resources
        .filter((route) => route.templated)
        .map((route) => ({ uriTemplate: route.uriTemplate, name: route.capabilityId, title: route.title, description: route.description })),
    };
  }

  /** A layer object as it is, else the first capability whose URI (template) matches, run for `caller`. */
  async read(params: Params, caller: string | null): Promise<unknown> {
    const uri = requiredString(params, 'uri', 'resources/read');
    const object = this.#backend.object(uri);
    if (object) return { contents: [{ uri: object.uri, mimeType: object.media_type, text: object.content }] };
    for (const route of this.#backend.tools.resources) {
      const input = route.match(uri);
      if (input === null) continue;
      const outcome = await this.#backend.invoke(route.capabilityId, input, caller);
      if (!outcome.ok) {
        const code = outcome.code === 'internal' || outcome.code === 'busy' ? RPC.internalError : RPC.resourceNotFound;
        throw new RequestError(code, `${uri}: ${outcome.message}`);
      }
      return { contents: [resourceContent(uri, JSON.parse(outcome.json) as unknown, outcome.json)] };
    }
    throw new RequestError(RPC.resourceNotFound, `Resource not found: ${uri}`);
  }

  /**
   * A layer object, or a resource a capability reads that can be read now (a session that exists,
   * a turn it reached): subscribing to what is not there would never be told anything.
   */
  async subscribe(params: Params, caller: string | null): Promise<unknown> {
    const uri = requiredString(params, 'uri', 'resources/subscribe');
    if (this.#backend.object(uri) === undefined) {
      const route = this.#backend.tools.resources.find((candidate) => candidate.match(uri) !== null);
      if (route === undefined) {
        throw new RequestError(RPC.resourceNotFound, `Resource not found: ${uri} (the layer's objects, resources/list, and the sessions' resources, resources/templates/list, can be subscribed to)`);
      }
      const outcome = await this.#backend.invoke(route.capabilityId, route.match(uri), caller);
      if (!outcome.ok) throw new RequestError(outcome.code === 'internal' || outcome.code === 'busy' ? RPC.internalError : RPC.resourceNotFound, `${uri}: ${outcome.message}`);
    }
    this.#subscriptions.add(uri);
    return {};
  }

  /** What a capability reads changed at these URIs: the client hears each it subscribed to. */
  updated(uris: readonly string[], send: StreamSend): void {
    if (this.#subscriptions.size === 0) return;
    for (const uri of uris) if (this.#subscriptions.has(uri)) send('notifications/resources/updated', { uri });
  }

  /** Unsubscribing from a URI this session never subscribed to changes nothing. */
  unsubscribe(params: Params): unknown {
    this.#subscriptions.delete(requiredString(params, 'uri', 'resources/unsubscribe'));
    return {};
  }

  /**
   * A new generation serves, `changed` naming the objects that appeared, vanished or changed: the
   * client hears `notifications/resources/list_changed` when any did, and
   * `notifications/resources/updated` for each of them it subscribed to.
   */
  layerChanged(changed: readonly string[], send: StreamSend): void {
    if (changed.length === 0) return;
    send('notifications/resources/list_changed');
    if (this.#subscriptions.size === 0) return;
    for (const uri of changed) if (this.#subscriptions.has(uri)) send('notifications/resources/updated', { uri });
  }
}

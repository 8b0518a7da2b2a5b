/**
 * The live page as the HTTP thread serves it (docs/PAGE.md): its files, its feed over the `/live`
 * WebSocket (src/page/feed.ts) built from the parts the main and the harness thread answer, and the
 * harness's news of what changed — one subscription for the thread's life, ended when either
 * thread stops.
 */
import type { HostGuard } from '../platform/access.js';
import { errorMessage } from '../platform/errors.js';
import { errorReply } from '../platform/http-exchange.js';
import { log } from '../platform/log.js';
import type { RpcClient } from '../platform/rpc.js';
import { loadPageAssets, type PageAssets } from '../page/assets.js';
import { LiveFeed, MAX_FRAME_BYTES, type FeedPart, type PageServerState } from '../page/feed.js';
import { CHANGE_STREAM, type HarnessControl } from '../threads/harness.js';
import type { HostControl } from '../threads/http.js';
import { LIVE_PATH } from './router.js';
import type { LiveRoute } from './server-contract.js';

export interface LivePageOptions {
  /** The lease's token, which a page's hello must carry. */
  token: string;
  /** The HTTP thread's own part of the page, read at each build. */
  server(): PageServerState;
  host: RpcClient<HostControl>;
  harness: RpcClient<HarnessControl> | null;
  /** The Host/Origin guard of the bound port, read at each upgrade (the port is known late). */
  guard(): HostGuard;
}

/** The page's files; a package without them still serves everything else (`GET /` answers JSON). */
function pageAssets(): PageAssets | undefined {
  try {
    return loadPageAssets();
  } catch (error) {
    log.warn(`the live page is unavailable: ${errorMessage(error)}`);
    return undefined;
  }
}

export class LivePage {
  /** What the router serves under `GET /` and `/page/`, when the package has it. */
  readonly assets: PageAssets | undefined = pageAssets();
  /** The `/live` WebSocket route the HTTP engine opens. */
  readonly route: LiveRoute;
  readonly #feed: LiveFeed;
  readonly #harnessChanges = new AbortController();

  constructor(options: LivePageOptions) {
    const { host, harness } = options;
    const feed = new LiveFeed({
      token: options.token,
      server: options.server,
      host: () => host.pageState(),
      harness: harness === null ? null : () => harness.pageState(),
    });
    this.#feed = feed;
    this.route = {
      path: LIVE_PATH,
      maxFrameBytes: MAX_FRAME_BYTES,
      refusal: (hostHeader, origin) => {
        const refused = options.guard().refusal(hostHeader, origin);
        if (refused !== null) return errorReply('forbidden', refused);
        return feed.full ? errorReply('busy', 'too many live pages are open; close one') : null;
      },
      open: (socket) => feed.open(socket),
    };
    // The harness tells of each change the page shows (a transcript grew, a turn ended).
    harness
      ?.callWith('changes', [], {
        onEvent: (stream) => {
          if (stream === CHANGE_STREAM) feed.changed('harness');
        },
        signal: this.#harnessChanges.signal,
        timeoutMs: Number.POSITIVE_INFINITY,
      })
      .catch(() => undefined);
  }

  /** Something the page shows changed: open pages get that part again. */
  changed(part: FeedPart): void {
    this.#feed.changed(part);
  }

  /** Ends the harness subscription and closes every page (the server is stopping). */
  close(): void {
    this.#harnessChanges.abort();
    this.#feed.close();
  }
}

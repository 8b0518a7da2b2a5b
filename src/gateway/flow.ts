/**
 * One chat request on its way along its chain, as each job of the gateway sees it: the failover
 * walk adds what it gave up on, an attempt marks what it tried, and whichever job ends the request
 * reports its one usage record (usage.ts).
 */
import type { HttpRequest } from '../platform/http-exchange.js';
import type { ChainEntry, GatewayConfig } from './config.js';
import type { Front } from './front.js';
import type { ChatIntake } from './intake.js';
import type { Caller } from './keys.js';
import type { ProviderStates } from './provider-states.js';
import type { Failover, RouteSoFar } from './route-header.js';
import type { UsageReport } from './usage.js';

/** What every request of one gateway shares. */
export interface GatewayContext {
  readonly providers: ProviderStates;
  readonly report: UsageReport;
}

export interface Flow extends RouteSoFar {
  readonly context: GatewayContext;
  readonly request: HttpRequest;
  readonly config: GatewayConfig;
  /** The client's wire: how the gateway's errors are worded and the answers translated. */
  readonly front: Front;
  /** Who sent it (its usage is counted under the caller's name). */
  readonly caller: Caller;
  readonly chat: ChatIntake;
  readonly failovers: Failover[];
  /** The entry tried last (the route header's provider and model). */
  last: ChainEntry | null;
  /** Whether any attempt reached a provider (then a usage record is reported). */
  sent: boolean;
}

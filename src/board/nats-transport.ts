/**
 * The board federated through NATS JetStream, an existing broker run by the team (docs/SCALE.md).
 * Per repository, on the broker:
 *
 * - the stream `majordomus_<repo>` with the subjects `majordomus.<repo>.claims` (the claims
 *   ledger: a grant is published with the expected last subject sequence, so the broker refuses it
 *   when another checkout published first) and `majordomus.<repo>.messages`;
 * - the key-value bucket `majordomus_<repo>_presence`, one key per checkout, whose age is the TTL.
 *
 * The claims ledger is read by an ordered consumer from its start at every (re)connection; the
 * messages by a durable consumer per checkout (what arrived while it was away comes when it is
 * back); presence by a KV watch. All pushed, never polled. Times that decide anything are the
 * broker's: `now()` is this machine's clock corrected by the offset the broker's stamps on this
 * checkout's own presence show.
 *
 * The broker sees the repository's id, the checkouts' ids, labels, branches and host names, the
 * peers' client names, claims (paths, intents) and message texts; never the lease's token, the
 * checkout's path or the layer.
 */
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { log } from '../platform/log.js';
import type { BoardTransport, LedgerEntry, PresenceRecord, TransportAppend, TransportSink } from './contract.js';

export interface NatsTransportOptions {
  /** The broker, as `nats://host:port`. */
  url: string;
  /** The repository's name on the broker (its root commit, or the manifest's). */
  repository: string;
  /** This checkout's id. */
  self: string;
  /** The presence bucket's age limit (the TTL of a checkout that stops refreshing it). */
  presenceTtlMs: number;
  /** Added to this machine's clock (a test's simulated skew). */
  clockSkewMs?: number;
}

/** How long a publish waits for the broker's answer before the broker counts as out of reach. */
const PUBLISH_TIMEOUT_MS = 2_000;
/** Between two attempts to reach a broker that is down. */
const RETRY_MS = 1_000;
/** The ledger keeps this long: past every claim's longest TTL (24 h). */
const LEDGER_MAX_AGE_MS = 48 * 3600_000;
/** A checkout's durable consumer of messages goes when it has not been used this long. */
const CONSUMER_INACTIVE_MS = 7 * 24 * 3600_000;
const NS = 1_000_000;

/** The broker's refusal of an append that expected an older last sequence (10071), and the sequence it has. */
function wrongLastSequence(error: unknown): number | null {
  if (!(error instanceof JetStreamApiError) || error.code !== 10071) return null;
  const found = /(\d+)\s*$/.exec(error.message);
  return found ? Number(found[1]) : 0;
}

interface Live {
  nc: NatsConnection;
  js: JetStreamClient;
  kv: KV;
  stops: Array<() => void>;
}

export class NatsTransport implements BoardTransport {
  readonly kind = 'federation' as const;
  readonly where: string;
  readonly #options: NatsTransportOptions;
  readonly #stream: string;
  readonly #claimsSubject: string;
  readonly #messagesSubject: string;
  readonly #bucket: string;
  #sink: TransportSink | null = null;
  #live: Live | null = null;
  /** Broker time minus this machine's (skewed) time, from the stamps on our own presence. */
  #offset = 0;
  /** When this checkout last published its presence, on its own clock (heartbeats are seconds apart). */
  #sentAt: number | null = null;
  /** The claims ledger's last sequence this side knows exists, and the one delivered. */
  #known = 0;
  #delivered = 0;
  #waiters: Array<() => void> = [];
  #closed = false;
  #running: Promise<void> | null = null;
  /** The connection of the moment, up or reconnecting: `close` ends it, which ends `#run`'s wait on it. */
  #connection: NatsConnection | null = null;
  /** Counts set-ups (and disconnects): a set-up finishes only if nothing newer began meanwhile. */
  #setUps = 0;
  #warnedSetUp = false;
  /** Called when the broker's stamp on our own presence came back (the clock is known). */
  #onClock: (() => void) | null = null;

  constructor(options: NatsTransportOptions) {
    this.#options = options;
    const repo = options.repository;
    this.where = `${options.url} (repository ${repo})`;
    this.#stream = `majordomus_${repo}`;
    this.#claimsSubject = `majordomus.${repo}.claims`;
    this.#messagesSubject = `majordomus.${repo}.messages`;
    this.#bucket = `majordomus_${repo}_presence`;
  }

  now(): number {
    return Date.now() + (this.#options.clockSkewMs ?? 0) + this.#offset;
  }

  async start(sink: TransportSink): Promise<void> {
    this.#sink = sink;
    sink.reachable(false);
    // Never waits for the broker: this checkout serves at once, and joins when the broker answers.
    this.#running = this.#run();
  }

  catchUp(): Promise<void> {
    if (this.#delivered >= this.#known || !this.#live) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async appendClaim(entry: LedgerEntry, expected: number): Promise<TransportAppend> {
    const live = this.#live;
    if (!live) return 'unreachable';
    const id = entry.event.event === 'claim' ? entry.event.claim.id : '';
    try {
      const ack = await live.js.publish(this.#claimsSubject, JSON.stringify(entry), {
        expect: { lastSubjectSequence: expected },
        // A grant re-sent after a lost answer is the broker's duplicate, not a second grant.
        msgID: `${entry.origin}.${id}`,
        timeout: PUBLISH_TIMEOUT_MS,
      });
      this.#know(ack.seq);
      return 'granted';
    } catch (error) {
      const last = wrongLastSequence(error);
      if (last === null) return 'unreachable';
      this.#know(last);
      return 'conflict';
    }
  }

  async publish(entry: LedgerEntry): Promise<boolean> {
    const live = this.#live;
    if (!live) return false;
    const subject = entry.event.event === 'message' ? this.#messagesSubject : this.#claimsSubject;
    try {
      const ack = await live.js.publish(subject, JSON.stringify(entry), { timeout: PUBLISH_TIMEOUT_MS });
      if (subject === this.#claimsSubject) this.#know(ack.seq);
      return true;
    } catch {
      return false;
    }
  }

  async putPresence(record: PresenceRecord): Promise<void> {
    const live = this.#live;
    if (!live) return;
    this.#sentAt = Date.now() + (this.#options.clockSkewMs ?? 0);
    await live.kv.put(this.#options.self, JSON.stringify(record));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const live = this.#live;
    this.#live = null;
    if (live) {
      // The others see this checkout leave now, not when its presence ages out.
      await live.kv.delete(this.#options.self).catch(() => undefined);
      for (const stop of live.stops) stop();
      await live.nc.close().catch(() => undefined);
    }
    // With the broker gone the client reconnects for ever and its status stream stays silent:
    // closing it is what lets the server end when its clients do.
    await this.#connection?.close().catch(() => undefined);
    this.#release();
    await this.#running?.catch(() => undefined);
  }

  /** Connects, serves until the connection closes, and again, until `close`. */
  async #run(): Promise<void> {
    while (!this.#closed) {
      let nc: NatsConnection | null = null;
      try {
        nc = await connect({
          servers: this.#options.url,
          name: `majordomus ${this.#options.self}`,
          reconnect: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: RETRY_MS,
          timeout: PUBLISH_TIMEOUT_MS,
          pingInterval: 5_000,
          maxPingOut: 2,
        });
        this.#connection = nc;
        if (this.#closed) break; // closed while connecting: the finally below ends it
        await this.#serve(nc);
      } catch (error) {
        log.debug(`federation: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        this.#connection = null;
        await nc?.close().catch(() => undefined);
      }
      this.#down();
      if (!this.#closed) await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
    }
  }

  /** Sets up on a fresh connection, follows its status (down on a disconnect, set up again on a reconnect) until it closes. */
  async #serve(nc: NatsConnection): Promise<void> {
    void this.#setUpUntilDone(nc, ++this.#setUps);
    for await (const status of nc.status()) {
      if (this.#closed) break;
      if (status.type === 'disconnect') {
        this.#setUps += 1; // a set-up under way is for a connection that is gone
        this.#down();
      }
      if (status.type === 'reconnect') void this.#setUpUntilDone(nc, ++this.#setUps);
    }
    await nc.closed();
  }

  /**
   * Sets up again until it works (a broker just restarted may answer before its JetStream is
   * ready), unless a newer connection's set-up took over.
   */
  async #setUpUntilDone(nc: NatsConnection, attempt: number): Promise<void> {
    while (!this.#closed && !nc.isClosed() && attempt === this.#setUps) {
      try {
        await this.#setUp(nc, attempt);
        return;
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        // Said once until it works (a broker without JetStream, a bucket it refuses): not every second.
        if (!this.#warnedSetUp) log.warn(`federation: ${this.#options.url} answers but the board cannot be set up there (${why}); trying again every second`);
        else log.debug(`federation: set-up failed, trying again: ${why}`);
        this.#warnedSetUp = true;
        this.#down();
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      }
    }
  }

  async #setUp(nc: NatsConnection, attempt: number): Promise<void> {
    this.#down();
    const jsm = await jetstreamManager(nc, { timeout: PUBLISH_TIMEOUT_MS });
    await this.#ensureStream(jsm);
    const durable = `msg_${this.#options.self}`;
    await jsm.consumers
      .add(this.#stream, {
        durable_name: durable,
        filter_subject: this.#messagesSubject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.New,
        inactive_threshold: CONSUMER_INACTIVE_MS * NS,
      })
      .catch((error) => log.debug(`federation: messages consumer: ${String(error)}`));
    const kv = await new Kvm(nc).create(this.#bucket, { ttl: this.#options.presenceTtlMs, history: 1 });
    const js = jetstream(nc, { timeout: PUBLISH_TIMEOUT_MS });
    const live: Live = { nc, js, kv, stops: [] };
    try {
      await this.#followPresence(live);
      // The broker's clock first: nothing is decided here before this checkout knows it.
      await this.#syncClock(kv);
      this.#sink?.claimsReset();
      this.#known = await jsm.streams
        .getMessage(this.#stream, { last_by_subj: this.#claimsSubject })
        .then((m) => m?.seq ?? 0)
        .catch(() => 0);
      this.#delivered = 0;
      await this.#followClaims(live);
      await this.#followMessages(live, durable);
    } catch (error) {
      for (const stop of live.stops) stop();
      throw error;
    }
    if (attempt !== this.#setUps || this.#closed) {
      for (const stop of live.stops) stop(); // the connection went away while this set-up ran
      return;
    }
    this.#live = live;
    this.#warnedSetUp = false;
    log.info(`federation: connected to ${this.#options.url}`);
    this.#sink?.reachable(true);
  }

  /** Publishes this checkout's presence and waits (bounded) for the broker's stamp on it to come back. */
  async #syncClock(kv: KV): Promise<void> {
    const record = this.#sink?.ownPresence();
    if (!record) return;
    const synced = new Promise<void>((resolve) => {
      this.#onClock = resolve;
      setTimeout(resolve, PUBLISH_TIMEOUT_MS).unref();
    });
    this.#sentAt = Date.now() + (this.#options.clockSkewMs ?? 0);
    await kv.put(this.#options.self, JSON.stringify(record));
    await synced;
    this.#onClock = null;
  }

  async #ensureStream(jsm: JetStreamManager): Promise<void> {
    const config = {
      name: this.#stream,
      subjects: [this.#claimsSubject, this.#messagesSubject],
      max_age: LEDGER_MAX_AGE_MS * NS,
      duplicate_window: 120_000 * NS,
    };
    await jsm.streams.add(config).catch(async (error) => {
      // It exists already (another checkout made it): use it as it is.
      await jsm.streams.info(this.#stream).catch(() => {
        throw error;
      });
    });
  }

  async #followClaims(live: Live): Promise<void> {
    const consumer = await live.js.consumers.get(this.#stream, { filter_subjects: this.#claimsSubject });
    const messages = await consumer.consume();
    live.stops.push(() => void messages.stop());
    void (async () => {
      for await (const m of messages) {
        let entry: LedgerEntry | null = null;
        try {
          entry = m.json<LedgerEntry>();
        } catch {
          entry = null;
        }
        this.#delivered = Math.max(this.#delivered, m.seq);
        this.#know(m.seq);
        this.#sink?.claimRecord(m.seq, entry && entry.v === 1 ? entry : null);
        this.#release();
      }
    })().catch((error) => log.debug(`federation: claims consumer ended: ${String(error)}`));
  }

  async #followMessages(live: Live, durable: string): Promise<void> {
    const consumer = await live.js.consumers.get(this.#stream, durable);
    const messages = await consumer.consume();
    live.stops.push(() => void messages.stop());
    void (async () => {
      for await (const m of messages) {
        try {
          const entry = m.json<LedgerEntry>();
          if (entry && entry.v === 1) this.#sink?.message(entry);
        } catch {
          // not ours to read: acknowledged so that it is not delivered again
        }
        m.ack();
      }
    })().catch((error) => log.debug(`federation: messages consumer ended: ${String(error)}`));
  }

  async #followPresence(live: Live): Promise<void> {
    const watch = await live.kv.watch();
    live.stops.push(() => watch.stop());
    void (async () => {
      for await (const entry of watch) {
        const seenAt = entry.created.getTime();
        if (entry.key === this.#options.self) {
          // Our own entry from before this watch started says nothing of the clock now.
          if (!entry.isUpdate) continue;
          // Our own heartbeat came back stamped by the broker: the clock offset, within half a round trip.
          const sentAt = this.#sentAt;
          this.#sentAt = null;
          if (sentAt !== null) {
            const local = Date.now() + (this.#options.clockSkewMs ?? 0);
            this.#offset = seenAt - (sentAt + local) / 2;
            this.#onClock?.();
          }
          continue;
        }
        if (entry.operation !== 'PUT') {
          this.#sink?.presence(entry.key, null, seenAt);
          continue;
        }
        try {
          const record = entry.json<PresenceRecord>();
          if (record && record.v === 1 && record.checkout === entry.key && Array.isArray(record.peers)) this.#sink?.presence(entry.key, record, seenAt);
        } catch {
          // a value that is not a presence record is ignored
        }
      }
    })().catch((error) => log.debug(`federation: presence watch ended: ${String(error)}`));
  }

  #know(seq: number): void {
    this.#known = Math.max(this.#known, seq);
  }

  #release(): void {
    if (this.#live && this.#delivered < this.#known) return;
    for (const resolve of this.#waiters.splice(0)) resolve();
  }

  #down(): void {
    const live = this.#live;
    this.#live = null;
    if (live) for (const stop of live.stops) stop();
    this.#release();
    if (!this.#closed) this.#sink?.reachable(false);
  }
}

import type pg from 'pg';
import { quoteIdent } from './connection.js';

/** Called with each notification's payload ('' when none). */
export type NotifyHandler = (payload: string) => void;

export interface Listener {
  /**
   * Calls `onNotify` for every notification on `channel` until the returned function is called. Resolves
   * once the server is listening, so a notification sent after that is not missed. If the listening
   * connection drops, it is re-established and every handler is called once with '' (what was sent
   * meanwhile is lost, so a worker should look for work then). Wake-ups only: workers still poll.
   */
  listen(channel: string, onNotify: NotifyHandler): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const MIN_RETRY_MS = 250;
const MAX_RETRY_MS = 30_000;

interface Channel {
  readonly handlers: Set<NotifyHandler>;
  /** Settles once LISTEN for this channel has run on the current connection. */
  ready: Promise<void>;
}

/**
 * LISTEN on one dedicated connection (never a pooled one: a pooled client would carry the LISTEN to
 * whoever borrows it next, and the pool may close it when idle), shared by every channel of this store.
 */
export const createListener = (makeClient: () => pg.Client): Listener => {
  const channels = new Map<string, Channel>();
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let retryMs = MIN_RETRY_MS;
  let closed = false;

  const deliver = (channel: string, payload: string) => {
    for (const h of channels.get(channel)?.handlers ?? []) {
      // One failing handler must not keep the others from hearing.
      try {
        h(payload);
      } catch {
        /* the handler's own fault; nothing to do here */
      }
    }
  };

  const lost = (c: pg.Client) => {
    if (c !== client) return;
    client = null;
    if (!closed && channels.size > 0) scheduleReconnect();
  };

  const connect = (): Promise<pg.Client> => {
    if (client !== null) return Promise.resolve(client);
    connecting ??= (async () => {
      const c = makeClient();
      c.on('notification', (m) => deliver(m.channel, m.payload ?? ''));
      c.on('error', () => lost(c));
      c.on('end', () => lost(c));
      try {
        await c.connect();
        for (const name of channels.keys()) await c.query(`LISTEN ${quoteIdent(name)}`);
      } catch (e) {
        c.end().catch(() => undefined);
        throw e;
      }
      if (closed) {
        await c.end().catch(() => undefined);
        throw new Error('The listener was closed.');
      }
      client = c;
      retryMs = MIN_RETRY_MS;
      return c;
    })().finally(() => {
      connecting = null;
    });
    return connecting;
  };

  const scheduleReconnect = () => {
    if (retryTimer !== null || closed) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connect().then(
        () => {
          for (const name of channels.keys()) deliver(name, '');
        },
        () => {
          retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
          scheduleReconnect();
        },
      );
    }, retryMs);
    // A listener alone must not keep a process alive.
    retryTimer.unref();
  };

  const listenOn = async (name: string): Promise<void> => {
    const c = await connect();
    await c.query(`LISTEN ${quoteIdent(name)}`);
  };

  return {
    listen: async (channel, onNotify) => {
      if (closed) throw new Error('The listener was closed.');
      if (channel === '' || Buffer.byteLength(channel) > 63) throw new RangeError(`not a PostgreSQL channel name: ${JSON.stringify(channel)}`);
      // A registration of its own, so the same function listening twice is removed once per stop.
      const handler: NotifyHandler = (payload) => onNotify(payload);
      let ch = channels.get(channel);
      if (ch === undefined) {
        const created: Channel = { handlers: new Set(), ready: Promise.resolve() };
        created.ready = listenOn(channel);
        channels.set(channel, (ch = created));
      }
      ch.handlers.add(handler);
      try {
        await ch.ready;
      } catch (e) {
        ch.handlers.delete(handler);
        if (ch.handlers.size === 0 && channels.get(channel) === ch) channels.delete(channel);
        throw e;
      }
      let stopped = false;
      return async () => {
        if (stopped) return;
        stopped = true;
        const current = channels.get(channel);
        if (current === undefined || !current.handlers.delete(handler) || current.handlers.size > 0) return;
        channels.delete(channel);
        await client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
      };
    },

    close: async () => {
      closed = true;
      if (retryTimer !== null) clearTimeout(retryTimer);
      retryTimer = null;
      channels.clear();
      const c = client ?? (connecting === null ? null : await connecting.catch(() => null));
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
};

/** Sends a notification through `pool` (inside no transaction, so it is delivered at once). */
export const notify = async (pool: pg.Pool, channel: string, payload = ''): Promise<void> => {
  await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
};

import { createRequire } from 'node:module';
import pg from 'pg';
import type { Prepared } from './connection.js';
import { valuesOf } from './connection.js';

/**
 * Statements sent together with one Sync: the extended protocol's Parse (unless already parsed)/Bind/Execute
 * for each, then a single Sync. node-postgres ends every statement with a Sync of its own, and PostgreSQL
 * answers each Sync with a ReadyForQuery and a flush of its socket: one `send` by the backend, and one more
 * wake-up of this process, per statement. For a transaction's writes and its `COMMIT`, which nobody waits for
 * one by one (see the unit of work's deferred writes), one Sync for all is one `send` and one wake-up.
 *
 * What PostgreSQL does with a failure: it skips every message up to the Sync. So the statements before the
 * failed one ran, the failed one answers with its error, and those after it did not run at all: they are
 * `skipped`. A `COMMIT` among the skipped leaves the transaction open and aborted, for the caller to roll back.
 *
 * Only for statements whose values node-postgres encodes without fail, and whose names (if prepared) are
 * already parsed on the connection: the caller checks both (`batchable`). A named statement parsed here for
 * the first time would need its ParseComplete told apart from the others' to be recorded as parsed.
 */
export interface BatchMember {
  readonly stmt: string | Prepared;
  readonly values: readonly unknown[];
}

/**
 * How a batch ended: every member ran (`failedAt` null), or the member at `failedAt` failed with `error`.
 * `commands` has the command tag of each member that ran (its first word: INSERT, COMMIT, ROLLBACK…).
 */
export type BatchOutcome =
  | { readonly failedAt: null; readonly commands: readonly string[] }
  | { readonly failedAt: number; readonly error: unknown; readonly commands: readonly string[] };

// The driver's own value encoding (what its Query does), so a batch's values reach PostgreSQL as a query's would.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown };

interface WireConnection {
  readonly stream: { cork?: () => void; uncork?: () => void; destroy?: (error?: Error) => void };
  readonly parsedStatements: Record<string, string | undefined>;
  /** Named statements whose Parse is on its way (node-postgres's own record, which it also reads before a Parse). */
  readonly submittedNamedStatements?: Record<string, string | undefined>;
  parse(msg: { text: string; name: string }): void;
  bind(msg: { statement: string; values: unknown[] }): void;
  execute(msg: { portal: string }): void;
  sync(): void;
}

/**
 * The statements of `members` that a batch can send: unnamed ones, and named ones parsed on `client`'s connection
 * already, or whose Parse went out before (PostgreSQL reads a connection's messages in order; should one of
 * `parseOnConnect`'s fail, the connection is closed).
 */
export const batchable = (client: pg.ClientBase, members: readonly BatchMember[]): boolean => {
  const connection = (client as unknown as { connection?: Partial<WireConnection> }).connection;
  const parsed = connection?.parsedStatements;
  if (parsed === undefined) return false;
  const submitted = connection?.submittedNamedStatements ?? {};
  return members.every(({ stmt }) => typeof stmt === 'string' || parsed[stmt.name] === stmt.text || submitted[stmt.name] === stmt.text);
};

/**
 * Writes `messages` and one Sync, corked into one write to the socket. Should writing throw (not expected: values
 * are encoded beforehand), messages may be out without their Sync and nothing on the connection can be read right
 * any more: it is closed, which fails whatever waits on it, the caller too.
 */
const sendWithSync = (connection: WireConnection, messages: () => void): Error | null => {
  connection.stream.cork?.();
  try {
    messages();
    connection.sync();
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    connection.stream.destroy?.(error);
    return error;
  } finally {
    connection.stream.uncork?.();
  }
  return null;
};

/**
 * node-postgres takes, on a pipelining client, only a query that is its own Query (it refuses other submittables,
 * for their portals). A batch keeps no portal open: each Execute runs its unnamed portal to the end.
 */
const QueryBase = pg.Query as unknown as new (config: { text: string }) => { callback?: (err: unknown, outcome?: unknown) => void };

class StatementBatch extends QueryBase {
  private readonly commands: string[] = [];
  private ended = false;

  constructor(
    /** What it carries, in order (public for whoever watches the driver's queries: the adapter's tests). */
    readonly members: readonly BatchMember[],
    private readonly onEnd: (outcome: BatchOutcome) => void,
  ) {
    super({ text: 'esig statement batch' });
    // The driver wraps `callback` (its query timeout) and calls it once: with an error, or at the end.
    this.callback = (err: unknown) => this.end(err === null || err === undefined ? null : err);
  }

  private end(error: unknown) {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(error === null ? { failedAt: null, commands: this.commands } : { failedAt: this.commands.length, error, commands: this.commands });
  }

  submit(connection: WireConnection): Error | null {
    let encoded: unknown[][];
    try {
      // Encoded before anything is written: a value that cannot be encoded leaves nothing half-sent.
      encoded = this.members.map((m) => valuesOf(m.stmt, m.values).map((v) => prepareValue(v)));
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
    return sendWithSync(connection, () =>
      this.members.forEach(({ stmt }, i) => {
        const name = typeof stmt === 'string' ? '' : stmt.name;
        if (typeof stmt === 'string') connection.parse({ text: stmt, name: '' });
        connection.bind({ statement: name, values: encoded[i]! });
        connection.execute({ portal: '' });
      }),
    );
  }

  // Rows (a write's `RETURNING`, `esig_expect_rows`) are not wanted: only whether each statement ran.
  handleRowDescription() {}
  handleDataRow() {}
  handlePortalSuspended() {}
  handleEmptyQuery() {
    this.commands.push('');
  }
  handleCommandComplete(msg: { text?: string }) {
    // The tag's first word, as the driver's own results name it: `INSERT 0 1` is INSERT, a COMMIT that rolled back ROLLBACK.
    this.commands.push(/^[A-Za-z]+/.exec(msg.text ?? '')?.[0] ?? '');
  }
  handleError(err: unknown) {
    this.callback?.(err);
  }
  handleReadyForQuery() {
    this.callback?.(null);
  }
}

/** Sends `members` on `client` as one batch (see above); resolves once PostgreSQL has answered it, never rejects. */
export const sendBatch = (client: pg.ClientBase, members: readonly BatchMember[]): Promise<BatchOutcome> =>
  new Promise((resolve) => {
    void client.query(new StatementBatch(members, resolve) as unknown as pg.QueryConfig);
  });

/**
 * Parses `statements` (name, text) on a connection just opened, ahead of anything else on it: one Parse each and
 * one Sync, one round trip. Each is recorded as submitted at once, as node-postgres records its own Parses, so
 * statements and batches queued behind go out by name without a Parse of their own; and as parsed once
 * PostgreSQL has answered. Should any Parse fail (a schema older than the code: a function a statement calls is
 * missing), the connection is closed, failing what is queued on it: PostgreSQL skips the Parses after a failed
 * one, so what exists on the connection would no longer be known.
 */
export const parseOnConnect = (client: pg.ClientBase, statements: ReadonlyMap<string, string>): void => {
  if (statements.size === 0) return;
  void client.query(new ParseAll([...statements]) as unknown as pg.QueryConfig);
};

class ParseAll extends QueryBase {
  private connection: WireConnection | null = null;
  private ended = false;

  constructor(private readonly statements: ReadonlyArray<readonly [string, string]>) {
    super({ text: 'esig prepared statements' });
    this.callback = (err: unknown) => this.end(err === null || err === undefined ? null : err);
  }

  private end(error: unknown) {
    if (this.ended) return;
    this.ended = true;
    const c = this.connection;
    if (c === null) return;
    for (const [name, text] of this.statements) {
      if (c.submittedNamedStatements?.[name] === text) delete c.submittedNamedStatements[name];
      if (error === null) c.parsedStatements[name] = text;
    }
    if (error !== null) c.stream.destroy?.(error instanceof Error ? error : new Error(String(error)));
  }

  submit(connection: WireConnection): Error | null {
    this.connection = connection;
    return sendWithSync(connection, () => {
      for (const [name, text] of this.statements) {
        connection.parse({ text, name });
        if (connection.submittedNamedStatements !== undefined) connection.submittedNamedStatements[name] = text;
      }
    });
  }

  handleRowDescription() {}
  handleDataRow() {}
  handleError(err: unknown) {
    this.callback?.(err);
  }
  handleReadyForQuery() {
    this.callback?.(null);
  }
}

import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import type {
  ContentKey,
  ApiKey,
  ApiLogEntry,
  AuthorizationCode,
  OAuthClient,
  OAuthGrant,
  OAuthToken,
  DeliveryAttempt,
  Document,
  DomainEvent,
  EmbedSession,
  EvidenceEntry,
  IdempotencyClaim,
  IdempotencyRecord,
  Job,
  JobFilter,
  JobKind,
  KeysetPage,
  KeysetPosition,
  KeysetQuery,
  Org,
  QueuedJob,
  SignatureRequest,
  SigningLink,
  StoreError,
  StoredMail,
  StoreResult,
  Stores,
  Tenant,
  UnitOfWork,
  WebhookDelivery,
  WebhookEndpoint,
} from '@esig/core';
import { MAX_PURGE_BATCH, autoCommit, writingWhole, concurrentModification, isDedupeKeyPrefix, requestIdOf, storeFailure } from '@esig/core';

/** Everything the memory database holds; rows are private copies, never handed out. */
interface Tables {
  readonly orgs: Map<string, Org>;
  readonly documents: Map<string, Document>;
  /** Keyed by tenant and document id. */
  readonly contents: Map<string, Uint8Array>;
  readonly requests: Map<string, SignatureRequest>;
  readonly apiKeys: Map<string, ApiKey>;
  /** Keyed by tenant and idempotency key. */
  readonly idempotency: Map<string, IdempotencyRecord>;
  readonly events: Map<string, DomainEvent>;
  readonly jobs: Map<string, JobRow>;
  /** Keyed by token hash. */
  readonly signingLinks: Map<string, SigningLink>;
  /** Keyed by token hash. */
  readonly embedSessions: Map<string, EmbedSession>;
  readonly evidence: Map<string, EvidenceEntry>;
  readonly mail: Map<string, StoredMail>;
  readonly webhookEndpoints: Map<string, WebhookEndpoint>;
  readonly webhookDeliveries: Map<string, WebhookDelivery>;
  readonly webhookAttempts: Map<string, DeliveryAttempt>;
  readonly apiLog: Map<string, ApiLogEntry>;
  readonly oauthClients: Map<string, OAuthClient>;
  /** Keyed by code hash. */
  readonly oauthCodes: Map<string, AuthorizationCode>;
  readonly oauthGrants: Map<string, OAuthGrant>;
  /** Keyed by token hash. */
  readonly oauthTokens: Map<string, OAuthToken>;
}

/** A job with its lease and burial, which the port keeps to itself. */
type JobRow = Job & {
  readonly lockedBy: string | null;
  readonly lockedUntil: string | null;
  readonly dead: boolean;
};
type TableName = keyof Tables;
type Row<T extends TableName> = Tables[T] extends Map<string, infer V> ? V : never;

const DELETED: unique symbol = Symbol('deleted');

/**
 * What one transaction (or the committed state itself) sees: the committed tables with the transaction's
 * own writes laid over them. Writes go to the overlay only; `commit` copies them into the committed tables.
 */
class View {
  private readonly writes = new Map<TableName, Map<string, unknown>>();
  private closed = false;

  constructor(
    private readonly base: Tables,
    private readonly writable: boolean,
  ) {}

  get isOpen(): boolean {
    return !this.closed;
  }

  get<T extends TableName>(t: T, key: string): Row<T> | undefined {
    const w = this.writes.get(t);
    if (w?.has(key)) {
      const v = w.get(key);
      return v === DELETED ? undefined : (v as Row<T>);
    }
    return (this.base[t] as Map<string, Row<T>>).get(key);
  }

  rows<T extends TableName>(t: T): Row<T>[] {
    const w = this.writes.get(t);
    const out: Row<T>[] = [];
    for (const [k, v] of this.base[t] as Map<string, Row<T>>) if (!w?.has(k)) out.push(v);
    if (w) for (const v of w.values()) if (v !== DELETED) out.push(v as Row<T>);
    return out;
  }

  put<T extends TableName>(t: T, key: string, row: Row<T>): void {
    this.overlay(t).set(key, row);
  }

  remove(t: TableName, key: string): void {
    this.overlay(t).set(key, DELETED);
  }

  close(): void {
    this.closed = true;
  }

  commit(): void {
    for (const [t, w] of this.writes) {
      const table = this.base[t] as Map<string, unknown>;
      for (const [k, v] of w) {
        if (v === DELETED) table.delete(k);
        else table.set(k, v);
      }
    }
    this.writes.clear();
  }

  private overlay(t: TableName): Map<string, unknown> {
    // Top-level writes run as one-statement transactions, so the committed view itself is never written.
    if (!this.writable) throw new Error('memory stores: write through a read-only view');
    let w = this.writes.get(t);
    if (!w) {
      w = new Map();
      this.writes.set(t, w);
    }
    return w;
  }
}

const copy = <A>(a: A): A => structuredClone(a);
const copyBytes = (b: Uint8Array): Uint8Array => new Uint8Array(b);

const tenantKey = (t: Tenant, id: string) => JSON.stringify([t.orgId, t.mode, id]);
/** Whether a record is still the claim a caller holds (see `IdempotencyStore.complete`). */
const holds = (r: IdempotencyRecord, claim: IdempotencyClaim) => r.state === 'in_progress' && r.fingerprint === claim.fingerprint && r.lockedUntil === claim.lockedUntil;
/** A content key as one text, the kind kept apart from the id. */
const contentName = (k: ContentKey) => JSON.stringify(k.kind === 'upload' ? [k.kind, k.documentId] : [k.kind, k.requestId]);
const inTenant = (row: { readonly orgId: string; readonly mode: string }, t: Tenant) =>
  row.orgId === t.orgId && row.mode === t.mode;

const compareKeys = (a: KeysetPosition, b: KeysetPosition): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** Keyset pagination on (createdAt, id), as `ORDER BY created_at, id … WHERE (created_at, id) > (?, ?) LIMIT n + 1`. */
const keysetPage = <A extends KeysetPosition>(
  rows: readonly A[],
  q: KeysetQuery<unknown>,
): E.Either<StoreError, KeysetPage<A>> => {
  if (!Number.isInteger(q.limit) || q.limit < 0) return E.left(storeFailure(new RangeError(`invalid limit ${q.limit}`)));
  if (q.order !== 'asc' && q.order !== 'desc') return E.left(storeFailure(new RangeError(`invalid order ${String(q.order)}`)));
  const dir = q.order === 'asc' ? 1 : -1;
  const after = q.after;
  const rest = rows.filter((r) => after === null || dir * compareKeys(r, after) > 0).sort((a, b) => dir * compareKeys(a, b));
  return E.right({ items: rest.slice(0, q.limit).map(copy), hasMore: rest.length > q.limit });
};

/** Runs one store operation against a view; a closed view (a finished transaction) or a thrown bug is a StoreFailure. */
const op =
  <A>(view: View, f: () => E.Either<StoreError, A>): StoreResult<A> =>
  async () => {
    if (!view.isOpen) return E.left(storeFailure(new Error('memory stores: the transaction has already ended')));
    try {
      return f();
    } catch (e) {
      return E.left(storeFailure(e));
    }
  };

const ok = <A>(a: A): E.Either<StoreError, A> => E.right(a);

const toJob = ({ lockedBy: _by, lockedUntil: _until, dead: _dead, ...job }: JobRow): Job => copy(job) as Job;

/** Due jobs first by runAt, then by id, as `ORDER BY run_at, id`. */
const byRunAt = (a: Job, b: Job) => compareKeys({ createdAt: a.runAt, id: a.id }, { createdAt: b.runAt, id: b.id });

/** When a live job can next be claimed: its runAt, or the end of its lease if that is later. */
const claimableAt = (j: JobRow): string => (j.lockedUntil !== null && j.lockedUntil > j.runAt ? j.lockedUntil : j.runAt);

const toQueuedJob = (j: JobRow): QueuedJob => ({
  ...toJob(j),
  buried: j.dead,
  lease: j.lockedBy === null || j.lockedUntil === null ? null : { worker: j.lockedBy, until: j.lockedUntil },
});

const matchesFilter = (j: JobRow, f: JobFilter) =>
  (f.kinds === undefined || f.kinds.length === 0 || f.kinds.includes(j.kind)) &&
  (!f.failedOnly || j.lastError !== null) &&
  (f.requestId === undefined || requestIdOf(j) === f.requestId) &&
  (f.ids === undefined || f.ids.includes(j.id));

const isFreeAt = (j: JobRow, now: string) => !j.dead && j.runAt <= now && (j.lockedUntil === null || j.lockedUntil <= now);

const findEndpoint = (v: View, t: Tenant, id: string): WebhookEndpoint | null => {
  const e = v.get('webhookEndpoints', id);
  return e && inTenant(e, t) ? copy(e) : null;
};

const makeStores = (v: View): Stores => ({
  documents: {
    insert: (doc) =>
      op(v, () => {
        if (v.get('documents', doc.id)) return E.left(concurrentModification('document', doc.id));
        v.put('documents', doc.id, copy(doc));
        return ok(undefined);
      }),
    findById: (t, id) =>
      op(v, () => {
        const d = v.get('documents', id);
        return ok(d && inTenant(d, t) ? copy(d) : null);
      }),
    findByIds: (t, ids) =>
      op(v, () =>
        ok(
          [...new Set(ids)]
            .map((id) => v.get('documents', id))
            .filter((d): d is Document => d !== undefined && inTenant(d, t))
            .map(copy),
        ),
      ),
    list: (t, q) =>
      op(v, () =>
        keysetPage(
          v.rows('documents').filter((d) => inTenant(d, t) && (q.filter?.status === undefined || d.status === q.filter.status)),
          q,
        ),
      ),
    attachToRequest: (t, ids, requestId, limits) =>
      op(v, () => {
        const unique = [...new Set(ids)];
        // All or nothing: check every document before linking any, as one conditional UPDATE would.
        let pages = 0;
        for (const id of unique) {
          const d = v.get('documents', id);
          if (!d || !inTenant(d, t) || (d.signatureRequestId !== null && d.signatureRequestId !== requestId))
            return E.left(concurrentModification('document', id));
          pages += d.pageCount;
        }
        if (limits !== undefined && pages > limits.maxPages) return E.left(concurrentModification('document', unique.join(',')));
        for (const id of unique) v.put('documents', id, { ...v.get('documents', id)!, signatureRequestId: requestId });
        return ok(undefined);
      }),
    setStatusForRequest: (t, request, status) =>
      op(v, () => {
        for (const d of v.rows('documents'))
          if (inTenant(d, t) && d.signatureRequestId === request.id && request.documentIds.includes(d.id)) v.put('documents', d.id, { ...d, status });
        return ok(undefined);
      }),
  },

  // Writes whole: a staged handle holds its bytes until `put`.
  documentContents: writingWhole({
    put: (t, key, bytes) =>
      op(v, () => {
        v.put('contents', tenantKey(t, contentName(key)), copyBytes(bytes));
        return ok(undefined);
      }),
    get: (t, key) =>
      op(v, () => {
        const b = v.get('contents', tenantKey(t, contentName(key)));
        return ok(b === undefined ? null : copyBytes(b));
      }),
  }),

  signatureRequests: {
    insert: (req) =>
      op(v, () => {
        if (v.get('requests', req.id)) return E.left(concurrentModification('signature_request', req.id));
        v.put('requests', req.id, copy(req));
        return ok(undefined);
      }),
    findById: (t, id) =>
      op(v, () => {
        const r = v.get('requests', id);
        return ok(r && inTenant(r, t) ? copy(r) : null);
      }),
    // Memory transactions run one at a time: nothing can change the row before this one ends.
    findByIdForUpdate: (t, id) =>
      op(v, () => {
        const r = v.get('requests', id);
        return ok(r && inTenant(r, t) ? copy(r) : null);
      }),
    update: (next) =>
      op(v, () => {
        const cur = v.get('requests', next.id);
        if (!cur || !inTenant(cur, next) || cur.version !== next.version - 1)
          return E.left(concurrentModification('signature_request', next.id));
        v.put('requests', next.id, copy(next));
        return ok(undefined);
      }),
    list: (t, q) =>
      op(v, () =>
        keysetPage(
          v.rows('requests').filter((r) => inTenant(r, t) && (q.filter?.status === undefined || r.status === q.filter.status)),
          q,
        ),
      ),
  },

  apiKeys: {
    insert: (key) =>
      op(v, () => {
        if (v.get('apiKeys', key.id) || v.rows('apiKeys').some((k) => k.secretHash === key.secretHash))
          return E.left(concurrentModification('api_key', key.id));
        v.put('apiKeys', key.id, copy(key));
        return ok(undefined);
      }),
    findBySecretHash: (secretHash) =>
      op(v, () => {
        const k = v.rows('apiKeys').find((x) => x.secretHash === secretHash);
        return ok(k ? copy(k) : null);
      }),
    findById: (t, id) =>
      op(v, () => {
        const k = v.get('apiKeys', id);
        return ok(k && inTenant(k, t) ? copy(k) : null);
      }),
    list: (t, q) => op(v, () => keysetPage(v.rows('apiKeys').filter((k) => inTenant(k, t)), q)),
    revoke: (t, id, at) =>
      op(v, () => {
        const k = v.get('apiKeys', id);
        if (k && inTenant(k, t) && k.revokedAt === null) v.put('apiKeys', id, { ...k, revokedAt: at });
        return ok(undefined);
      }),
    count: () => op(v, () => ok(v.rows('apiKeys').length)),
  },

  orgs: {
    insert: (org) =>
      op(v, () => {
        if (v.get('orgs', org.id) || v.rows('orgs').some((o) => o.name === org.name))
          return E.left(concurrentModification('org', org.id));
        v.put('orgs', org.id, copy(org));
        return ok(undefined);
      }),
    findByName: (name) =>
      op(v, () => {
        const o = v.rows('orgs').find((x) => x.name === name);
        return ok(o ? copy(o) : null);
      }),
  },

  idempotency: {
    find: (t, key) =>
      op(v, () => {
        const r = v.get('idempotency', tenantKey(t, key));
        return ok(r ? copy(r) : null);
      }),
    insertIfAbsent: (record) =>
      op(v, () => {
        const k = tenantKey(record.tenant, record.key);
        if (v.get('idempotency', k)) return ok(false);
        v.put('idempotency', k, copy(record));
        return ok(true);
      }),
    insertNew: (record) =>
      op(v, () => {
        const k = tenantKey(record.tenant, record.key);
        if (v.get('idempotency', k)) return E.left(concurrentModification('idempotency_key', record.key));
        v.put('idempotency', k, copy(record));
        return ok(undefined);
      }),
    replace: (record, previous) =>
      op(v, () => {
        const k = tenantKey(record.tenant, record.key);
        const now = v.get('idempotency', k);
        const same =
          !now ||
          (now.fingerprint === previous.fingerprint &&
            now.state === previous.state &&
            now.createdAt === previous.createdAt &&
            now.lockedUntil === previous.lockedUntil &&
            now.expiresAt === previous.expiresAt);
        if (!same) return ok(false);
        v.put('idempotency', k, copy(record));
        return ok(true);
      }),
    complete: (t, key, response, claim) =>
      op(v, () => {
        const k = tenantKey(t, key);
        const r = v.get('idempotency', k);
        if (!r || !holds(r, claim)) return E.left(concurrentModification('idempotency_key', key));
        v.put('idempotency', k, { ...r, state: 'completed', response: copy(response) });
        return ok(undefined);
      }),
    release: (t, key, claim) =>
      op(v, () => {
        const k = tenantKey(t, key);
        const r = v.get('idempotency', k);
        if (r && holds(r, claim)) v.remove('idempotency', k);
        return ok(undefined);
      }),
    purgeExpired: (now, limit, from = null) =>
      op(v, () => {
        if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PURGE_BATCH) return E.left(storeFailure(new RangeError(`invalid purge limit ${limit}`)));
        if (from !== null && Number.isNaN(Date.parse(from))) return E.left(storeFailure(new RangeError(`invalid purge start ${from}`)));
        const expired = v
          .rows('idempotency')
          .filter((r) => r.expiresAt <= now && (from === null || r.expiresAt >= from))
          .sort((a, b) => (a.expiresAt < b.expiresAt ? -1 : a.expiresAt > b.expiresAt ? 1 : 0))
          .slice(0, limit);
        for (const r of expired) v.remove('idempotency', tenantKey(r.tenant, r.key));
        return ok({ deleted: expired.length, through: expired.length === 0 ? null : expired[expired.length - 1]!.expiresAt });
      }),
  },

  events: {
    append: (event) =>
      op(v, () => {
        if (v.get('events', event.id)) return E.left(concurrentModification('event', event.id));
        v.put('events', event.id, copy(event));
        return ok(undefined);
      }),
    list: (t, q) =>
      op(v, () =>
        keysetPage(
          v.rows('events').filter((e) => inTenant(e, t) && (q.filter?.type === undefined || e.type === q.filter.type)),
          q,
        ),
      ),
    findById: (t, id) =>
      op(v, () => {
        const e = v.get('events', id);
        return ok(e && inTenant(e, t) ? copy(e) : null);
      }),
  },

  jobs: {
    enqueue: (job) =>
      op(v, () => {
        if (v.get('jobs', job.id)) return E.left(concurrentModification('job', job.id));
        if (job.dedupeKey !== null && v.rows('jobs').some((j) => j.dedupeKey === job.dedupeKey)) return ok(false);
        v.put('jobs', job.id, { ...copy(job), notes: {}, attempts: 0, lastError: null, lockedBy: null, lockedUntil: null, dead: false });
        return ok(true);
      }),
    claim: (kinds, worker, now, leaseUntil, limit) =>
      op(v, () => {
        if (!Number.isInteger(limit) || limit < 1) return E.left(storeFailure(new RangeError(`invalid claim limit ${limit}`)));
        const wanted = new Set<JobKind>(kinds);
        // One synchronous step, so no other claimer can run between the choice and the lease.
        const due = v
          .rows('jobs')
          .filter((j) => wanted.has(j.kind) && isFreeAt(j, now))
          .sort(byRunAt)
          .slice(0, limit)
          .map((j): JobRow => ({ ...j, attempts: j.attempts + 1, lockedBy: worker, lockedUntil: leaseUntil }));
        for (const j of due) v.put('jobs', j.id, j);
        return ok(due.map(toJob));
      }),
    complete: (id, worker) =>
      op(v, () => {
        const j = v.get('jobs', id);
        if (!j || j.lockedBy !== worker) return E.left(concurrentModification('job', id));
        v.remove('jobs', id);
        return ok(undefined);
      }),
    extendLease: (id, worker, leaseUntil) =>
      op(v, () => {
        const j = v.get('jobs', id);
        if (!j || j.dead || j.lockedBy !== worker) return ok(false);
        v.put('jobs', id, { ...j, lockedUntil: leaseUntil });
        return ok(true);
      }),
    annotate: (id, notes) =>
      op(v, () => {
        const j = v.get('jobs', id);
        if (!j) return ok(false);
        v.put('jobs', id, { ...j, notes: { ...j.notes, ...copy(notes) } });
        return ok(true);
      }),
    retry: (id, worker, runAt, error) =>
      op(v, () => {
        const j = v.get('jobs', id);
        if (j && j.lockedBy === worker) v.put('jobs', id, { ...j, runAt, lastError: error, lockedBy: null, lockedUntil: null });
        return ok(undefined);
      }),
    bury: (id, worker, error) =>
      op(v, () => {
        const j = v.get('jobs', id);
        if (j && j.lockedBy === worker) v.put('jobs', id, { ...j, dead: true, lastError: error, lockedBy: null, lockedUntil: null });
        return ok(undefined);
      }),
    nextRunAt: (kinds) =>
      op(v, () => {
        const times = v
          .rows('jobs')
          .filter((j) => !j.dead && kinds.includes(j.kind))
          .map(claimableAt)
          .sort();
        return ok(times[0] ?? null);
      }),
    list: (filter) =>
      op(v, () => {
        if (!Number.isInteger(filter.limit) || filter.limit < 1) return E.left(storeFailure(new RangeError(`invalid list limit ${filter.limit}`)));
        return ok(
          v
            .rows('jobs')
            .filter((j) => matchesFilter(j, filter))
            .sort(byRunAt)
            .slice(0, filter.limit)
            .map(toQueuedJob),
        );
      }),
    revive: (id, now) =>
      op(v, () => {
        const j = v.get('jobs', id);
        if (!j || j.lastError === null || (j.lockedUntil !== null && j.lockedUntil > now)) return ok(false);
        v.put('jobs', id, { ...j, dead: false, attempts: 0, runAt: now, lockedBy: null, lockedUntil: null });
        return ok(true);
      }),
    cancelWaiting: (tenant, match) =>
      op(v, () => {
        if ('prefix' in match && !isDedupeKeyPrefix(match.prefix)) return E.left(storeFailure(new RangeError(`invalid dedupe key prefix ${JSON.stringify(match.prefix)}`)));
        const matches = (k: string) => ('key' in match ? k === match.key : k.startsWith(match.prefix));
        for (const j of v.rows('jobs'))
          if (j.dedupeKey !== null && matches(j.dedupeKey) && inTenant(j, tenant) && j.lockedBy === null && !j.dead) v.remove('jobs', j.id);
        return ok(undefined);
      }),
  },

  signingLinks: {
    insert: (link) =>
      op(v, () => {
        if (v.get('signingLinks', link.tokenHash)) return E.left(concurrentModification('signing_link', link.recipientId));
        v.put('signingLinks', link.tokenHash, copy(link));
        return ok(undefined);
      }),
    findByTokenHash: (tokenHash) =>
      op(v, () => {
        const l = v.get('signingLinks', tokenHash);
        return ok(l ? copy(l) : null);
      }),
  },

  embedSessions: {
    insert: (session) =>
      op(v, () => {
        const taken = v.rows('embedSessions').some((x) => x.id === session.id);
        if (taken || v.get('embedSessions', session.tokenHash)) return E.left(concurrentModification('embedded_session', session.id));
        v.put('embedSessions', session.tokenHash, copy(session));
        return ok(undefined);
      }),
    findByTokenHash: (tokenHash) =>
      op(v, () => {
        const x = v.get('embedSessions', tokenHash);
        return ok(x ? copy(x) : null);
      }),
    consume: (tokenHash, at) =>
      op(v, () => {
        const x = v.get('embedSessions', tokenHash);
        if (!x || x.usedAt !== null || x.expiresAt <= at) return ok(false);
        v.put('embedSessions', tokenHash, { ...x, usedAt: at });
        return ok(true);
      }),
  },

  evidence: {
    append: (entry) =>
      op(v, () => {
        if (v.get('evidence', entry.id)) return E.left(concurrentModification('evidence', entry.id));
        v.put('evidence', entry.id, copy(entry));
        return ok(undefined);
      }),
    listForRequest: (t, requestId) =>
      op(v, () =>
        ok(
          v
            .rows('evidence')
            .filter((e) => inTenant(e, t) && e.requestId === requestId)
            .sort((a, b) => compareKeys({ createdAt: a.at, id: a.id }, { createdAt: b.at, id: b.id }))
            .map(copy),
        ),
      ),
  },

  testMailbox: {
    insert: (mail) =>
      op(v, () => {
        if (v.get('mail', mail.id)) return E.left(concurrentModification('test_mail', mail.id));
        v.put('mail', mail.id, copy(mail));
        return ok(undefined);
      }),
    list: (t, q) =>
      op(v, () => keysetPage(v.rows('mail').filter((m) => inTenant(m, t) && (q.filter?.to === undefined || m.to === q.filter.to)), q)),
  },

  // Transactions run one at a time, so the row cannot change under a transaction that read it:
  // findByIdForUpdate needs no lock of its own.
  webhookEndpoints: {
    insert: (endpoint) =>
      op(v, () => {
        if (v.get('webhookEndpoints', endpoint.id)) return E.left(concurrentModification('webhook_endpoint', endpoint.id));
        v.put('webhookEndpoints', endpoint.id, copy(endpoint));
        return ok(undefined);
      }),
    findById: (t, id) => op(v, () => ok(findEndpoint(v, t, id))),
    findByIdForUpdate: (t, id) => op(v, () => ok(findEndpoint(v, t, id))),
    list: (t, q) => op(v, () => keysetPage(v.rows('webhookEndpoints').filter((e) => inTenant(e, t)), q)),
    clearFailures: (t, id, at) =>
      op(v, () => {
        const cur = v.get('webhookEndpoints', id);
        if (!cur || !inTenant(cur, t) || (cur.consecutiveFinalFailures === 0 && cur.failingSince === null)) return ok(undefined);
        v.put('webhookEndpoints', id, { ...copy(cur), consecutiveFinalFailures: 0, failingSince: null, updatedAt: at, version: cur.version + 1 });
        return ok(undefined);
      }),
    update: (next) =>
      op(v, () => {
        const cur = v.get('webhookEndpoints', next.id);
        if (!cur || !inTenant(cur, next) || cur.version !== next.version - 1) return E.left(concurrentModification('webhook_endpoint', next.id));
        // createdAt is the keyset position and never changes.
        v.put('webhookEndpoints', next.id, { ...copy(next), createdAt: cur.createdAt });
        return ok(undefined);
      }),
    delete: (t, id) =>
      op(v, () => {
        const e = v.get('webhookEndpoints', id);
        if (!e || !inTenant(e, t)) return ok(false);
        v.remove('webhookEndpoints', id);
        return ok(true);
      }),
    findSubscribed: (t, type) =>
      op(v, () =>
        ok(
          v
            .rows('webhookEndpoints')
            .filter((e) => inTenant(e, t) && e.enabled && e.events.includes(type))
            .sort(compareKeys)
            .map(copy),
        ),
      ),
  },

  webhookDeliveries: {
    insert: (delivery) =>
      op(v, () => {
        if (v.get('webhookDeliveries', delivery.id)) return E.left(concurrentModification('webhook_delivery', delivery.id));
        v.put('webhookDeliveries', delivery.id, copy(delivery));
        return ok(undefined);
      }),
    findById: (t, id) =>
      op(v, () => {
        const d = v.get('webhookDeliveries', id);
        return ok(d && inTenant(d, t) ? copy(d) : null);
      }),
    findWithEndpoint: (t, id) =>
      op(v, () => {
        const d = v.get('webhookDeliveries', id);
        return ok(d && inTenant(d, t) ? { delivery: copy(d), endpoint: findEndpoint(v, t, d.endpointId) } : null);
      }),
    update: (next) =>
      op(v, () => {
        const cur = v.get('webhookDeliveries', next.id);
        if (!cur || !inTenant(cur, next) || cur.version !== next.version - 1) return E.left(concurrentModification('webhook_delivery', next.id));
        // The delivery's state only: what was fixed at creation stays.
        const { status, attempts, nextAttemptAt, lastAttemptAt, lastOutcome, version } = next;
        v.put('webhookDeliveries', next.id, { ...cur, status, attempts, nextAttemptAt, lastAttemptAt, lastOutcome, version });
        return ok(undefined);
      }),
    cancelPending: (t, endpointId, at) =>
      op(v, () => {
        let n = 0;
        for (const d of v.rows('webhookDeliveries'))
          if (inTenant(d, t) && d.endpointId === endpointId && d.status === 'pending') {
            v.put('webhookDeliveries', d.id, { ...d, status: 'cancelled', nextAttemptAt: null, lastAttemptAt: d.lastAttemptAt ?? at, version: d.version + 1 });
            n++;
          }
        return ok(n);
      }),
    appendAttempt: (attempt) =>
      op(v, () => {
        if (v.get('webhookAttempts', attempt.id)) return E.left(concurrentModification('webhook_attempt', attempt.id));
        v.put('webhookAttempts', attempt.id, copy(attempt));
        return ok(undefined);
      }),
    findAttempt: (t, id) =>
      op(v, () => {
        const a = v.get('webhookAttempts', id);
        return ok(a && inTenant(a, t) ? copy(a) : null);
      }),
    listAttempts: (t, q) =>
      op(v, () =>
        keysetPage(
          v
            .rows('webhookAttempts')
            .filter(
              (a) =>
                inTenant(a, t) &&
                (q.filter?.endpointId === undefined || a.endpointId === q.filter.endpointId) &&
                (q.filter?.eventId === undefined || a.eventId === q.filter.eventId),
            ),
          q,
        ),
      ),
  },

  apiLog: {
    append: (entries) =>
      op(v, () => {
        // All or nothing: every id is checked before any entry is written.
        const ids = new Set<string>();
        for (const e of entries) {
          if (ids.has(e.id) || v.get('apiLog', e.id)) return E.left(concurrentModification('api_log_entry', e.id));
          ids.add(e.id);
        }
        for (const e of entries) v.put('apiLog', e.id, copy(e));
        return ok(undefined);
      }),
    list: (t, q) =>
      op(v, () => keysetPage(v.rows('apiLog').filter((e) => inTenant(e, t) && (q.filter?.kind === undefined || e.kind === q.filter.kind)), q)),
  },

  oauth: {
    insertClient: (c) =>
      op(v, () => {
        if (v.get('oauthClients', c.id)) return E.left(concurrentModification('oauth_client', c.id));
        v.put('oauthClients', c.id, copy(c));
        return ok(undefined);
      }),
    findClient: (id) => op(v, () => ok(copy(v.get('oauthClients', id) ?? null))),
    insertCode: (c) =>
      op(v, () => {
        if (v.get('oauthCodes', c.codeHash)) return E.left(concurrentModification('authorization_code', c.clientId));
        v.put('oauthCodes', c.codeHash, copy(c));
        return ok(undefined);
      }),
    useCode: (hash, at, grantId) =>
      op(v, () => {
        const c = v.get('oauthCodes', hash);
        if (!c) return ok(null);
        if (c.usedAt === null) v.put('oauthCodes', hash, { ...c, usedAt: at, grantId });
        return ok(copy(c));
      }),
    insertGrant: (g) =>
      op(v, () => {
        if (v.get('oauthGrants', g.id)) return E.left(concurrentModification('oauth_grant', g.id));
        v.put('oauthGrants', g.id, copy(g));
        return ok(undefined);
      }),
    findGrant: (id) => op(v, () => ok(copy(v.get('oauthGrants', id) ?? null))),
    listGrants: (t, q) => op(v, () => keysetPage(v.rows('oauthGrants').filter((g) => inTenant(g, t)), q)),
    revokeGrant: (id, at) =>
      op(v, () => {
        const g = v.get('oauthGrants', id);
        if (g && g.revokedAt === null) v.put('oauthGrants', id, { ...g, revokedAt: at });
        return ok(undefined);
      }),
    revokeGrantsOfKey: (keyId, at) =>
      op(v, () => {
        for (const g of v.rows('oauthGrants')) if (g.keyId === keyId && g.revokedAt === null) v.put('oauthGrants', g.id, { ...g, revokedAt: at });
        return ok(undefined);
      }),
    insertToken: (tok) =>
      op(v, () => {
        if (v.get('oauthTokens', tok.tokenHash)) return E.left(concurrentModification('oauth_token', tok.grantId));
        v.put('oauthTokens', tok.tokenHash, copy(tok));
        return ok(undefined);
      }),
    findToken: (hash) => op(v, () => ok(copy(v.get('oauthTokens', hash) ?? null))),
    spendToken: (hash, at) =>
      op(v, () => {
        const tok = v.get('oauthTokens', hash);
        if (!tok || tok.spentAt !== null) return ok(false);
        v.put('oauthTokens', hash, { ...tok, spentAt: at });
        return ok(true);
      }),
    purgeUnusedClients: (after, before, limit) =>
      op(v, () => {
        const named = new Set([...v.rows('oauthCodes').map((c) => c.clientId), ...v.rows('oauthGrants').map((g) => g.clientId)]);
        const unused = v
          .rows('oauthClients')
          .filter((c) => c.kind === 'registered' && (after === null || c.createdAt > after) && c.createdAt < before && !named.has(c.id))
          .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
          .slice(0, limit);
        for (const c of unused) v.remove('oauthClients', c.id);
        return ok(unused.length);
      }),
  },
});

/** A FIFO async mutex: tasks run one at a time, in the order they asked. */
const createMutex = () => {
  let tail: Promise<unknown> = Promise.resolve();
  return <A>(task: () => Promise<A>): Promise<A> => {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  };
};

export interface MemoryStores {
  /** Committed state only; each write is its own transaction (it waits for a running transaction to end). */
  readonly stores: Stores;
  /**
   * Serializable transactions: one at a time, first come first served. Work sees the committed state plus its
   * own writes; the writes become visible when work returns Right, and are dropped when it returns Left,
   * throws or rejects (a throw or rejection is a StoreFailure). Neither `uow.transaction` nor a write through
   * the top-level `stores` may be awaited from inside a transaction's work: both would wait for it forever.
   */
  readonly uow: UnitOfWork;
}

/**
 * An in-memory implementation of every store port that keeps each port's contract as a database would:
 * tenant isolation on every query, keyset pages, optimistic concurrency, unique ids, all-or-nothing
 * transactions. Values go in and come out as copies, so a caller mutating an object changes nothing stored.
 */
export const createMemoryStores = (): MemoryStores => {
  const state: Tables = {
    orgs: new Map(),
    documents: new Map(),
    contents: new Map(),
    requests: new Map(),
    apiKeys: new Map(),
    idempotency: new Map(),
    events: new Map(),
    jobs: new Map(),
    signingLinks: new Map(),
    embedSessions: new Map(),
    evidence: new Map(),
    mail: new Map(),
    webhookEndpoints: new Map(),
    webhookDeliveries: new Map(),
    webhookAttempts: new Map(),
    apiLog: new Map(),
    oauthClients: new Map(),
    oauthCodes: new Map(),
    oauthGrants: new Map(),
    oauthTokens: new Map(),
  };
  const exclusive = createMutex();

  const uow: UnitOfWork = {
    // One at a time, under `exclusive`.
    serial: true,
    transaction:
      <E2, A>(work: (tx: Stores) => TE.TaskEither<E2, A>): TE.TaskEither<E2 | StoreError, A> =>
      () =>
        exclusive(async () => {
          const view = new View(state, true);
          let result: E.Either<E2 | StoreError, A>;
          try {
            result = await work(makeStores(view))();
          } catch (e) {
            result = E.left(storeFailure(e));
          }
          view.close();
          if (E.isRight(result)) view.commit();
          return result;
        }),
  };

  // Reads see the committed state; every write runs as a one-statement transaction of its own.
  const stores: Stores = autoCommit(makeStores(new View(state, false)), uow);

  return { stores, uow };
};

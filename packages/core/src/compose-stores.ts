import { pipe } from 'fp-ts/lib/function.js';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from './task-either.js';
import type { JobKind } from './model/job.js';
import type { Stores } from './ports/stores.js';
import type { TransactionOptions, UnitOfWork } from './ports/unit-of-work.js';

/** Replacements for some store ports, each made from the stores it joins (a transaction's, or the plain ones). */
export type PortOverrides = { readonly [K in keyof Stores]?: (base: Stores) => Stores[K] };

/**
 * One set of stores from an adapter that provides them all and your own adapters for a few ports (contents
 * in an object store, say). Each override is built from the stores it sits beside: inside `uow.transaction`
 * from the transaction's stores, outside from the plain ones, so an override kept in the same database can
 * reach the same transaction through them.
 *
 * An override in another system (S3, Redis) is not part of the database's transaction: what it writes stays
 * when the transaction rolls back, and is visible before it commits. Ports whose writes are keyed puts (the
 * `DocumentContentStore`) tolerate that: a rollback leaves an unreferenced blob, never a row without bytes,
 * and a repeated put of the same key replaces it. Do not move a port whose writes must commit with others
 * (the job queue, the outbox, idempotency records) out of the database. Its transactions never defer writes
 * (`TransactionOptions.deferWrites` is dropped): an override would otherwise act on a write not yet answered.
 *
 * @example
 * const { stores, uow } = overridePorts(openSqliteStore({ path }), { documentContents: () => myS3Contents });
 */
export const overridePorts = (base: { readonly stores: Stores; readonly uow: UnitOfWork }, overrides: PortOverrides): { readonly stores: Stores; readonly uow: UnitOfWork } => {
  const apply = (s: Stores): Stores => {
    const out: Record<string, unknown> = { ...s };
    for (const [port, make] of Object.entries(overrides) as Array<[keyof Stores, (b: Stores) => unknown]>) out[port] = make(s);
    return out as unknown as Stores;
  };
  return {
    stores: apply(base.stores),
    // Without `deferWrites`: a deferred write answers before it has run, and an override in another system
    // would act on that answer (store the bytes of a document whose row will be refused, over the bytes of the
    // document that holds the id). Without `rerunnable` either: work's writes to an override are effects the
    // store cannot undo, so it must not run the work twice. `serial` is kept: it is what lets use cases do in
    // one transaction what would otherwise take two.
    uow: {
      transaction: (work, options) => base.uow.transaction((tx) => work(apply(tx)), forOverrides(options)),
      ...(base.uow.serial === undefined ? {} : { serial: base.uow.serial }),
    },
  };
};

const forOverrides = (options: TransactionOptions | undefined): TransactionOptions | undefined => {
  if (options?.deferWrites === undefined && options?.rerunnable === undefined) return options;
  const { deferWrites: _d, rerunnable: _r, ...rest } = options;
  return rest;
};

/**
 * The read-only methods of each store port. Everything else writes. Kept as a list of reads (not of writes)
 * so that a method added to a port later is treated as a write by `autoCommit` until it is listed here:
 * forgetting it costs a transaction, never atomicity.
 */
export const STORE_READS: { readonly [K in keyof Stores]: ReadonlyArray<keyof Stores[K]> } = {
  documents: ['findById', 'findByIds', 'list'],
  documentContents: ['get'],
  signatureRequests: ['findById', 'findByIdForUpdate', 'list'],
  apiKeys: ['findBySecretHash', 'findById', 'list', 'count'],
  orgs: ['findByName'],
  idempotency: ['find'],
  events: ['list', 'findById'],
  jobs: ['nextRunAt', 'list'],
  signingLinks: ['findByTokenHash'],
  embedSessions: ['findByTokenHash'],
  evidence: ['listForRequest'],
  testMailbox: ['list'],
  webhookEndpoints: ['findById', 'findByIdForUpdate', 'list', 'findSubscribed'],
  webhookDeliveries: ['findById', 'findWithEndpoint', 'findAttempt', 'listAttempts'],
  apiLog: ['list'],
  oauth: ['findClient', 'findGrant', 'listGrants', 'findToken'],
};

/** How to build each store port from a context (a connection, say), for `lazyStores`. */
export type StoreBuilders<C> = { readonly [K in keyof Stores]: (context: C) => Stores[K] };

// How Node's util.inspect finds an object's own formatting, named without importing node:util (the core is pure).
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * What a lazy set is a proxy of: the context its ports are built from and the ports built so far, in private
 * fields, so that nothing reaches them through the set (util.inspect formats a proxy's target, and the context
 * is a database connection).
 */
type AnyBuilders = Readonly<Record<string, (context: unknown) => unknown>>;

class LazyPorts {
  readonly #build: AnyBuilders;
  readonly #context: unknown;
  readonly #made = new Map<string, unknown>();

  constructor(build: AnyBuilders, context: unknown) {
    this.#build = build;
    this.#context = context;
  }

  /** The port `key` of `set`: built the first time, then the same (a port is an object, never undefined). */
  static port(set: LazyPorts, key: string): unknown {
    const made = set.#made.get(key);
    if (made !== undefined) return made;
    const port = set.#build[key]!(set.#context);
    set.#made.set(key, port);
    return port;
  }

  // Called with the proxy as `this`: its keys are the ports.
  [INSPECT](): string {
    return `Stores { ${Object.keys(this).join(', ')} }`;
  }
}

const refuse = (what: string) => (): never => {
  throw new TypeError(`A set of stores is read-only: it cannot ${what}. Spread it into a plain object ({ ...stores }) to get one that can.`);
};

// One proxy handler per builders object (a module's constant), shared by every set built from it: a set costs
// its proxy, one small object and a Map. Defining sixteen accessor properties on every set instead
// (`Object.defineProperties`, the first version) cost about 4 µs a set on this machine, against about 0.3 µs
// for this, reads included: a unit of work makes a set, or two, for every transaction.
const handlers = new WeakMap<object, ProxyHandler<LazyPorts>>();
const handlerFor = (builders: StoreBuilders<unknown>): ProxyHandler<LazyPorts> => {
  const known = handlers.get(builders);
  if (known !== undefined) return known;
  const ports = Object.keys(builders);
  const names = new Set(ports);
  const isPort = (key: string | symbol): key is string => typeof key === 'string' && names.has(key);
  // Whatever is not a port reads as on a plain object: toString, hasOwnProperty, constructor (so that String(),
  // `in` and equality checks treat a set as the plain object of ports it stands for).
  const plain = Object.prototype as unknown as Record<string | symbol, unknown>;
  const handler: ProxyHandler<LazyPorts> = {
    get: (set, key, receiver) => (isPort(key) ? LazyPorts.port(set, key) : Reflect.get(plain, key, receiver)),
    has: (_, key) => isPort(key) || key in plain,
    ownKeys: () => [...ports],
    // An accessor per port, so that listing the keys or reading a descriptor builds nothing; what reads the
    // values (a spread, Object.entries, a getter copied elsewhere) builds the port, from this set.
    getOwnPropertyDescriptor: (set, key) => (isPort(key) ? { get: () => LazyPorts.port(set, key), set: undefined, enumerable: true, configurable: true } : undefined),
    getPrototypeOf: () => Object.prototype,
    // Read-only, as a set of stores is: assigning, defining or deleting a port throws (modules are strict).
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
    setPrototypeOf: refuse('change its prototype'),
    // A proxy whose target stayed extensible cannot report itself frozen, sealed or closed to new properties.
    preventExtensions: refuse('be frozen, sealed or closed to new properties'),
  };
  handlers.set(builders, handler);
  return handler;
};

/**
 * Stores built on first use: each port the first time it is read, then kept. A store adapter binds a whole
 * set to every transaction, and most transactions use a few of the sixteen ports; building the others (each
 * a dozen closures) for nothing was a measurable share of what a small request allocates, and of what the
 * garbage collector then copies. The set acts as a plain object of its ports: they are its own, enumerable
 * keys, so spreading it or listing its keys works as usual (a spread builds every port), and other names
 * read as on any object (`toString`, `hasOwnProperty`). It is read-only, as a set of stores is: assigning a
 * port throws, and so does freezing or sealing it. To replace a port, spread the set into a new object.
 */
export const lazyStores = <C>(builders: StoreBuilders<C>, context: C): Stores =>
  new Proxy(new LazyPorts(builders as unknown as AnyBuilders, context), handlerFor(builders as StoreBuilders<unknown>)) as unknown as Stores;

/**
 * Stores for use outside transactions, made from the stores that read committed data and a unit of work:
 * reads go to `committed`, and every other method runs as a transaction of its own through `uow`, so a
 * write outside a transaction is still atomic and queued like any other. One wrapper for every port and
 * method (what is not in `STORE_READS` is a write), so a new write method cannot run outside a transaction
 * by being forgotten here.
 */
export const autoCommit = (committed: Stores, uow: UnitOfWork): Stores => {
  const out: Record<string, unknown> = {};
  for (const port of Object.keys(committed) as Array<keyof Stores>) {
    const reads = new Set<string>(STORE_READS[port] as readonly string[]);
    const base = committed[port] as unknown as Record<string, (...args: unknown[]) => unknown>;
    const wrapped: Record<string, unknown> = {};
    for (const method of Object.keys(base))
      wrapped[method] = reads.has(method)
        ? base[method]
        : (...args: unknown[]) => uow.transaction((tx) => (tx[port] as unknown as Record<string, (...a: unknown[]) => ReturnType<UnitOfWork['transaction']>>)[method]!(...args));
    out[port] = wrapped;
  }
  return out as unknown as Stores;
};

/**
 * Which jobs a committed transaction made claimable: the kinds it enqueued, or `'any'` when that is not known
 * (a revived job, a wake-up from elsewhere that names no kind). A worker is woken only for its own kinds.
 */
export type NewJobKinds = ReadonlySet<JobKind> | 'any';

/** Whether new jobs of `kinds` concern a worker that serves `served`. */
export const concerns = (kinds: NewJobKinds, served: ReadonlySet<JobKind>): boolean => {
  if (kinds === 'any') return true;
  for (const k of kinds) if (served.has(k)) return true;
  return false;
};

/**
 * What one transaction (or one group of them) made claimable, noted write by write: `note` each, then `taken`
 * once it has committed (null when it made none).
 */
/** The jobs a transaction made claimable, noted as it writes them (`createNewJobKinds`). */
export interface NewJobKindsNoted {
  note(kind: JobKind | 'any'): void;
  /** Adds what another transaction noted (a member of a group commit). */
  merge(other: NewJobKinds | null): void;
  /** What was noted: null when nothing. */
  taken(): NewJobKinds | null;
}

export const createNewJobKinds = (): NewJobKindsNoted => {
  let kinds: Set<JobKind> | 'any' | null = null;
  const note = (kind: JobKind | 'any'): void => {
    if (kinds === 'any') return;
    if (kind === 'any') kinds = 'any';
    else {
      kinds ??= new Set();
      kinds.add(kind);
    }
  };
  return {
    note: note,
    merge: (other: NewJobKinds | null): void => {
      if (other === 'any') note('any');
      else if (other !== null) for (const k of other) note(k);
    },
    taken: (): NewJobKinds | null => kinds,
  };
};

/**
 * The same stores, except that the job queue calls `noticed` each time a write makes a job claimable now
 * or later: `enqueue` that inserted one (not a dedupe-key no-op), with its kind, and `revive` that brought
 * one back (`'any'`: revive is by id). A unit of work wraps its transaction's stores with this and, once that
 * transaction has committed, wakes the workers of this process that serve those kinds (never before: a worker
 * woken earlier would not see the job yet).
 */
export const noticingNewJobs = (stores: Stores, noticed: (kind: JobKind | 'any') => void): Stores => lazyStores(NOTICING, { stores, noticed });

// Every port passed through as it is read (a spread would build every port of a lazy set), and `jobs` wrapped.
const NOTICING: StoreBuilders<{ readonly stores: Stores; readonly noticed: (kind: JobKind | 'any') => void }> = {
  ...(Object.fromEntries(Object.keys(STORE_READS).map((port) => [port, (c: { readonly stores: Stores }) => c.stores[port as keyof Stores]])) as unknown as StoreBuilders<{
    readonly stores: Stores;
  }>),
  jobs: ({ stores, noticed }) => noticingJobs(stores.jobs, noticed),
};

const noticingJobs = (jobs: Stores['jobs'], noticed: (kind: JobKind | 'any') => void): Stores['jobs'] => ({
  ...jobs,
  enqueue: (job) =>
    pipe(
      jobs.enqueue(job),
      TE.map((inserted) => {
        if (inserted) noticed(job.kind);
        return inserted;
      }),
    ),
  revive: (id, now) =>
    pipe(
      jobs.revive(id, now),
      TE.map((revived) => {
        if (revived) noticed('any');
        return revived;
      }),
    ),
});

/**
 * Listeners told when a committed transaction made new jobs (see `noticingNewJobs`), and of which kinds: what a
 * store adapter offers as `onNewJobs`, and what an in-process worker subscribes its `wake` to. A listener that
 * throws is reported through `onError` and does not stop the others.
 */
export const createJobSignal = (onError: (e: unknown) => void = () => undefined) => {
  const listeners = new Set<(kinds: NewJobKinds) => void>();
  return {
    /** Calls `listener` after each commit that made new jobs, with their kinds; returns a function that stops. */
    subscribe: (listener: (kinds: NewJobKinds) => void): (() => void) => {
      // A wrapper per subscription, so the same function subscribed twice stops independently.
      const own = (kinds: NewJobKinds) => listener(kinds);
      listeners.add(own);
      return () => void listeners.delete(own);
    },
    emit: (kinds: NewJobKinds): void => {
      for (const l of [...listeners]) E.tryCatch(() => l(kinds), onError);
    },
  };
};

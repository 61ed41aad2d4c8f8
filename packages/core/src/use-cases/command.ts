import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { idempotencyInProgress, idempotencyKeyReused, storeFailure } from '../errors.js';
import { IDEMPOTENCY_LOCK_MS, IDEMPOTENCY_TTL_MS, decideIdempotency } from '../idempotency.js';
import type { Tenant } from '../model/tenant.js';
import type { Clock } from '../ports/clock.js';
import type { IdempotencyClaim, IdempotencyRecord, StoredResponse } from '../ports/idempotency-store.js';
import type { SecretBox } from '../ports/secret-box.js';
import type { Stores } from '../ports/stores.js';
import type { TransactionOptions, UnitOfWork } from '../ports/unit-of-work.js';

/**
 * A write use case, ready to run: a function of the transaction's stores. Keeping writes in this shape
 * lets a caller run several in one transaction, or add its own writes (such as the idempotency record) to
 * the same commit. Its only effects are its writes through `tx`: the store may undo a run and start it
 * again before it commits (see `TransactionOptions.rerunnable`), so a command sends, stores or keeps
 * nothing elsewhere; what must happen outside goes through the outbox or a job.
 */
export type Command<A> = ((tx: Stores) => TE.TaskEither<DomainError, A>) & {
  /** The same command without its reads, for a store where each costs a round trip (see `Unread`). */
  readonly unread?: Unread<A>;
};

/**
 * A command's unread form: its writes without the reads that decide whether they may be made. It takes the
 * command's conditions for granted and writes through guarded writes, which fail when the conditions do not
 * hold (`refused`), so that nothing of it commits then. Where transactions run side by side (PostgreSQL),
 * each read costs a round trip to the database before the writes can go, and the writes with their commit
 * another; unread, the writes and the commit go in one. The runners (`execute`, `executeIdempotently`) try
 * it first there, and when it is refused run the command itself, which reads and says what was wrong (or
 * succeeds, if what was wrong has changed meanwhile). Where transactions run one at a time (SQLite), a read
 * costs no round trip, and the command runs as it is.
 *
 * The unread form must do what the command does whenever the command would succeed: the same writes, the
 * same result; and it must commit nothing the command would refuse. The command, read, is what says why. Its
 * guarded writes come first: refused, it has then written nothing, not even to a port that `overridePorts` moved
 * out of the database, whose writes no rollback undoes. (Under an Idempotency-Key, the key's record is written
 * after them, and a key found taken undoes them: a port a command writes to belongs in the database.)
 */
export interface Unread<A> {
  readonly run: (tx: Stores) => TE.TaskEither<DomainError, A>;
  /** Whether a failure of `run`'s transaction is its guard's refusal, for the command itself to explain. */
  readonly refused: (e: DomainError) => boolean;
}

/** `command`, with an unread form for the runners to try first where reads cost round trips (see `Unread`). */
export const withUnread = <A>(command: (tx: Stores) => TE.TaskEither<DomainError, A>, unread: Unread<A>): Command<A> =>
  Object.assign(command, { unread });

/**
 * Runs `command` in a transaction made by `inTransaction`: its unread form first, unless `readFirst` (transactions
 * that run one at a time, or an unread form refused already) or it has none; and the command itself, in a
 * transaction of its own, when that was refused (nothing of it committed).
 */
const tryingUnread =
  <A, B>(readFirst: boolean, command: Command<A>, inTransaction: (work: (tx: Stores) => TE.TaskEither<DomainError, A>) => TE.TaskEither<DomainError, B>) =>
  (): TE.TaskEither<DomainError, B> => {
    const unread = command.unread;
    if (readFirst || unread === undefined) return inTransaction(command);
    return pipe(
      inTransaction(unread.run),
      TE.orElse((e) => (unread.refused(e) ? inTransaction(command) : TE.left(e))),
    );
  };

/**
 * How commands run: they stop at the first failed write (a Left ends the chain), so the store may report a
 * write's failure at the next statement or at the commit rather than wait for each write's answer; and
 * they act only through the transaction's stores, so the store may run one again (on SQLite: a group
 * commit's members then need no savepoint each, whose page copies went to a temporary file).
 */
const COMMAND: TransactionOptions = { deferWrites: true, rerunnable: true };

/**
 * Runs a command in its own transaction. A command, like every one of esig's, must not carry on past a
 * failed store write (see `TransactionOptions.deferWrites`).
 *
 * @example
 * const r = await execute(deps)(createSignatureRequest(deps)(me, { title: 'NDA', documentIds: [documentId] }))();
 * if (E.isRight(r)) console.log(r.right.id);
 */
export const execute =
  (deps: { readonly uow: UnitOfWork }) =>
  <A>(command: Command<A>): TE.TaskEither<DomainError, A> =>
    tryingUnread(deps.uow.serial === true, command, (work) => deps.uow.transaction(work, COMMAND))();

export interface IdempotencyContext {
  readonly tenant: Tenant;
  readonly key: string;
  readonly fingerprint: string;
  /**
   * Whether the stored response is sealed with `secrets` (the default). `false` only for a command whose
   * response, success or error, can show nothing the store does not already hold in clear, such as a
   * resource's own representation; never for one that can show a secret (a minted key, a webhook secret,
   * a signing URL). Sealing costs a cipher's set-up per call, a measurable share of a small write.
   */
  readonly sealResponse?: boolean;
}

/**
 * A stored answer as it is replayed. A record's mark is believed only where the caller stores in clear too: a record
 * of a sealed call that says it is in clear was not written by it (a forged or foreign row), and is not replayed.
 */
const openStored =
  (secrets: SecretBox, ctx: Pick<IdempotencyContext, 'sealResponse'>) =>
  (r: StoredResponse): TE.TaskEither<DomainError, StoredResponse> =>
    r.inClear === true
      ? ctx.sealResponse === false
        ? TE.right({ status: r.status, body: r.body, headers: r.headers })
        : TE.left(storeFailure(new Error('an idempotency record of a sealed call says its response is in clear')))
      : pipe(
          TE.fromEither(secrets.open(r.body)),
          TE.bimap(
            // Sealed under another master key: an operator's mistake, not the client's.
            () => storeFailure(new Error('an idempotency record could not be opened (was the master key changed?)')),
            (body) => ({ ...r, body }),
          ),
        );

/**
 * What a key's record decides already, read before a write's costly work outside its command (an upload's
 * inspection on a PDF thread, its bytes staged on disk): the stored answer to replay, or the refusal the call would
 * get (`IdempotencyKeyReused`, `IdempotencyInProgress`); `null` when it should go on to `executeIdempotently`, which
 * decides again, and alone claims the key. Only a read, outside any transaction: a client that retries a large
 * upload gets its first answer without the file being inspected and written again.
 */
export const answeredAlready =
  (deps: { readonly stores: Stores; readonly clock: Clock; readonly secrets: SecretBox }) =>
  (ctx: IdempotencyContext): TE.TaskEither<DomainError, StoredResponse | null> =>
    pipe(
      deps.stores.idempotency.find(ctx.tenant, ctx.key),
      TE.chainW((existing): TE.TaskEither<DomainError, StoredResponse | null> => {
        const decision = decideIdempotency(existing, ctx.fingerprint, deps.clock.now());
        switch (decision._tag) {
          case 'Replay':
            return decision.record.response === null ? TE.left(storeFailure(new Error('a completed idempotency record has no response'))) : openStored(deps.secrets, ctx)(decision.record.response);
          case 'Conflict':
            return TE.left(idempotencyKeyReused());
          case 'InProgress':
            return TE.left(idempotencyInProgress());
          case 'TakeOver':
          case 'Proceed':
            return TE.right(null);
        }
      }),
    );

/** What deciding on a key came to: a stored answer to replay, or the claim this caller now holds, to run under. */
type Decided = { readonly replay: StoredResponse } | { readonly claim: IdempotencyRecord };

export interface IdempotentOutcome {
  readonly response: StoredResponse;
  readonly replayed: boolean;
}

/**
 * Runs a command at most once per idempotency key.
 *
 * 1. Claim the key (or find it answered, in flight, or bound to another request). The claim commits on its
 *    own, so concurrent callers see it at once and get `IdempotencyInProgress`. A new key, the usual case,
 *    is claimed by one insert-if-absent (given `stores`, one statement outside any transaction); only when
 *    a record is there already is it read and decided on, in a short transaction.
 * 2. Run the command; in the same transaction, store the rendered response, so the operation's writes
 *    and the response that replays them commit together or not at all.
 * 3. A domain error after the operation started is answered and stored like a success (a replay repeats
 *    it); an error `render` declines to store (a store failure) frees the key so the client can retry.
 *
 * A command with an unread form, where transactions run side by side (PostgreSQL), first runs unread with its key's
 * record inserted completed in the same transaction: one round trip, no claim; a key that has a record, or an unread
 * form refused, then goes the way above (see `Unread`, and the comment where it is run).
 *
 * Where transactions run one at a time (`uow.serial`, SQLite), a new key is looked up, and its command and
 * its record, stored once with the response, share one transaction instead: no one could have seen a claim
 * in between anyway.
 *
 * The stored body is sealed with `secrets` before it is written: a response may carry a secret shown once
 * (a minted API key, a webhook signing secret), and no secret rests in clear in the store. A caller whose
 * response holds none may say so (`sealResponse: false`); its body is then stored as sent.
 *
 * @example
 * const outcome = await executeIdempotently(deps)(
 *   { tenant: me.tenant, key: 'send-req_1', fingerprint: 'digest of who asked and what for' },
 *   sendSignatureRequest(deps)(me, requestId),
 *   (r) => (E.isRight(r) ? { status: 200, body: JSON.stringify(r.right), headers: {} } : null),
 * )();
 */
export const executeIdempotently =
  (deps: { readonly uow: UnitOfWork; readonly clock: Clock; readonly secrets: SecretBox; readonly stores?: Stores }) =>
  <A>(
    ctx: IdempotencyContext,
    command: Command<A>,
    render: (result: E.Either<DomainError, A>) => StoredResponse | null,
  ): TE.TaskEither<DomainError, IdempotentOutcome> => {
    const seal = (r: StoredResponse): StoredResponse =>
      ctx.sealResponse === false
        ? { status: r.status, body: r.body, headers: r.headers, inClear: true }
        : { status: r.status, body: deps.secrets.seal(r.body), headers: r.headers };
    const open = openStored(deps.secrets, ctx);
    const freshRecord = (now: Date) => ({
      tenant: ctx.tenant,
      key: ctx.key,
      fingerprint: ctx.fingerprint,
      state: 'in_progress' as const,
      response: null,
      createdAt: now.toISOString(),
      lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS).toISOString(),
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString(),
    });
    // A record stored once, already answered (the time taken when it is stored).
    const completedRecord = (response: StoredResponse): IdempotencyRecord => ({ ...freshRecord(deps.clock.now()), state: 'completed', response: seal(response) });
    // For a new key's command, and for an outcome whose command was rolled back together with its claim: `false`
    // when a record is there already.
    const storeCompleted = (tx: Stores, response: StoredResponse): TE.TaskEither<DomainError, boolean> =>
      () => tx.idempotency.insertIfAbsent(completedRecord(response))();

    // A record replaced only if it was still the one decided on: otherwise another caller decided on it first,
    // and runs the command (or has run it) now.
    const replaced =
      (claim: IdempotencyRecord) =>
      (ok: boolean): TE.TaskEither<DomainError, Decided> =>
        ok ? TE.right({ claim }) : TE.left(idempotencyInProgress());
    // A record is there already (or was, a moment ago): read it and decide, in one transaction.
    const decide = deps.uow.transaction((tx) =>
      pipe(
        tx.idempotency.find(ctx.tenant, ctx.key),
        TE.chainW((existing): TE.TaskEither<DomainError, Decided> => {
          const now = deps.clock.now();
          const decision = decideIdempotency(existing, ctx.fingerprint, now);
          const fresh = freshRecord(now);
          switch (decision._tag) {
            case 'Replay':
              return decision.record.response === null
                ? TE.left(storeFailure(new Error('a completed idempotency record has no response')))
                : pipe(open(decision.record.response), TE.map((replay) => ({ replay })));
            case 'Conflict':
              return TE.left(idempotencyKeyReused());
            case 'InProgress':
              return TE.left(idempotencyInProgress());
            case 'TakeOver': {
              const claim = { ...fresh, createdAt: existing!.createdAt, expiresAt: existing!.expiresAt };
              return pipe(tx.idempotency.replace(claim, existing!), TE.chainW(replaced(claim)));
            }
            case 'Proceed':
              return existing === null
                ? pipe(
                    tx.idempotency.insertIfAbsent(fresh),
                    // Lost the insert race to a concurrent caller with the same key: it is in flight.
                    TE.chainW((inserted): TE.TaskEither<DomainError, Decided> => (inserted ? TE.right({ claim: fresh }) : TE.left(idempotencyInProgress()))),
                  )
                : pipe(tx.idempotency.replace(fresh, existing), TE.chainW(replaced(fresh)));
          }
        }),
      ),
    );

    // The usual case first: a key never seen. Inserting the claim when absent is the whole decision then
    // (no record: Proceed); a key already there, live or expired, is left to `decide`.
    const insertClaim: TE.TaskEither<DomainError, IdempotencyRecord | null> = async () => {
      // The time is taken when the claim runs, not when it is built.
      const fresh = freshRecord(deps.clock.now());
      const inserted = await (deps.stores !== undefined ? deps.stores.idempotency.insertIfAbsent(fresh) : deps.uow.transaction((tx) => tx.idempotency.insertIfAbsent(fresh)))();
      return E.isLeft(inserted) ? inserted : E.right(inserted.right ? fresh : null);
    };
    const claimed = pipe(
      insertClaim,
      TE.chainW((fresh): TE.TaskEither<DomainError, Decided> => (fresh !== null ? TE.right({ claim: fresh }) : decide)),
    );

    // The command and the record's completion, which holds only while the record is still this caller's claim (see
    // `IdempotencyStore.complete`): a caller that outlived its lock, the key taken over meanwhile, commits nothing.
    // Its unread form first, if it has one (see `Unread`) and was not refused already: the claim is still this caller's
    // when that is refused, and completed by the command's own run.
    const run = (claim: IdempotencyClaim, unreadRefused: boolean) =>
      tryingUnread(deps.uow.serial === true || unreadRefused, command, (work) =>
        deps.uow.transaction(
          (tx) =>
            pipe(
              work(tx),
              TE.map((a) => render(E.right(a))),
              TE.chainW((response) =>
                response === null
                  ? TE.left<DomainError, StoredResponse>({ _tag: 'StoreFailure', cause: new Error('render returned no response for a success') })
                  : pipe(tx.idempotency.complete(ctx.tenant, ctx.key, seal(response), claim), TE.map(() => response)),
              ),
            ),
          COMMAND,
        ),
      )();

    // The record was no longer this caller's claim when it came to complete it: taken over by a retry once the lock ran
    // out (which runs, or ran, the command), or purged. Nothing of this caller's run committed. It is answered as a
    // call still in flight, which a client retries with the same key, to get the other caller's answer, or to run the
    // command if the key is free: not as the error it is inside (a conflict a client would not retry, for a call that
    // was, or will be, carried out).
    const lostClaim = (e: DomainError): boolean => e._tag === 'ConcurrentModification' && e.resource === 'idempotency_key' && e.id === ctx.key;
    const asInFlight = (e: DomainError): DomainError => (lostClaim(e) ? idempotencyInProgress() : e);

    const settleFailure =
      (claim: IdempotencyClaim) =>
      (e: DomainError): TE.TaskEither<DomainError, IdempotentOutcome> => {
        if (lostClaim(e)) return TE.left(idempotencyInProgress());
        const response = render(E.left(e));
        return response === null
          ? pipe(
              deps.uow.transaction((tx) => tx.idempotency.release(ctx.tenant, ctx.key, claim)),
              TE.chainW(() => TE.left(e)),
            )
          : pipe(
              deps.uow.transaction((tx) => tx.idempotency.complete(ctx.tenant, ctx.key, seal(response), claim)),
              TE.bimap(asInFlight, () => ({ response, replayed: false })),
            );
      };

    const inTurnsFrom = (first: TE.TaskEither<DomainError, Decided>, unreadRefused = false): TE.TaskEither<DomainError, IdempotentOutcome> =>
      pipe(
        first,
        TE.chainW((decided) =>
          'replay' in decided
            ? TE.right<DomainError, IdempotentOutcome>({ response: decided.replay, replayed: true })
            : pipe(
                run(decided.claim, unreadRefused),
                TE.map((response) => ({ response, replayed: false })),
                TE.orElse(settleFailure(decided.claim)),
              ),
        ),
      );
    // A command with an unread form, where transactions run side by side (see `Unread`): a new key's record is stored,
    // completed with the response, in the unread form's own transaction, its one round trip, with no claim committed
    // first. The record's insert fails on a key that has a record (having waited for a transaction that is inserting
    // one), and then, as when the unread form is refused, nothing of it commits, and the key is claimed or decided on
    // and the command run as below. So a second call with a key whose first call's transaction is running waits for
    // that transaction, a round trip, and replays its answer, where a claim committed first would answer it 409.
    const unread = command.unread;
    if (deps.uow.serial !== true && unread !== undefined) {
      const keyTaken = (e: DomainError): boolean => e._tag === 'ConcurrentModification' && e.resource === 'idempotency_key' && e.id === ctx.key;
      const atOnce = deps.uow.transaction(
        (tx) =>
          pipe(
            unread.run(tx),
            TE.map((a) => render(E.right(a))),
            TE.chainW((response) =>
              response === null
                ? TE.left<DomainError, StoredResponse>(storeFailure(new Error('render returned no response for a success')))
                : pipe(tx.idempotency.insertNew(completedRecord(response)), TE.map(() => response)),
            ),
          ),
        COMMAND,
      );
      return pipe(
        atOnce,
        TE.matchEW(
          // Refused, or failed before any write by an outcome to store (an input the command refuses): the key is
          // claimed and the command run the claim's way, which stores that outcome, so that a retry replays it and
          // another request with the key is told it is reused. A taken key: decided on (replayed, reused, in flight,
          // or an expired record replaced). Anything else (a store's failure) stores nothing, as on that way.
          (e) =>
            unread.refused(e) || render(E.left(e)) !== null ? inTurnsFrom(claimed, true) : keyTaken(e) ? inTurnsFrom(claimed) : TE.left(e),
          (response) => TE.right<DomainError, IdempotentOutcome>({ response, replayed: false }),
        ),
      );
    }
    if (deps.uow.serial !== true) return inTurnsFrom(claimed);

    // Transactions that run one at a time: nobody could see a claim before its command commits, so none is
    // written. The key is looked up, and a new one's command runs and its record is stored once, completed with
    // the response, in the same transaction: one commit; so does a key whose record has expired, the record
    // replaced. A key whose record still counts is decided on as above (nothing was written here then). A
    // command refused before its first write (the usual domain error) thus leaves nothing to undo, and SQLite's
    // group commit need not run its neighbours again.
    //
    // The in-progress answer this path gives itself (the record inserted meanwhile, which only a caller outside
    // the one-at-a-time writer could do) is never stored: it says nothing about the key's request.
    const inFlight = idempotencyInProgress();
    const together = deps.uow.transaction(
      (tx) =>
        pipe(
          tx.idempotency.find(ctx.tenant, ctx.key),
          TE.chainW((existing): TE.TaskEither<DomainError, StoredResponse | null> =>
            // A record that still counts is decided on in turns; an expired one is replaced here, like no record.
            decideIdempotency(existing, ctx.fingerprint, deps.clock.now())._tag !== 'Proceed'
              ? TE.right(null)
              : pipe(
                  command(tx),
                  TE.map((a) => render(E.right(a))),
                  TE.chainW((response) =>
                    response === null
                      ? TE.left<DomainError, StoredResponse>(storeFailure(new Error('render returned no response for a success')))
                      : existing === null
                        ? pipe(
                            storeCompleted(tx, response),
                            TE.chainW((inserted) => (inserted ? TE.right(response) : TE.left(inFlight))),
                          )
                        : pipe(
                            tx.idempotency.replace(completedRecord(response), existing),
                            TE.chainW((ok) => (ok ? TE.right(response) : TE.left(inFlight))),
                          ),
                  ),
                ),
          ),
        ),
      COMMAND,
    );
    // The command failed and everything, the claim too, was rolled back. An outcome the caller must see
    // again on a retry is stored now, as a completed record of its own; anything else leaves no record.
    const settleRolledBack = (e: DomainError): TE.TaskEither<DomainError, IdempotentOutcome> => {
      const response = e === inFlight ? null : render(E.left(e));
      if (response === null) return TE.left(e);
      return pipe(
        deps.uow.transaction((tx) => storeCompleted(tx, response)),
        // Not inserted: a retry with the same key ran meanwhile and its record stands; this caller still
        // gets the outcome its own call had.
        TE.map(() => ({ response, replayed: false })),
      );
    };
    return pipe(
      together,
      // A record is there: decided on as in turns, without first trying to insert a claim over it.
      TE.matchEW(settleRolledBack, (response) =>
        response === null ? inTurnsFrom(decide) : TE.right<DomainError, IdempotentOutcome>({ response, replayed: false }),
      ),
    );
  };

import type { PageInfo } from './generated/api-types.js';

/** One page of a list: exactly the API's envelope. */
export interface Page<T> {
  readonly data: T[];
  readonly pageInfo: PageInfo;
}

/**
 * What every `list` returns: an async iterable over every entry of every page — each page fetched when the
 * previous one is used up, by its `nextCursor`, so entries created meanwhile are neither skipped nor
 * repeated — and `page()` for one page (the one `cursor` names, or the first).
 *
 * @example
 * for await (const doc of esig.documents.list({ limit: 100 })) console.log(doc.id);
 * const { data, pageInfo } = await esig.documents.list({ limit: 10 }).page();
 */
export class PagedList<T> implements AsyncIterable<T> {
  readonly #fetchPage: (cursor: string | undefined) => Promise<Page<T>>;
  readonly #cursor: string | undefined;

  constructor(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, cursor: string | undefined) {
    this.#fetchPage = fetchPage;
    this.#cursor = cursor;
  }

  /** One page: the one the list's `cursor` names, or the first. */
  page(): Promise<Page<T>> {
    return this.#fetchPage(this.#cursor);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let cursor = this.#cursor;
    for (;;) {
      const page = await this.#fetchPage(cursor);
      yield* page.data;
      if (page.pageInfo.nextCursor === null) return;
      cursor = page.pageInfo.nextCursor;
    }
  }
}

import type { StoredMail } from '../model/mail';
import type { Tenant } from '../model/tenant';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result';

/** Where test-mode mail goes when no test SMTP server is configured; readable with a test key only. */
export interface TestMailboxStore {
  insert(mail: StoredMail): StoreResult<void>;
  list(tenant: Tenant, query: KeysetQuery<{ readonly to?: string }>): StoreResult<KeysetPage<StoredMail>>;
}

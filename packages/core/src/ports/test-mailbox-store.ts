import type { StoredMail } from '../model/mail.js';
import type { Tenant } from '../model/tenant.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

/** Where test-mode mail goes when no test SMTP server is configured; readable with a test key only. */
export interface TestMailboxStore {
  insert(mail: StoredMail): StoreResult<void>;
  list(tenant: Tenant, query: KeysetQuery<{ readonly to?: string }>): StoreResult<KeysetPage<StoredMail>>;
}

import type { ApiKey, GrantedScope } from '@esig/core';
import { API_SCOPES } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { ModeC, nullable, oneOf, rowType } from '../decode.js';

export const GrantedScopeC = oneOf<GrantedScope>([...API_SCOPES, '*'], 'GrantedScope');

export const apiKeyRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    name: t.string,
    prefix: t.string,
    secret_hash: t.string,
    scopes: c.json(t.readonlyArray(GrantedScopeC)),
    created_at: c.timestamp,
    revoked_at: nullable(c.timestamp),
  });

export const toApiKey = (r: t.TypeOf<ReturnType<typeof apiKeyRow>>): ApiKey => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  name: r.name,
  prefix: r.prefix,
  secretHash: r.secret_hash,
  scopes: r.scopes,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

/*
 * One row of a tenant by its id, reached through the primary key alone at any table size and with any
 * statistics (or none). Written the plain way, `WHERE id = $1 AND org_id = $2 AND mode = $3`, the statement
 * leaves the planner free to read the tenant's range of an (org_id, mode, …) index instead: on a table
 * grown without ANALYZE it takes `org_id = … AND mode = …` for a row or two, and each lookup then reads
 * the org's every row (see the plan test `plan-growth.test.ts`). Here the row is found by `id` inside a
 * MATERIALIZED CTE, a fence no condition is pushed through, and kept only when it is the tenant's; a row
 * never changes tenant, so that is as final as filtering in the lookup. Parameters: id, org, mode.
 */

/** The row's `columns`, or nothing when the id is unknown or another tenant's; `also`, a further condition. */
export const byIdSql = (table: string, columns: string, also?: string): string =>
  `WITH found AS MATERIALIZED (SELECT * FROM ${table} WHERE id = $1)
   SELECT ${columns} FROM found WHERE org_id = $2 AND mode = $3${also === undefined ? '' : ` AND ${also}`}`;

/**
 * The tenant's test for a lookup by primary key, given the parameters that hold org and mode: `IS NOT DISTINCT FROM`,
 * which no index can serve (for these NOT NULL columns it means `=`), so the id is the only condition an index can
 * take. Used where only the primary key holds `id` in the column's collation (documents since migration 0015,
 * signature requests since 0017): any other plan reads rows and filters them, which `esig_planned_per_call` prices
 * out, so such a lookup keeps a generic plan and needs no fence.
 */
export const tenantIs = (org: string, mode: string): string => `(org_id, mode) IS NOT DISTINCT FROM (${org}::text, ${mode}::text)`;

/**
 * One row of a tenant by its id, without a fence, for a table whose primary key is the only index holding `id` in the
 * column's collation (its page indexes hold it in "POSIX": documents since migration 0015, signature requests since
 * 0017; plan-cache.test.ts checks it). `marker` is `plannedPerCall`'s; with `forUpdate` the row is locked, and only a
 * row that passed the tenant's test is (another tenant's, its id guessed, never is). Parameters: id, org, mode.
 */
export const byPrimaryKeySql = (table: string, columns: string, marker: string, { forUpdate = false }: { readonly forUpdate?: boolean } = {}): string =>
  `SELECT ${columns} FROM ${table} WHERE id = $1 AND ${tenantIs('$2', '$3')} AND ${marker}${forUpdate ? ' FOR UPDATE' : ''}`;

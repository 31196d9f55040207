/** Group statements both SQL backends run as written (see named.ts); `commit` runs them in one transaction. */

export const GET_GROUP = `SELECT record, version FROM groups WHERE tenant = @tenant AND group_key = @groupKey`;
export const CREATE_GROUP = `INSERT INTO groups (tenant, group_key, record, version) VALUES (@tenant, @groupKey, @record, 1) ON CONFLICT (tenant, group_key) DO NOTHING`;
export const UPDATE_GROUP = `UPDATE groups SET record = @record, version = version + 1 WHERE tenant = @tenant AND group_key = @groupKey AND version = @expected`;
export const DELETE_GROUP = `DELETE FROM groups WHERE tenant = @tenant AND group_key = @groupKey AND version = @expected`;
export const MEMBER_OF = `SELECT group_key FROM group_members WHERE tenant = @tenant AND member = @member`;
export const REMEMBER_MEMBER = `
INSERT INTO group_members (tenant, member, group_key) VALUES (@tenant, @member, @groupKey)
ON CONFLICT (tenant, member) DO UPDATE SET group_key = excluded.group_key`;
export const FORGET_MEMBER = `DELETE FROM group_members WHERE tenant = @tenant AND member = @member`;
export const LIST_GROUPS = `SELECT tenant, group_key FROM groups ORDER BY tenant, group_key LIMIT @limit`;

/** The statement a commit runs, and the version it expects. */
export function commitStatement(expected: number, next: unknown): 'create' | 'update' | 'delete' | 'none' {
  if (expected === 0) return next ? 'create' : 'none';
  return next ? 'update' : 'delete';
}

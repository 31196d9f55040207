-- 011: incident groups (grouping.by) and the group each member is in.
CREATE TABLE IF NOT EXISTS groups (
  tenant TEXT NOT NULL, group_key TEXT NOT NULL, record TEXT NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (tenant, group_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS group_members (
  tenant TEXT NOT NULL, member TEXT NOT NULL, group_key TEXT NOT NULL,
  PRIMARY KEY (tenant, member)
) WITHOUT ROWID;

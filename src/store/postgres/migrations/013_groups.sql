-- 013: incident groups (grouping.by) and the group each member is in.
CREATE TABLE groups (
  tenant text NOT NULL, group_key text NOT NULL, record text NOT NULL, version bigint NOT NULL,
  PRIMARY KEY (tenant, group_key)
);
CREATE TABLE group_members (
  tenant text NOT NULL, member text NOT NULL, group_key text NOT NULL,
  PRIMARY KEY (tenant, member)
);

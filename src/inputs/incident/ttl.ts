import type { Config } from '../../config/schema.js';
import type { IncidentIdentity } from '../../core/identity.js';

/** The sliding TTL for one incident: the first matching override, else the default. */
export function incidentTtlSeconds(config: Config['incidents'], id: IncidentIdentity): number {
  for (const o of config.ttl_overrides) {
    if (o.fault_class !== undefined && o.fault_class === id.fault_class) return o.ttl_seconds;
    if (o.element_prefix !== undefined && id.element_id.startsWith(o.element_prefix)) return o.ttl_seconds;
  }
  return config.ttl_seconds;
}

import { parseWith } from '../../core/validation.js';
import { commonIncident } from './common-shape.js';
import { type Incident, incidentSchema } from './schema.js';

/** The incident `body` is, or a ValidationError naming each problem; the common shape is checked by hand first. */
export function parseIncident(body: unknown): Incident {
  return commonIncident(body) ?? parseWith(incidentSchema, body, 'incident');
}

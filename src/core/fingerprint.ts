/**
 * Material fingerprint: only the state worth touching a ticket for. Anything
 * added here re-touches tickets whenever it churns, so it stays this small.
 */
export const SEVERITIES = ['CRITICAL', 'MAJOR', 'MINOR', 'INFO'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface IncidentMaterial {
  severity: Severity;
  cleared: boolean;
}

export function incidentFingerprint(m: IncidentMaterial): string {
  return `${m.severity}|${m.cleared ? '1' : '0'}`;
}

export function parseIncidentFingerprint(fp: string): IncidentMaterial {
  const [severity, cleared] = fp.split('|');
  if (!SEVERITIES.includes(severity as Severity) || (cleared !== '0' && cleared !== '1')) {
    throw new Error(`not an incident fingerprint: ${JSON.stringify(fp)}`);
  }
  return { severity: severity as Severity, cleared: cleared === '1' };
}

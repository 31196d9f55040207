import type { Severity } from '../../core/fingerprint.js';

/** The `severity` label onto onceonly's severities; absent or unknown is MAJOR. */
export function alertSeverity(label: string | undefined): Severity {
  switch ((label ?? '').toLowerCase()) {
    case 'critical':
    case 'page':
      return 'CRITICAL';
    case 'warning':
    case 'minor':
      return 'MINOR';
    case 'info':
    case 'none':
      return 'INFO';
    default:
      return 'MAJOR';
  }
}

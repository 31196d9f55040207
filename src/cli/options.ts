import { InvalidArgumentError } from 'commander';

export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535)
    throw new InvalidArgumentError(`port must be a whole number from 0 to 65535 (--port or PORT), got ${JSON.stringify(value)}`);
  return n;
}

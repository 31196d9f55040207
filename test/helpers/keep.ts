import { afterEach } from 'node:test';

/**
 * What a test opened (fakes, harnesses, servers), closed after it whatever
 * its outcome: `const keep = closedAfterEach(); const jira = keep(await startJiraFake());`.
 */
export function closedAfterEach() {
  const open: Array<{ close(): Promise<void> | void }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((x) => x.close()));
  });
  return <T extends { close(): Promise<void> | void }>(x: T): T => {
    open.push(x);
    return x;
  };
}

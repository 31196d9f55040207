import { execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './process.js';
import { tempDir } from './tmp.js';

const git = (args: string[], cwd = REPO_ROOT) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const versionAt = (commit: string) => (JSON.parse(git(['show', `${commit}:package.json`])) as { version: string }).version;

/**
 * The last commit of the release before this one: the parent of the commit
 * that set package.json's version to the current one. Throws when history
 * holds no other version (a shallow clone, or before the first release).
 */
export function previousRelease(): { commit: string; version: string } {
  // A shallow clone holds no history to build from: fetch the rest where the origin is reachable.
  if (git(['rev-parse', '--is-shallow-repository']) === 'true') git(['fetch', '--quiet', '--unshallow']);
  const current = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  let bump: string | null = null;
  for (const commit of git(['log', '--format=%H', '--', 'package.json']).split('\n').filter(Boolean)) {
    if (versionAt(commit) !== current) {
      if (!bump) throw new Error(`the newest change to package.json, ${commit}, is not at the current version ${current}`);
      const parent = git(['rev-parse', `${bump}^`]);
      return { commit: parent, version: versionAt(parent) };
    }
    bump = commit;
  }
  throw new Error(`no version other than ${current} in this clone's history (a shallow clone?): the previous release cannot be built`);
}

/** A lock file's dependency tree, without the package's own version (which a release changes). */
function dependencyTree(lockText: string): string {
  const lock = JSON.parse(lockText) as { version?: string; packages?: Record<string, { version?: string }> };
  delete lock.version;
  if (lock.packages?.['']) delete lock.packages[''].version;
  return JSON.stringify(lock);
}

/**
 * The previous release checked out from this repository's history into a
 * temporary directory and built: its CLI, to run beside this one. When its
 * lock file names the same dependencies as this checkout's, it uses this
 * checkout's node_modules and only compiles (about 20 s); otherwise it
 * installs as a clone installs (`npm ci`, which builds it; about a minute
 * and a half, most of it better-sqlite3's native build).
 */
export function buildPreviousRelease(): { cli: string; version: string; commit: string; remove(): void } {
  const { commit, version } = previousRelease();
  const dir = tempDir('onceonly-previous-');
  try {
    git(['clone', '--quiet', '--shared', '--no-checkout', REPO_ROOT, dir.path]);
    git(['checkout', '--quiet', '--detach', commit], dir.path);
    const sameDependencies =
      dependencyTree(readFileSync(join(dir.path, 'package-lock.json'), 'utf8')) === dependencyTree(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'));
    if (sameDependencies) {
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir.path, 'node_modules'));
      execFileSync('npm', ['run', 'build'], { cwd: dir.path, stdio: 'ignore', timeout: 600_000 });
    } else {
      execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir.path, stdio: 'ignore', timeout: 900_000 });
    }
  } catch (err) {
    dir.remove();
    throw err;
  }
  return { cli: join(dir.path, 'dist', 'cli', 'main.js'), version, commit, remove: () => dir.remove() };
}

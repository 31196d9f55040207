import { execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './process.js';
import { tempDir } from './tmp.js';

const git = (args: string[], cwd = REPO_ROOT) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const versionAt = (commit: string) => (JSON.parse(git(['show', `${commit}:package.json`])) as { version: string }).version;

/**
 * The release before this checkout's code: the commit that set package.json
 * to a released version (a release is its bump commit, CHANGELOG heading
 * and all). While the CHANGELOG's newest section is "Unreleased", this code
 * is the current version plus unreleased work, so the previous release is
 * the newest bump; once the newest section is a release, this code is that
 * release, and the previous one is the bump before. (The parent of the
 * newest bump, as this once took, is the release's own work without its
 * version: after a bump it would upgrade a release to itself.) A tag
 * `v<version>` on another commit of that version wins over its bump.
 * Throws when history holds no earlier release (a shallow clone).
 */
export function previousRelease(): { commit: string; version: string } {
  // A shallow clone holds no history to build from: fetch the rest where the origin is reachable.
  if (git(['rev-parse', '--is-shallow-repository']) === 'true') git(['fetch', '--quiet', '--unshallow']);
  const bumps: Array<{ commit: string; version: string }> = [];
  for (const commit of git(['log', '--format=%H', '--', 'package.json']).split('\n').filter(Boolean)) {
    const version = versionAt(commit);
    let before: string | null = null;
    try {
      before = versionAt(`${commit}^`);
    } catch {
      // the first commit: no parent
    }
    if (version !== before && !bumps.some((b) => b.version === version)) bumps.push({ commit, version });
  }
  const changelog = readFileSync(join(REPO_ROOT, 'CHANGELOG.md'), 'utf8');
  const unreleased = /^## Unreleased\b/m.exec(changelog)?.index;
  const firstRelease = /^## \d+\.\d+\.\d+/m.exec(changelog)?.index;
  const released = unreleased === undefined || (firstRelease !== undefined && firstRelease < unreleased);
  const found = bumps[released ? 1 : 0];
  if (!found) throw new Error(`no release before this code in this clone's history (a shallow clone?): the previous release cannot be built`);
  let tagged = '';
  try {
    tagged = git(['rev-list', '-n', '1', `v${found.version}`]);
  } catch {
    // not tagged: its bump commit is the release
  }
  return { commit: tagged || found.commit, version: found.version };
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

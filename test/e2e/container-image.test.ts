// needs: buildah redis
// timeout: 20
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, watchServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
// vfs: no kernel overlay or daemon needed; the same driver the base script commits with.
const BUILDAH = ['--storage-driver', 'vfs'];
const buildah = (args: string[], timeout = 120_000) => run('buildah', [...BUILDAH, ...args], { timeout, maxBuffer: 64 * 1024 * 1024 });
// Node 24's binary, stripped, is about 24 MB larger than Node 20's was: the image went from 130 MB to 154 MB.
const LIMIT_BYTES = 170_000_000;

interface ImageConfig {
  User: string;
  Entrypoint: string[];
  Cmd: string[];
  Env: string[];
  Volumes?: Record<string, unknown>;
  ExposedPorts?: Record<string, unknown>;
  Healthcheck?: { Test: string[] };
}

// The Dockerfile users build with a registry, built here as it is: only its two bases are local
// (scripts/image-base.sh makes them from Debian's and npm's packages). Then the image is started
// as its entrypoint says and answers a decision and /readyz through it.
// More time than the runner's usual 5 minutes (the `// timeout:` line above is what the runner reads): on a
// machine that has never built the bases, making them (debootstrap, Node from npm) and then the image (npm ci,
// a native build) took 4.3 minutes alone and more than 5 beside another test file.
test('the Dockerfile builds with buildah on local bases; the image serves a decision and /readyz, and its healthcheck tells', {
  timeout: 1_800_000,
}, async () => {
  const bases = Object.fromEntries(
    (await run('bash', [join(REPO_ROOT, 'scripts/image-base.sh')], { timeout: 900_000 })).stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=') as [string, string]),
  );
  assert.ok(bases.BUILD_BASE && bases.BASE, `the base script names both bases: ${JSON.stringify(bases)}`);

  const image = `localhost/onceonly-test:${process.pid}`;
  const dir = tempDir();
  const containers: string[] = [];
  try {
    // npm's cache is lent to the build, so the registry is not asked again for what this machine holds.
    const cache = (await run('npm', ['config', 'get', 'cache'])).stdout.trim();
    // Built as a user builds it: scripts/build-image.sh, which takes buildah where no docker daemon answers
    // (in docker format: the OCI format has no HEALTHCHECK).
    const built = await run('bash', [join(REPO_ROOT, 'scripts/build-image.sh')], {
      timeout: 1_200_000,
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        TAG: image,
        BUILD_BASE: bases.BUILD_BASE,
        BASE: bases.BASE,
        BUILDAH_GLOBAL_ARGS: BUILDAH.join(' '),
        BUILDAH_ARGS: `--isolation chroot --volume ${cache}:/root/.npm`,
      },
    });
    assert.equal(built.stdout.trim().split('\n').at(-1), image, 'the script prints the tag it built');
    assert.match(built.stderr, /building .* with (buildah|docker)/);

    const info = JSON.parse((await buildah(['inspect', '--type', 'image', image])).stdout) as { Docker: { config: ImageConfig } };
    const config = info.Docker.config;
    assert.equal(config.User, '65532:65532', 'runs as a non-root user');
    assert.ok(config.Volumes && '/var/lib/onceonly' in config.Volumes, 'the data directory is a volume');
    assert.ok(config.ExposedPorts && '8080/tcp' in config.ExposedPorts);
    assert.ok(config.Env.includes('HOST=0.0.0.0'), 'binds every address in the container');
    const health = config.Healthcheck?.Test ?? [];
    assert.equal(health[0], 'CMD', `an exec-form HEALTHCHECK: ${JSON.stringify(health)}`);

    // What is in it: node and the production install; no dev dependency, compiler or shell.
    const probe = (await buildah(['from', image])).stdout.trim();
    containers.push(probe);
    const root = (await buildah(['mount', probe])).stdout.trim();
    const installed = join(root, 'opt/onceonly/lib/node_modules/onceonly');
    assert.ok(existsSync(join(installed, 'dist/cli/main.js')));
    assert.ok(existsSync(join(installed, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')), 'the native addon was built');
    for (const dev of ['typescript', 'tsx', '@biomejs/biome']) assert.ok(!existsSync(join(installed, 'node_modules', dev)), `no dev dependency: ${dev}`);
    for (const tool of ['usr/bin/sh', 'usr/bin/gcc', 'usr/bin/apt-get', 'usr/local/bin/npm'])
      assert.ok(!existsSync(join(root, tool)), `not in the image: /${tool}`);
    const bytes = Number((await run('du', ['-sb', root])).stdout.split('\t')[0]);
    console.log(`image ${image}: ${(bytes / 1e6).toFixed(1)} MB uncompressed`);
    assert.ok(bytes < LIMIT_BYTES, `the image is ${(bytes / 1e6).toFixed(1)} MB, over ${LIMIT_BYTES / 1e6} MB`);
    await buildah(['umount', probe]);

    // Without its config the image does not start; with a config without tenants, the server
    // refuses the image's public bind and says why.
    const bare = (await buildah(['from', image])).stdout.trim();
    containers.push(bare);
    const refusal = (mounts: string[]) =>
      buildah(['run', '--isolation', 'chroot', ...mounts, bare, '--', ...config.Entrypoint, ...config.Cmd]).then(
        () => assert.fail('the image served'),
        (e: { code: number; stderr: string }) => e,
      );
    const noConfig = await refusal([]);
    assert.equal(noConfig.code, 2);
    assert.match(noConfig.stderr, /onceonly: \/etc\/onceonly\/onceonly\.yml: cannot read config file: ENOENT/);
    writeFileSync(join(dir.path, 'no-tenants.yml'), 'adapters: []\n');
    const noTenants = await refusal(['--volume', `${join(dir.path, 'no-tenants.yml')}:/etc/onceonly/onceonly.yml:ro`]);
    assert.equal(noTenants.code, 2);
    assert.match(noTenants.stderr, /onceonly: refusing to bind 0\.0\.0\.0: no tenants are configured/);

    // With tenants: the documented way.
    const token = 'image-test-token-0123456789';
    writeFileSync(join(dir.path, 'onceonly.yml'), `tenants:\n  - { id: acme, tokens: ["${token}"] }\n`);
    const port = await freePort();
    const c = (await buildah(['from', image])).stdout.trim();
    containers.push(c);
    const inContainer = (argv: string[]) => ['run', '--isolation', 'chroot', '--env', `PORT=${port}`, c, '--', ...argv];
    const proc = spawn(
      'buildah',
      [
        ...BUILDAH,
        'run',
        '--volume',
        `${join(dir.path, 'onceonly.yml')}:/etc/onceonly/onceonly.yml:ro`,
        ...inContainer([...config.Entrypoint, ...config.Cmd]).slice(1),
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const server = await watchServer(proc);
    try {
      assert.equal(server.url, `http://0.0.0.0:${port}`);
      const url = `http://127.0.0.1:${port}`;
      const healthy = () =>
        buildah(inContainer(health.slice(1))).then(
          () => 0,
          (e: { code: number }) => e.code,
        );
      assert.equal(await healthy(), 0, 'the healthcheck passes while the server is ready');
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      const fault = { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'fiber-cut-12', severity: 'MAJOR' };
      const post = (auth?: string) =>
        fetch(`${url}/v1/incidents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
          body: JSON.stringify(fault),
        });
      assert.equal((await post()).status, 401, 'a request without the tenant token is refused');
      assert.equal(((await (await post(token)).json()) as { decision: string }).decision, 'CREATE');
      assert.equal(((await (await post(token)).json()) as { decision: string }).decision, 'SUPPRESS');
      assert.ok(
        server.lines.some((l) => l.includes('onceonly 0.') && l.includes('starting')),
        `the first line names the version: ${server.lines[0]}`,
      );
      // A container runtime sends the image's STOPSIGNAL to its first process; `buildah run` would
      // SIGKILL it instead, so the signal goes to the server inside, and its exit code comes back out.
      const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
      process.kill(leafOf(proc.pid!), 'SIGTERM');
      assert.equal(await exited, 0, 'SIGTERM drains and exits 0');
      assert.ok(server.lines.some((l) => l.includes('draining and shutting down')));
      assert.equal(await healthy(), 1, 'the healthcheck fails once nothing answers');
    } finally {
      await server.stop('SIGKILL');
    }
  } finally {
    for (const c of containers) await buildah(['rm', c]).catch(() => undefined);
    await buildah(['rmi', image]).catch(() => undefined);
    dir.remove();
  }
});

/** The deepest process under `pid` (buildah run → its chroot runtime → exec → the command). */
function leafOf(pid: number): number {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The field after the command's (parenthesised, possibly spaced) name: state, then the parent's pid.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  let leaf = pid;
  for (;;) {
    const child = [...parentOf].find(([, parent]) => parent === leaf)?.[0];
    if (child === undefined) return leaf;
    leaf = child;
  }
}

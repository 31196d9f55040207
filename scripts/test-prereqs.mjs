#!/usr/bin/env node
// Makes sure what tests need beyond npm is on the machine: missing Debian
// packages are installed when we are root (otherwise it says exactly what to
// install), and services the tests talk to are started when they are down,
// with the machine's own start commands.
//
//   node scripts/test-prereqs.mjs [NEED ...]   only these (see NEEDS); none given: all
//   node scripts/test-prereqs.mjs --bench      what `npm run bench` needs
//
// Test files declare what they need in a line `// needs: redis chromium`;
// scripts/run-tests.mjs reads those lines for the files it runs, so
// `npm test -- unit` needs nothing but npm.
import { execSync, spawnSync } from 'node:child_process';

const listening = (port) => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' 2>/dev/null`;

/** need → Debian packages by the command that proves them, and a service to start: [name, probe, start command]. */
export const NEEDS = {
  redis: {
    commands: [
      ['redis-server', 'redis-server'],
      ['redis-cli', 'redis-tools'],
    ],
  },
  chromium: { commands: [['chromium', 'chromium']] },
  alertmanager: {
    commands: [
      ['prometheus-alertmanager', 'prometheus-alertmanager'],
      ['amtool', 'prometheus-alertmanager'],
    ],
  },
  promtool: { commands: [['promtool', 'prometheus']] },
  openssl: { commands: [['openssl', 'openssl']] },
  mosquitto: {
    commands: [['mosquitto', 'mosquitto']],
    service: ['mosquitto (MQTT adapter tests)', listening(1883), 'mosquitto -d -c /etc/mosquitto/mosquitto.conf'],
  },
  nats: {
    commands: [['nats-server', 'nats-server']],
    service: [
      'NATS with JetStream (NATS ingest tests)',
      listening(4222),
      'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log',
    ],
  },
  postgres: {
    commands: [['pg_dump', 'postgresql-client']],
    service: ['PostgreSQL (Postgres store tests)', listening(5432), 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start'],
  },
  // The shipped systemd unit is checked with systemd-analyze verify.
  systemd: { commands: [['systemd-analyze', 'systemd']] },
  // The container image test: buildah builds and runs it without a daemon; debootstrap makes its local bases.
  buildah: {
    commands: [
      ['buildah', 'buildah'],
      ['debootstrap', 'debootstrap'],
    ],
  },
  wrk: { commands: [['wrk', 'wrk']] },
  // The path section counts instructions per answer with callgrind.
  valgrind: {
    commands: [
      ['valgrind', 'valgrind'],
      ['callgrind_control', 'valgrind'],
    ],
  },
};

/** What only `npm run bench` needs, not the tests. */
const BENCH_ONLY = ['wrk', 'valgrind'];

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

export function ensure(needs) {
  for (const n of needs) if (!NEEDS[n]) throw new Error(`unknown test need ${JSON.stringify(n)} (known: ${Object.keys(NEEDS).join(', ')})`);
  const missing = [...new Set(needs.flatMap((n) => NEEDS[n].commands.filter(([cmd]) => !has(cmd)).map(([, pkg]) => pkg)))];
  if (missing.length > 0) {
    if (process.getuid?.() !== 0) {
      console.error(`the tests need these Debian packages: ${missing.join(' ')}\n  sudo apt-get install -y ${missing.join(' ')}`);
      process.exit(1);
    }
    console.log(`installing ${missing.join(' ')}`);
    execSync('apt-get update -qq', { stdio: 'inherit' });
    execSync(`DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing.join(' ')}`, { stdio: 'inherit' });
  }
  for (const n of needs) {
    const service = NEEDS[n].service;
    if (!service) continue;
    const [name, probe, start] = service;
    if (spawnSync('sh', ['-c', probe], { stdio: 'ignore' }).status === 0) continue;
    console.log(`starting ${name}`);
    execSync(start, { stdio: 'inherit' });
    const until = Date.now() + 10_000;
    while (spawnSync('sh', ['-c', probe], { stdio: 'ignore' }).status !== 0) {
      if (Date.now() > until) {
        console.error(`${name} did not start listening within 10 s`);
        process.exit(1);
      }
      spawnSync('sleep', ['0.2']);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const all = Object.keys(NEEDS).filter((n) => !BENCH_ONLY.includes(n));
  ensure(args.includes('--bench') ? [...all, ...BENCH_ONLY] : args.length > 0 ? args : all);
}

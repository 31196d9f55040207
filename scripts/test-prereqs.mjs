#!/usr/bin/env node
// `npm test` runs this first (pretest): it makes sure what the tests need
// beyond npm is on the machine. Missing Debian packages are installed when we
// are root; otherwise it says exactly what to install. Services the tests talk
// to are started when they are down, with the machine's own start commands.
import { execSync, spawnSync } from 'node:child_process';

/** command on PATH → Debian package that provides it */
const DEBIAN = [
  ['openssl', 'openssl'],
  ['redis-server', 'redis-server'],
  ['redis-cli', 'redis-tools'],
  ['mosquitto', 'mosquitto'],
  ['prometheus-alertmanager', 'prometheus-alertmanager'],
  ['promtool', 'prometheus'],
  ['chromium', 'chromium'],
  ['pg_dump', 'postgresql-client'],
  // `npm run bench` (scripts/test-prereqs.mjs --bench) also drives HTTP with wrk.
  ...(process.argv.includes('--bench') ? [['wrk', 'wrk'], ['redis-benchmark', 'redis-tools']] : []),
];

const listening = (port) => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' 2>/dev/null`;

/** [name, probe command, start command] for services the tests need (the machine's own start commands). */
const SERVICES = [
  ['mosquitto (MQTT adapter tests)', listening(1883), 'mosquitto -d -c /etc/mosquitto/mosquitto.conf'],
  ['PostgreSQL (Postgres store tests)', listening(5432), 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start'],
];

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

const missing = DEBIAN.filter(([cmd]) => !has(cmd)).map(([, pkg]) => pkg);
if (missing.length > 0) {
  if (process.getuid?.() !== 0) {
    console.error(`pretest: the tests need these Debian packages: ${missing.join(' ')}\n  sudo apt-get install -y ${missing.join(' ')}`);
    process.exit(1);
  }
  console.log(`pretest: installing ${missing.join(' ')}`);
  execSync('apt-get update -qq', { stdio: 'inherit' });
  execSync(`DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing.join(' ')}`, { stdio: 'inherit' });
}

for (const [name, probe, start] of SERVICES) {
  if (spawnSync('sh', ['-c', probe], { stdio: 'ignore' }).status === 0) continue;
  console.log(`pretest: starting ${name}`);
  execSync(start, { stdio: 'inherit' });
  const until = Date.now() + 10_000;
  while (spawnSync('sh', ['-c', probe], { stdio: 'ignore' }).status !== 0) {
    if (Date.now() > until) {
      console.error(`pretest: ${name} did not start listening within 10 s`);
      process.exit(1);
    }
    spawnSync('sleep', ['0.2']);
  }
}

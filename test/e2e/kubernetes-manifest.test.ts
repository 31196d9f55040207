import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loadConfigFile } from '../../src/config/load.js';
import { REPO_ROOT } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

// No cluster runs here, so the shipped example is checked against what it must agree with:
// itself (selectors, ports), the image (user, volume, config path) and the server (the
// variables it reads, the probes' routes, a config that allows the public bind).
const DOCS = parseAllDocuments(readFileSync(join(REPO_ROOT, 'deploy', 'kubernetes.yaml'), 'utf8')).map((d) => {
  assert.deepEqual(d.errors, [], 'the manifest is valid YAML');
  return d.toJS() as Record<string, any>;
});
const DOCKERFILE = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const SERVE = readFileSync(join(REPO_ROOT, 'src', 'cli', 'serve.ts'), 'utf8');
const ofKind = (kind: string) => {
  const found = DOCS.filter((d) => d.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0]!;
};
const deployment = ofKind('Deployment');
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const env = new Map<string, { value?: string; valueFrom?: unknown }>(container.env.map((e: { name: string }) => [e.name, e]));
const mount = (name: string) => container.volumeMounts.find((m: { name: string }) => m.name === name);

test('the Deployment, its PodDisruptionBudget and its Service select the same pods', () => {
  const labels = deployment.spec.template.metadata.labels;
  assert.deepEqual(deployment.spec.selector.matchLabels, labels);
  assert.deepEqual(ofKind('PodDisruptionBudget').spec.selector.matchLabels, labels);
  assert.deepEqual(ofKind('Service').spec.selector, labels);
  assert.ok(deployment.spec.replicas >= 2, 'a fleet: two replicas or more');
  assert.ok(ofKind('PodDisruptionBudget').spec.minAvailable >= 1, 'a drain leaves a replica serving');
  assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0, 'an upgrade adds the new replica before taking an old one away');
  const port = container.ports.find((p: { name: string }) => p.name === ofKind('Service').spec.ports[0].targetPort);
  assert.ok(port, "the Service's target is the container's named port");
  assert.equal(String(port.containerPort), env.get('PORT')?.value, 'the server listens where the port says');
});

test('the probes ask /healthz and /readyz over HTTPS, as the server serves with ONCEONLY_TLS_CERT', () => {
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  for (const probe of [container.livenessProbe, container.readinessProbe]) {
    assert.equal(probe.httpGet.scheme, 'HTTPS');
    assert.equal(probe.httpGet.port, container.ports[0].name);
  }
  const tls = mount('tls').mountPath;
  assert.ok(env.get('ONCEONLY_TLS_CERT')?.value?.startsWith(`${tls}/`) && env.get('ONCEONLY_TLS_KEY')?.value?.startsWith(`${tls}/`));
});

test('every variable it sets is one the server reads, or one its config refers to', () => {
  const config = ofKind('ConfigMap').data['onceonly.yml'] as string;
  for (const name of env.keys()) {
    const read = SERVE.includes(`process.env.${name}`) || config.includes(`\${env:${name}}`);
    assert.ok(read, `${name} is read by onceonly serve or named in the config`);
  }
  // The server's own reads: a misspelt name in the manifest would be the check above failing.
  assert.ok(SERVE.includes('process.env.ONCEONLY_STORE') && env.get('ONCEONLY_STORE')?.valueFrom, 'the store URL (with its password) comes from a Secret');
});

test("its config loads as the server loads it, with tenants, so the container's public bind is allowed", () => {
  const dir = tempDir();
  const saved = process.env.ONCEONLY_ACME_TOKEN;
  try {
    const file = join(dir.path, 'onceonly.yml');
    writeFileSync(file, ofKind('ConfigMap').data['onceonly.yml']);
    process.env.ONCEONLY_ACME_TOKEN = 'a-token-of-forty-eight-hex-characters-0123456789';
    const config = loadConfigFile(file);
    assert.deepEqual(
      config.tenants.map((t) => t.id),
      ['acme'],
    );
    assert.equal(mount('config').mountPath, env.get('ONCEONLY_CONFIG')?.value, 'the config is mounted where ONCEONLY_CONFIG points');
    // Without the Secret's token the config is refused: nothing serves with an empty token.
    delete process.env.ONCEONLY_ACME_TOKEN;
    assert.throws(() => loadConfigFile(file), /ONCEONLY_ACME_TOKEN/);
  } finally {
    if (saved === undefined) delete process.env.ONCEONLY_ACME_TOKEN;
    else process.env.ONCEONLY_ACME_TOKEN = saved;
    dir.remove();
  }
});

test("it runs as the image's user, keeps its state on the image's volume and outlasts a drain", () => {
  const user = /^USER (\d+):(\d+)$/m.exec(DOCKERFILE);
  assert.ok(user, 'the Dockerfile names its user by number');
  assert.equal(String(pod.securityContext.runAsUser), user[1]);
  assert.equal(String(pod.securityContext.runAsGroup), user[2]);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  const volume = /^VOLUME \["([^"]+)"\]$/m.exec(DOCKERFILE);
  assert.equal(mount('state').mountPath, volume?.[1], "the journal's directory is the image's volume");
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  // A delivery in flight lasts at most its adapter's timeout (10 s by default); the grace period outlasts it and a request.
  assert.ok(pod.terminationGracePeriodSeconds >= 30);
});

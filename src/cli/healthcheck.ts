// The container image's HEALTHCHECK: exit 0 when GET /readyz on this host answers 200
// (the server is up and its store answers), 1 otherwise. A file of its own, not an
// `onceonly` command: it runs every few seconds, and loads nothing but node:http(s).
//
// PORT (8080) is the server's port, as `onceonly serve` reads it. With ONCEONLY_TLS_CERT
// set the server speaks HTTPS; the check talks to its own process over loopback, so it
// does not verify the certificate (whose name is the service's, not 127.0.0.1).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const port = Number(process.env.PORT ?? '8080');
const tls = Boolean(process.env.ONCEONLY_TLS_CERT);
const request = tls ? httpsRequest : httpRequest;
const req = request({ host: '127.0.0.1', port, path: '/readyz', method: 'GET', timeout: 4_000, rejectUnauthorized: false }, (res) => {
  res.resume();
  process.exitCode = res.statusCode === 200 ? 0 : 1;
  if (res.statusCode !== 200) process.stderr.write(`onceonly healthcheck: /readyz answered ${res.statusCode}\n`);
});
req.on('timeout', () => req.destroy(new Error('no answer in 4 s')));
req.on('error', (err) => {
  process.stderr.write(`onceonly healthcheck: ${tls ? 'https' : 'http'}://127.0.0.1:${port}/readyz: ${err.message}\n`);
  process.exitCode = 1;
});
req.end();

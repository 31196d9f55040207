import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorReply } from '@redis/client';
import { isTransportFault, refusalOf, StoreRefusedError, storeFaultOf, StoreTimeoutError, StoreUnavailableError } from '../../src/store/errors.js';

/** A pg DatabaseError as the driver makes it: a message, a SQLSTATE code and a severity. */
const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code, severity: 'ERROR' });
const sysError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:6379`), { code });
/** The Redis client's own errors are told by their class name. */
const clientError = (name: string) => {
  const C = { [name]: class extends Error {} }[name]!;
  return new C(`${name} happened`);
};

test('only an unreachable store fails open, by an allow-list; a full store and everything else fail the request alone', () => {
  const transport = [
    new StoreTimeoutError('store did not answer within 50 ms'),
    new StoreUnavailableError('Postgres is unreachable'),
    ...['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'].map(sysError),
    // A TLS store whose certificate is not trusted (or expired, or for another host) cannot be reached.
    ...['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'].map(
      sysError,
    ),
    ...['ClientClosedError', 'ClientOfflineError', 'SocketClosedUnexpectedlyError', 'ConnectionTimeoutError'].map(clientError),
    new ErrorReply('LOADING Redis is loading the dataset in memory'),
    new ErrorReply('BUSY Redis is busy running a script'),
    new ErrorReply("READONLY You can't write against a read only replica."),
    new ErrorReply('CLUSTERDOWN The cluster is down'),
    new ErrorReply('ERR max number of clients reached'),
    pgError('08006'), // connection failure
    pgError('57P01'), // admin shutdown
    pgError('53300'), // too many connections
    new Error('Connection terminated unexpectedly'),
  ];
  const full = [
    new ErrorReply("OOM command not allowed when used memory > 'maxmemory'."),
    new ErrorReply('MISCONF Redis is configured to save RDB snapshots'),
    pgError('53100'),
    pgError('53200'),
  ];
  const refused = [
    new TypeError('Do not know how to serialize a BigInt'),
    new RangeError('Maximum call stack size exceeded'),
    new ErrorReply('ERR user_script:12: attempt to compare nil with number'),
    new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value'),
    new ErrorReply('NOAUTH Authentication required.'),
    pgError('22021'), // invalid byte sequence (a NUL in text)
    pgError('23505'), // unique violation
    pgError('40001'), // serialization failure
    pgError('54000'), // program limit: an index row too large
    pgError('57014'), // query canceled (a statement timeout)
    new Error('something nobody anticipated'),
  ];
  const kinds = (xs: Error[]) => xs.map((e) => `${storeFaultOf(e)}: ${e.message}`);
  assert.deepEqual(
    kinds(transport),
    transport.map((e) => `transport: ${e.message}`),
  );
  assert.deepEqual(
    kinds(full),
    full.map((e) => `full: ${e.message}`),
  );
  assert.deepEqual(
    kinds(refused),
    refused.map((e) => `refused: ${e.message}`),
  );
  assert.equal(isTransportFault('not even an error'), false);
});

test('a store reply becomes a refusal that says what the store said; our own errors pass through', () => {
  const oom = refusalOf(new ErrorReply("OOM command not allowed when used memory > 'maxmemory'."));
  assert.ok(oom instanceof StoreRefusedError);
  assert.equal(oom.full, true);
  assert.match(oom.message, /^the store is full .*OOM command not allowed/);
  const limit = refusalOf(pgError('54000'));
  assert.ok(limit instanceof StoreRefusedError);
  assert.equal(limit.full, false);
  assert.match(limit.message, /SQLSTATE 54000: pg 54000/);
  const ours = new TypeError('x');
  assert.equal(refusalOf(ours), ours);
});

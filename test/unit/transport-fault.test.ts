import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorReply } from '@redis/client';
import { isTransportFault, StoreTimeoutError, StoreUnavailableError } from '../../src/store/errors.js';

/** A pg DatabaseError as the driver makes it: a message, a SQLSTATE code and a severity. */
const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code, severity: 'ERROR' });

test('only faults of the store fail open; errors in a request’s own data fail that request', () => {
  const transport = [
    new StoreTimeoutError('store did not answer within 50 ms'),
    new StoreUnavailableError('Postgres is unreachable'),
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
    new ErrorReply('LOADING Redis is loading the dataset in memory'),
    new ErrorReply('BUSY Redis is busy running a script'),
    new ErrorReply("OOM command not allowed when used memory > 'maxmemory'."),
    new ErrorReply('CLUSTERDOWN The cluster is down'),
    new ErrorReply('ERR max number of clients reached'),
    pgError('57P01'), // admin shutdown
    pgError('53300'), // too many connections
    pgError('40001'), // serialization failure
    new Error('something nobody anticipated'),
  ];
  const data = [
    new TypeError('Do not know how to serialize a BigInt'),
    new RangeError('Maximum call stack size exceeded'),
    new ErrorReply('ERR user_script:12: attempt to compare nil with number'),
    new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value'),
    pgError('22021'), // invalid byte sequence (a NUL in text)
    pgError('23505'), // unique violation
    pgError('42703'), // undefined column
  ];
  assert.deepEqual(
    transport.filter((e) => !isTransportFault(e)).map((e) => e.message),
    [],
    'must fail open',
  );
  assert.deepEqual(
    data.filter((e) => isTransportFault(e)).map((e) => e.message),
    [],
    'must fail the request alone',
  );
});

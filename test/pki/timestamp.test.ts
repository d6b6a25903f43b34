/**
 * RFC 3161 refusals: which PKIFailureInfo bits a TSA's `rejection` carries (decoded from real DER the sandbox's TSA
 * builds, cross-checked with openssl) and which of them `requestTimestamp` marks temporary (`retryable`), so that
 * finishing retries a TSA that says "not now" and stops at one that refuses the request itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { startPkiServer, TSA_FAILURE, tsaRejection, type RunningPkiServer, type TsaFailure } from '../../sandbox/pki';
import { isSingpassFlowsError, type SingpassFlowsError } from '../../src/errors';
import { isTemporaryTimestampRefusal, requestTimestamp, TIMESTAMP_FAILURE_BITS, timestampFailuresOf } from '../../src/pki/timestamp';

const TEMPORARY: TsaFailure[] = ['timeNotAvailable', 'addInfoNotAvailable', 'systemFailure'];
const ALL = Object.keys(TSA_FAILURE) as TsaFailure[];

/** openssl's wording of each PKIFailureInfo bit (`openssl ts -reply -text`): an independent reading of the DER. */
const OPENSSL_TEXT: Record<TsaFailure, string> = {
  badAlg: 'unrecognized or unsupported algorithm identifier',
  badRequest: 'transaction not permitted or supported',
  badDataFormat: 'the data submitted has the wrong format',
  timeNotAvailable: "the TSA's time source is not available",
  unacceptedPolicy: 'the requested TSA policy is not supported by the TSA',
  unacceptedExtension: 'the requested extension is not supported by the TSA',
  addInfoNotAvailable: 'the additional information requested could not be understood or is not available',
  systemFailure: 'the request cannot be handled due to system failure',
};

/** The failInfo BIT STRING content of a DER TimeStampResp, as requestTimestamp reads it. */
function failInfoOf(der: Buffer): Uint8Array | undefined {
  const resp = new pkijs.TimeStampResp({ schema: asn1js.fromBER(new Uint8Array(der)).result });
  return resp.status.failInfo?.valueBlock.valueHexView;
}

describe('PKIFailureInfo decoding (DER from the sandbox TSA)', () => {
  let dir: string;
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'tsa-failinfo-')); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('numbers every RFC 3161 bit as the sandbox does', () => {
    expect(TIMESTAMP_FAILURE_BITS).toEqual(TSA_FAILURE);
  });

  it.each(ALL)('%s: decoded as that bit alone, and openssl reads the same DER the same way', async (failure) => {
    const der = await tsaRejection(failure, `refused: ${failure}`);
    expect(timestampFailuresOf(failInfoOf(der))).toEqual([failure]);
    const file = join(dir, `${failure}.tsr`);
    writeFileSync(file, der);
    expect(execFileSync('openssl', ['ts', '-reply', '-in', file, '-text'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()).toContain(`Failure info: ${OPENSSL_TEXT[failure]}`);
  });

  it('several bits at once, and none', async () => {
    expect(timestampFailuresOf(failInfoOf(await tsaRejection(['badRequest', 'systemFailure'], 'two')))).toEqual(['badRequest', 'systemFailure']);
    expect(timestampFailuresOf(failInfoOf(await tsaRejection(['timeNotAvailable', 'addInfoNotAvailable'], 'two')))).toEqual(['timeNotAvailable', 'addInfoNotAvailable']);
    expect(timestampFailuresOf(undefined)).toEqual([]);
    expect(timestampFailuresOf(new Uint8Array([0, 0]))).toEqual([]);
  });

  it('temporary: "waiting", or only timeNotAvailable / addInfoNotAvailable / systemFailure; a refusal of the request itself is not', () => {
    for (const f of ALL) expect([f, isTemporaryTimestampRefusal(2, [f])]).toEqual([f, TEMPORARY.includes(f)]);
    expect(isTemporaryTimestampRefusal(3, [])).toBe(true); // waiting
    expect(isTemporaryTimestampRefusal(2, [])).toBe(false); // rejection without a reason: nothing says it will pass
    expect(isTemporaryTimestampRefusal(2, ['systemFailure', 'badRequest'])).toBe(false);
  });
});

describe('requestTimestamp against the sandbox TSA refusing', () => {
  let srv: RunningPkiServer;
  beforeAll(async () => { srv = await startPkiServer(); });
  afterAll(async () => {
    srv.service.failNext('tsa', 0);
    srv.service.setTsaBusy(false);
    await srv.close();
  });

  async function refusal(): Promise<SingpassFlowsError> {
    try {
      await requestTimestamp(Buffer.alloc(32, 7), { url: `${srv.baseUrl}/ca/tsa` });
    } catch (e) {
      if (isSingpassFlowsError(e)) return e;
      throw e;
    }
    throw new Error('the TSA granted the request');
  }

  it.each(ALL)('%s: TSA_FAILED naming the failure, retryable only when it is the TSA\'s passing trouble', async (failure) => {
    srv.service.failNext('tsa', 1, failure);
    const e = await refusal();
    expect(e.code).toBe('TSA_FAILED');
    expect(e.details).toMatchObject({ pkiStatus: 2, failInfo: [failure], retryable: TEMPORARY.includes(failure) });
    expect(e.message).toContain(failure);
    // the switch was for one request: the next is granted
    await expect(requestTimestamp(Buffer.alloc(32, 7), { url: `${srv.baseUrl}/ca/tsa` })).resolves.toBeInstanceOf(Buffer);
  });

  it('setTsaBusy: a TSA at its load limit refuses with systemFailure (retryable) until it is turned off', async () => {
    const before = srv.service.requestCounts().tsaBusy;
    srv.service.setTsaBusy(0);
    const e = await refusal();
    expect(e.details).toMatchObject({ failInfo: ['systemFailure'], retryable: true });
    srv.service.setTsaBusy(0, 'timeNotAvailable');
    expect((await refusal()).details).toMatchObject({ failInfo: ['timeNotAvailable'], retryable: true });
    expect(srv.service.requestCounts().tsaBusy - before).toBe(2);
    srv.service.setTsaBusy(false);
    await expect(requestTimestamp(Buffer.alloc(32, 7), { url: `${srv.baseUrl}/ca/tsa` })).resolves.toBeInstanceOf(Buffer);
  });

  it('the fault switch over HTTP takes PKIFailureInfo names and refuses anything else', async () => {
    const post = (body: unknown) => fetch(`${srv.baseUrl}/ca/faults`, { method: 'POST', body: JSON.stringify(body) });
    expect((await post({ tsa_fail: 1, tsa_failure: 'addInfoNotAvailable' })).status).toBe(200);
    expect((await refusal()).details).toMatchObject({ failInfo: ['addInfoNotAvailable'], retryable: true });
    expect((await post({ tsa_fail: 1, tsa_failure: 'notAFailure' })).status).toBe(400);
    expect((await post({ ocsp_fail: 1, ocsp_failure: 'systemFailure' })).status).toBe(400);
    expect((await post({ tsa_busy: 0, tsa_busy_failure: 'badRequest' })).status).toBe(200);
    expect((await refusal()).details).toMatchObject({ failInfo: ['badRequest'], retryable: false });
    expect((await post({ tsa_busy: false })).status).toBe(200);
  });
});

/**
 * `singpass-flows demo --auto`: one sample document through the running demo, unattended — the way a user of the
 * signing page would, over HTTP: upload to the flow's start route, the sandbox phone (automatic mode) scans and
 * approves, the flow writes the signed PDF and a result line; then the PDF is verified against the sandbox root.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { SingpassFlowsError, type ErrorCode } from '../../src/errors';
import { verifyPdfSignatures, type PdfVerificationReport } from '../../src/pades';
import type { RunningDemo } from './launcher';

export interface AutoResult {
  signRef: string;
  challengeCode: string;
  file: string;
  report: PdfVerificationReport;
}

const poll = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lines of a JSON-lines file the flow appends to, for one session. */
function linesFor(file: string, signRef: string): Record<string, unknown>[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).flatMap((l) => {
    try {
      const o = JSON.parse(l) as Record<string, unknown>;
      return o.signRef === signRef ? [o] : [];
    } catch {
      return [];
    }
  });
}

export async function signSampleUnattended(demo: RunningDemo, o: { sample: string; timeoutMs?: number; log?: (l: string) => void }): Promise<AutoResult> {
  const log = o.log ?? (() => undefined);
  const pdf = readFileSync(path.join(demo.samplesDir, o.sample));
  const res = await fetch(`${demo.nodeRedUrl}/sign/start?name=${encodeURIComponent(o.sample)}`, {
    method: 'POST', body: pdf,
    headers: { 'content-type': 'application/octet-stream', authorization: `Basic ${Buffer.from(`${demo.signIn.user}:${demo.signIn.password}`).toString('base64')}` },
  });
  const started = (await res.json().catch(() => ({}))) as { signRef?: string; challengeCode?: string; code?: string; message?: string };
  if (!res.ok || !started.signRef) {
    throw new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `The signing flow did not start a session (HTTP ${res.status}): ${started.code ?? ''} ${started.message ?? ''}`.trim());
  }
  const { signRef } = started;
  log(`session ${signRef} started by the flow for ${o.sample}; challenge code ${started.challengeCode}; the sandbox phone scans and approves by itself`);

  const until = Date.now() + (o.timeoutMs ?? 120_000);
  const file = path.join(demo.signedDir, `${signRef}.pdf`);
  for (;;) {
    const failed = linesFor(path.join(demo.signedDir, 'errors.jsonl'), signRef)[0];
    if (failed) throw new SingpassFlowsError((typeof failed.code === 'string' ? failed.code : 'STATE_INVALID') as ErrorCode, `The flow recorded an error for session ${signRef}: ${String(failed.code)} ${String(failed.message)}`);
    if (linesFor(path.join(demo.signedDir, 'results.jsonl'), signRef).length && existsSync(file)) break;
    const autoErrors = demo.sandbox.phone.autoErrors();
    if (autoErrors.length) throw new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `The sandbox phone failed: ${autoErrors.join('; ')}`);
    if (Date.now() > until) throw new SingpassFlowsError('SESSION_EXPIRED', `No signed PDF for session ${signRef} after ${Math.round((o.timeoutMs ?? 120_000) / 1000)} s (see Node-RED's log above)`);
    await poll(200);
  }
  const report = await verifyPdfSignatures(readFileSync(file), { trustedRoots: [demo.sandbox.pki.root.certDer] });
  return { signRef, challengeCode: started.challengeCode ?? '', file, report };
}

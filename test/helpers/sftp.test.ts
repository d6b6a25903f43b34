/**
 * The throwaway SFTP server the queue-mode test stores signed PDFs on (test/helpers/sftp.ts), checked with OpenSSH's
 * own client: an upload lands in `localDir`, the host key is the one the helper reports, the account gets no shell and
 * (as root) sees nothing outside its chroot, and a halted server refuses connections until started again.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { hasSshd, startSftpServer, type SftpServer } from './sftp';

const run = promisify(execFile);
const ready = hasSshd() && fs.existsSync('/usr/bin/sftp');
if (!ready && process.env.CI) throw new Error('the SFTP helper needs openssh-server and openssh-client (scripts/install-test-tools.sh)');
const describeSftp = ready ? describe : describe.skip;

describeSftp('a throwaway SFTP server (openssh-server on 127.0.0.1)', () => {
  let s: SftpServer;
  let dir: string;
  let known: string;
  let key: string;

  beforeAll(async () => {
    s = await startSftpServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-sftp-client-'));
    key = path.join(dir, 'key');
    fs.writeFileSync(key, s.privateKey, { mode: 0o600 });
    // the client accepts only the host key the helper reports
    const { stdout } = await run('ssh-keyscan', ['-p', String(s.port), '-t', 'ed25519', '127.0.0.1']);
    known = path.join(dir, 'known_hosts');
    fs.writeFileSync(known, stdout);
    const { stdout: fp } = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', known]);
    expect(fp.split(' ')[1]).toBe(s.hostKeyFingerprint);
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const ssh = ['-i', () => key, '-o', () => `UserKnownHostsFile=${known}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5'];
  const opts = () => ssh.map((a) => (typeof a === 'function' ? a() : a));
  const sftp = (batch: string) => {
    const file = path.join(dir, 'batch');
    fs.writeFileSync(file, batch);
    return run('sftp', [...opts(), '-P', String(s.port), '-b', file, `${s.username}@127.0.0.1`]);
  };

  it('takes an upload into remoteDir, which is localDir on this machine', async () => {
    const file = path.join(dir, 'a.pdf');
    fs.writeFileSync(file, '%PDF-1.7 test');
    await sftp(`put ${file} ${s.remoteDir}/a.pdf\n`);
    expect(fs.readFileSync(path.join(s.localDir, 'a.pdf'), 'utf8')).toBe('%PDF-1.7 test');
    expect(s.log()).toMatch(new RegExp(`Accepted publickey for ${s.username} from 127\\.0\\.0\\.1`));
  });

  it('gives no shell: a command is answered by the SFTP subsystem only', async () => {
    const r = await run('ssh', [...opts(), '-p', String(s.port), `${s.username}@127.0.0.1`, 'id'], { timeout: 15_000 }).then(
      (o) => o.stdout, (e: { stdout?: string }) => e.stdout ?? '');
    expect(r).not.toMatch(/uid=/);
    // logged in, and what ran was the forced SFTP server, not the command
    expect(s.log()).toMatch(/Starting session: forced-command \(config\) 'internal-sftp/);
  });

  (process.getuid?.() === 0 ? it : it.skip)('as root: the account is chrooted (nothing of the machine is visible)', async () => {
    const { stdout } = await sftp('ls /\n');
    expect(stdout).toMatch(/signed/);
    expect(stdout).not.toMatch(/\b(etc|usr|run)\b/);
    await expect(sftp('get /etc/passwd\n')).rejects.toThrow();
  });

  it('refuses connections while halted, serves the same files again once started', async () => {
    await s.halt();
    await expect(sftp('ls\n')).rejects.toThrow();
    await s.start();
    const { stdout } = await sftp(`ls ${s.remoteDir}\n`);
    expect(stdout).toMatch(/a\.pdf/);
  }, 60_000);
});

/**
 * A throwaway SFTP server (Debian's openssh-server) for end-to-end tests, set up as a real upload-only account is:
 * its own sshd_config, host key and client key in a temporary folder, `ListenAddress 127.0.0.1` on a free port, public
 * key login only, no shell, no forwarding, `ForceCommand internal-sftp`. Nothing of the machine's own ssh set-up is
 * read or changed (only /run/sshd, sshd's privilege-separation folder, is created when missing — never removed, as
 * another sshd may use it).
 *
 * As root (the usual CI case) the account is `nobody` — an existing unprivileged user, so the test adds none to the
 * machine — locked into a chroot (`ChrootDirectory`) whose only writable folder is `signed/`: clients see `/signed`.
 * sshd demands that every component of a chroot path be root-owned and writable by root alone, which rules out /tmp
 * (mode 1777): the folder is made under /run then. Without root sshd can neither chroot nor switch users: the account
 * is the current user, without a chroot, started in the data folder (`internal-sftp -d`), and clients use the
 * absolute path `remoteDir` (checked by running test/helpers/sftp.test.ts as `nobody`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { registerServer } from './servers';

const run = promisify(execFile);
const SSHD = '/usr/sbin/sshd';

export interface SftpServer {
  host: string;
  port: number;
  username: string;
  /** The client's private key (OpenSSH format), what n8n's SFTP credential takes as Private Key. */
  privateKey: string;
  /** The server's host key fingerprint (SHA256:…), for a client that checks it. */
  hostKeyFingerprint: string;
  /** The folder uploads go to, as clients name it (`/signed` in the chroot). */
  remoteDir: string;
  /** The same folder on this machine's disk: what landed on the server. */
  localDir: string;
  /** sshd's log (VERBOSE: connections, logins, the chroot; not single file operations, see ForceCommand). */
  log(): string;
  /** Stop the server (nothing listens on the port), keeping its files; start() brings it back on the same port. */
  halt(): Promise<void>;
  start(): Promise<void>;
  /** Stop the server and delete its folder. */
  stop(): Promise<void>;
}

export function hasSshd(): boolean {
  return fs.existsSync(SSHD);
}

export async function startSftpServer(): Promise<SftpServer> {
  const root = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(root ? '/run' : os.tmpdir(), 'spfl-sftp-'));
  let child: ChildProcess | undefined;
  let output = '';
  try {
    fs.chmodSync(dir, 0o755);
    const port = await freePort();
    const username = root ? 'nobody' : os.userInfo().username;
    const jail = path.join(dir, 'jail');
    const localDir = path.join(jail, 'signed');
    fs.mkdirSync(localDir, { recursive: true, mode: 0o755 });
    let remoteDir = localDir;
    if (root) {
      const nobody = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'));
      if (!nobody) throw new Error('running as root but there is no "nobody" OS user to give the SFTP account to');
      const [, , uid, gid] = nobody.split(':');
      fs.chownSync(localDir, Number(uid), Number(gid));
      remoteDir = '/signed';
      // sshd's privilege separation needs it; Debian's service creates it at boot, which a container never runs
      fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    }
    const hostKey = path.join(dir, 'host_ed25519');
    const clientKey = path.join(dir, 'client_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'singpass-flows test host', '-f', hostKey]);
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'singpass-flows test client', '-f', clientKey]);
    const hostKeyFingerprint = (await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${hostKey}.pub`])).stdout.split(' ')[1];
    // StrictModes: the authorized keys and every folder above them owned by root (or the user), writable by none else
    fs.mkdirSync(path.join(dir, 'authorized_keys'), { mode: 0o755 });
    fs.copyFileSync(`${clientKey}.pub`, path.join(dir, 'authorized_keys', username));
    fs.chmodSync(path.join(dir, 'authorized_keys', username), 0o644);
    const config = path.join(dir, 'sshd_config');
    fs.writeFileSync(config, [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys', '%u')}`,
      `AllowUsers ${username}`,
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      // Without PAM sshd itself refuses a locked account ('!' or unreadable /etc/shadow, as for a server not run by
      // root); as root the account is nobody ('*', not locked) and PAM's session modules (pam_loginuid) fail in
      // containers; without root PAM does the account check, which passes for the server's own user
      root ? 'UsePAM no' : 'UsePAM yes',
      'PermitRootLogin no',
      'AllowTcpForwarding no',
      'AllowAgentForwarding no',
      'AllowStreamLocalForwarding no',
      'X11Forwarding no',
      'PermitTunnel no',
      'PermitTTY no',
      'LogLevel VERBOSE',
      // StrictModes refuses authorized keys below a group- or world-writable folder such as /tmp (mode 1777), where
      // the non-root server's folder lives; as root it lives under /run and the check stays on
      root ? 'StrictModes yes' : 'StrictModes no',
      'Subsystem sftp internal-sftp',
      // upload-only as deployed: no shell or command whatever the client asks for. (internal-sftp logs file operations
      // to syslog only, which a chroot without /dev/log does not reach: the log shows logins, not files.)
      root ? `ChrootDirectory ${jail}` : '',
      `ForceCommand internal-sftp -d ${remoteDir}`,
      '',
    ].join('\n'));

    const start = async () => {
      // -D: stay in the foreground (ours to stop), -e: log to stderr (ours to read); sshd re-executes itself, so the
      // absolute path
      child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      registerServer(child.pid);
      child.stdout!.on('data', (d) => { output += d; });
      child.stderr!.on('data', (d) => { output += d; });
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}):\n${output.slice(-3000)}`);
        if (await banner(port)) return;
        if (Date.now() > deadline) throw new Error(`sshd not ready in 30 s:\n${output.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const halt = async () => {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      // the listener and every session it forked (they are in its process group)
      try { process.kill(-c.pid!, 'SIGTERM'); } catch { /* gone */ }
      const timer = setTimeout(() => { try { process.kill(-c.pid!, 'SIGKILL'); } catch { /* gone */ } }, 10_000);
      await exited;
      clearTimeout(timer);
    };
    await start();
    return {
      host: '127.0.0.1',
      port,
      username,
      privateKey: fs.readFileSync(clientKey, 'utf8'),
      hostKeyFingerprint,
      remoteDir,
      localDir,
      log: () => output,
      halt,
      start,
      async stop() {
        await halt();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    if (child && child.exitCode === null) try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** sshd answers a TCP connection with its `SSH-2.0-…` banner once it is ready. */
function banner(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const done = (ok: boolean) => { s.destroy(); resolve(ok); };
    s.setTimeout(2000, () => done(false));
    s.once('data', (d) => done(d.toString().startsWith('SSH-2.0-')));
    s.once('error', () => done(false));
  });
}

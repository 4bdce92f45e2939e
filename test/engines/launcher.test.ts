/**
 * The launcher (src/providers/local/launcher.ts): local engine programs are started by a small
 * helper process, so the service never forks itself (a fork copies its page tables and blocks its
 * event loop, 5 to 10 ms from a 180 MB service on a 2-CPU VM). Checked here: the helper is the
 * program's parent and the program's stdin and stdout are a socket to this process (nothing is
 * relayed); a helper that dies takes its programs with it and fails their runs, and the next run
 * gets a new helper; a service that dies outright (its channel to the helper closed) leaves no
 * program running and no socket directory. Timeouts, aborts, outside signals and bounds go through the launcher in
 * local-ffmpeg.test.ts and local-espeak.test.ts, since every run now does.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launcher } from '../../src/providers/local/launcher.js';
import { runProgram, withWorkDir } from '../../src/providers/local/process.js';
import { isRunning, pidWritten } from '../support/engines.js';
import { waitFor } from '../support/wait.js';

describe('launcher: programs are started by a helper process', { skip: process.platform !== 'linux' ? 'Linux only (/proc)' : false }, () => {
  test('the helper, not this process, is the program’s parent; its stdin and stdout are a socket to this process, its stdin read to the end', async () => {
    const text = 'x'.repeat(300_000);
    const { stdout } = await withWorkDir((dir) =>
      runProgram({ path: '/bin/sh', args: ['-c', 'echo "$PPID"; readlink /proc/$$/fd/0; readlink /proc/$$/fd/1; wc -c'], stdin: text, timeoutMs: 30_000 }, dir),
    );
    const [parent, stdinLink, stdoutLink, count] = stdout.toString().trim().split('\n');
    assert.equal(Number(parent), launcher.helperPid, 'started by the helper');
    assert.notEqual(Number(parent), process.pid, 'not forked from this process');
    assert.match(stdinLink!, /^socket:/);
    assert.equal(stdoutLink, stdinLink, 'one connection, both ways');
    assert.equal(Number(count), text.length, 'the whole stdin reached the program');
  });

  test('a helper that dies takes its programs with it and fails their runs; the next run gets a new helper', async () => {
    await withWorkDir(async (dir) => {
      const running = runProgram({ path: '/bin/sh', args: ['-c', 'echo $$ > self.pid; sleep 300 & echo $! > child.pid; wait'], timeoutMs: 60_000 }, dir);
      const [self, child] = [await pidWritten(dir, 'self.pid'), await pidWritten(dir, 'child.pid')];
      const helper = launcher.helperPid!;
      process.kill(helper, 'SIGKILL');
      await assert.rejects(running, (err: Error & { kind?: string }) => err.kind === 'exit');
      await waitFor('the program and its child to be gone', () => !isRunning(self) && !isRunning(child), 10_000);
      const { stdout } = await runProgram({ path: '/bin/echo', args: ['again'], timeoutMs: 30_000 }, dir);
      assert.equal(stdout.toString(), 'again\n');
      assert.ok(launcher.helperPid !== undefined && launcher.helperPid !== helper, 'a new helper');
    });
  });

  test('a service killed outright (SIGKILL: no stop code runs) leaves no program running and no socket directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'was-launcher-test-'));
    try {
      // A process that starts a program through the launcher, as a worker does, and then waits.
      const processModule = pathToFileURL(resolve('src/providers/local/process.ts')).href;
      const script = `import { runProgram } from ${JSON.stringify(processModule)};
        runProgram({ path: '/bin/sh', args: ['-c', 'echo $$ > self.pid; sleep 300 & echo $! > child.pid; wait'], timeoutMs: 600000 }, ${JSON.stringify(dir)}).catch(() => {});
        setInterval(() => {}, 1000);`;
      // Its temporary directory is this test's, so what it leaves there can be seen.
      const service = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'ignore', env: { ...process.env, TMPDIR: dir } });
      try {
        const [self, child] = [await pidWritten(dir, 'self.pid'), await pidWritten(dir, 'child.pid')];
        assert.ok(isRunning(self) && isRunning(child));
        const sockets = () => readdirSync(dir).filter((name) => name.startsWith('was-launch-'));
        assert.equal(sockets().length, 1, 'the launcher’s socket directory is in the service’s TMPDIR');
        service.kill('SIGKILL');
        await waitFor('the program and its child to be gone', () => !isRunning(self) && !isRunning(child), 10_000);
        await waitFor('the socket directory to be gone', () => sockets().length === 0, 10_000);
      } finally {
        service.kill('SIGKILL');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the helper shares neither stdout nor stderr with the service: the service’s log pipe stays non-blocking (a paused log reader never blocks it)', async () => {
    // A process that writes to its stdout (a pipe: Node makes it non-blocking), starts the helper
    // and runs a program through it, then reports its stdout's flags and where each process's
    // stdout and stderr lead. A helper that inherited them would clear O_NONBLOCK on the shared
    // pipe and turn every later log write of the service into a blocking write(2).
    const processModule = pathToFileURL(resolve('src/providers/local/process.ts')).href;
    const launcherModule = pathToFileURL(resolve('src/providers/local/launcher.ts')).href;
    const script = `import { readFileSync, readlinkSync } from 'node:fs';
      import { runProgram, withWorkDir } from ${JSON.stringify(processModule)};
      import { launcher } from ${JSON.stringify(launcherModule)};
      process.stdout.write('started\\n');
      await withWorkDir((dir) => runProgram({ path: '/bin/true', args: [], timeoutMs: 30000 }, dir));
      const flags = (pid) => parseInt(readFileSync('/proc/' + pid + '/fdinfo/1', 'utf8').match(/flags:\\s*(\\d+)/)[1], 8);
      const fds = (pid) => [1, 2].map((fd) => readlinkSync('/proc/' + pid + '/fd/' + fd));
      process.stdout.write(JSON.stringify({ flags: flags(process.pid), own: fds(process.pid), helper: fds(launcher.helperPid) }) + '\\n');
      process.exit(0);`;
    const service = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    service.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    service.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const code = await new Promise<number | null>((res) => service.on('close', res));
    assert.equal(code, 0, err);
    const report = JSON.parse(out.trim().split('\n').at(-1)!) as { flags: number; own: string[]; helper: string[] };
    const O_NONBLOCK = 0o4000;
    assert.ok((report.flags & O_NONBLOCK) !== 0, `the service's stdout is still non-blocking (flags ${report.flags.toString(8)})`);
    assert.notEqual(report.helper[0], report.own[0], 'the helper’s stdout is not the service’s');
    assert.notEqual(report.helper[1], report.own[1], 'the helper’s stderr is not the service’s');
  });
});

/**
 * The processes a program started, found through /proc (Linux; elsewhere none), so that a kill
 * reaches them too: read before anything is killed, while the parent links still lead to them.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Every live descendant of `pid` (Linux: /proc; elsewhere none, and only the program itself is
 * killed). Read before anything is killed, so the parent links still lead to them.
 */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces and parentheses): state, ppid, …
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    for (const c of children.get(queue.pop()!) ?? []) {
      found.push(c);
      queue.push(c);
    }
  }
  return found;
}

export function signalQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** SIGKILL to a program's descendants, then to the program. */
export function killTree(pid: number): void {
  for (const descendant of descendantsOf(pid)) signalQuietly(descendant);
  signalQuietly(pid);
}

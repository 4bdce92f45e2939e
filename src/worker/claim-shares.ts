/**
 * What a claim takes, as a pure function: one decision for both ways a claim is written
 * (job-claim.ts: one job at a time under each workspace's lock, or on PostgreSQL a workspace's
 * share in one statement). Candidates come in queue order (oldest runnable first); each is taken
 * while the claim has room (`max`) and its workspace has a free running slot, so free slots are
 * shared out in queue order (docs/decisions.md: claims share free slots in queue order) and a
 * workspace at its running-jobs limit never holds up the jobs of others behind it.
 */
export function shareClaims<T extends { workspace_id: string }>(candidates: readonly T[], freeSlots: ReadonlyMap<string, number>, max: number): T[] {
  const taken: T[] = [];
  const used = new Map<string, number>();
  for (const job of candidates) {
    if (taken.length >= max) break;
    const n = used.get(job.workspace_id) ?? 0;
    if (n >= (freeSlots.get(job.workspace_id) ?? 0)) continue;
    used.set(job.workspace_id, n + 1);
    taken.push(job);
  }
  return taken;
}

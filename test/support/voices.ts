/**
 * Workspace voices (issue 37) made the way a client makes them: a recording uploaded as media,
 * a voice.clone run over the public API, the worker run to its end, the voice read back from the
 * job's result.
 */
import { call, type TestContext } from './harness.js';
import { drain, run } from './jobs.js';
import { upload, wav } from './media.js';
import type { Tenant } from './seed.js';

export interface SeededVoice {
  voiceId: string;
  jobId: string;
  referenceMediaId: string;
  /** The recording's bytes (the reference audio a provider must be sent). */
  reference: Buffer;
}

/** Uploads `reference` (a WAV by default) and clones a voice from it; throws unless the clone completed. */
export async function seedVoice(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, o: { name?: string; reference?: Buffer } = {}): Promise<SeededVoice> {
  const reference = o.reference ?? wav(4000 + Math.floor(Math.random() * 1000));
  const up = await upload(ctx, t as Tenant, reference, { type: 'audio/wav', filename: 'reference.wav' });
  if (up.statusCode !== 200) throw new Error(`seeding a voice: upload ${up.statusCode} ${up.body}`);
  const referenceMediaId = up.json().data.id as string;
  const res = await run(ctx, t, 'voice.clone', { referenceMediaIds: [referenceMediaId], name: o.name ?? 'Narrator' });
  if (res.statusCode !== 202) throw new Error(`seeding a voice: POST /v1/runs ${res.statusCode} ${res.body}`);
  const jobId = res.json().data.jobId as string;
  await drain(ctx);
  const job = await call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: t.secret, workspaceId: t.workspace.id });
  const data = job.json().data;
  if (data.status !== 'completed') throw new Error(`seeding a voice: the voice.clone job is ${data.status} (${data.errorCode})`);
  return { voiceId: data.output.voice.id as string, jobId, referenceMediaId, reference };
}

/**
 * Workspace voices from the SDK (issue 37; docs/sdk.md "Voices"), against the built server on a
 * real socket: a voice cloned with runs.complete, listed, iterated and read with client.voices,
 * spoken with by speech.generate (`voiceId`), deleted with client.voices.delete (then 404).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, ServiceError } from '../../packages/sdk/src/node.js';
import { sha256, wav } from '../support/media.js';
import { describeEachServer } from '../support/sdk.js';

describeEachServer('voices from the SDK', (get) => {
  test('client.voices: list, iterate, get and delete a voice made by voice.clone; speech.generate speaks with it', async () => {
    const { server, tenant } = get();
    const client = createClient({ baseUrl: server.base, apiKey: tenant.secret, workspaceId: tenant.workspaceId });
    const reference = wav(5000);
    const media = await client.media.upload(reference, { name: 'reference.wav' });
    const cloned = await client.runs.complete('voice.clone', { referenceMediaIds: [media.id], name: 'SDK voice' });
    assert.equal(cloned.status, 'completed', JSON.stringify(cloned));
    const voiceId = cloned.result!.voice.id;

    const page = await client.voices.list({ limit: 10 });
    const voice = page.items.find((v) => v.id === voiceId);
    assert.ok(voice, 'the voice is listed');
    assert.equal(voice.name, 'SDK voice');
    assert.equal(voice.referenceMediaId, media.id);
    assert.equal(voice.referenceSha256, sha256(reference));
    assert.equal(voice.livemode, false, "a test key's voice (support/sdk.ts: describeEachServer's tenant has a test key)");
    const all = [];
    for await (const v of client.voices.iterate({ limit: 1 })) all.push(v.id);
    assert.ok(all.includes(voiceId), 'iterate pages through every voice');
    assert.deepEqual(await client.voices.get(voiceId), voice);

    const spoken = await client.runs.complete('speech.generate', { text: 'Spoken with a cloned voice.', voiceId, format: 'wav' });
    assert.equal(spoken.status, 'completed', JSON.stringify(spoken));
    assert.equal(spoken.result!.voiceId, voiceId);

    assert.deepEqual(await client.voices.delete(voiceId), { id: voiceId, deleted: true });
    await assert.rejects(client.voices.get(voiceId), (err: unknown) => err instanceof ServiceError && err.status === 404 && err.code === 'NOT_FOUND');
    await assert.rejects(client.runs.create('speech.generate', { text: 'again', voiceId }), (err: unknown) => err instanceof ServiceError && err.status === 400 && err.code === 'INVALID_INPUT');
  });
});

/**
 * Run: choose a key of the workspace and one of the operations it may run, fill the form generated
 * from the operation's inputSchema, see the estimate and the maximum cost, then confirm with
 * "Run". The submitted form carries one Idempotency-Key: pressing "Run" again (a double click, a
 * second press after the answer) replays the first run instead of starting another. The job is
 * then followed live and its result shown with previews (job-view.ts). Owners and admins only.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, type ApiKey, type Workspace } from '../api.js';
import { ErrorNotice, PageHeading } from '../components.js';
import { html } from '../html.js';
import { JobView } from '../job-view.js';
import { formatMillicents, newIdempotencyKey, runsApi, usableKeys, type Estimate, type MediaChoice, type Operation, type RunAnswer, type Tool } from '../runs-api.js';
import { mediaApi } from './media-api.js';
import { fieldOfPointer, formFields, FormProblem, initialValues, inputOf, SchemaFields, type FieldValue, type FormValues } from '../schema-form.js';

export function RunPage({ workspace }: { workspace: Workspace | undefined }) {
  const [keys, setKeys] = useState<ApiKey[] | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setKeys(undefined);
    setError(undefined);
    if (!workspace?.canManageKeys) return;
    api.listKeys(workspace.id).then((r) => setKeys(r.items), setError);
  }, [workspace?.id]);

  if (!workspace) return html`<${PageHeading}>Run<//><p>You have no workspace yet.</p>`;
  if (!workspace.canManageKeys) {
    return html`<${PageHeading}>Run<//>
      <p>Your role in <strong>${workspace.name}</strong> is <strong>${workspace.role}</strong>: only owners and admins of a workspace run operations in it. The Jobs page shows what runs.</p>`;
  }
  const usable = keys ? usableKeys(keys, 'tools:run') : undefined;
  return html`<${PageHeading}>Run<//>
    <p>Run an operation in <strong>${workspace.name}</strong>. The run is made with one of the workspace's API keys and is bound by everything that key allows: its operations, budgets, IP ranges and expiry. The job records the origin <code>web</code>.</p>
    <${ErrorNotice} error=${error} />
    ${!usable
      ? error ? null : html`<p aria-live="polite">Loading keys…</p>`
      : usable.length === 0
        ? html`<p class="notice">No key of this workspace may run operations here: a live key needs the scope <code>tools:run</code> and the <code>rest</code> transport (test keys run through the API). Create one on the <a href="/console/keys">Keys</a> page.</p>`
        : html`<${RunForm} key=${workspace.id} workspace=${workspace} keys=${usable} allKeys=${keys!} />`}`;
}

function RunForm({ workspace, keys, allKeys }: { workspace: Workspace; keys: ApiKey[]; allKeys: ApiKey[] }) {
  const [keyId, setKeyId] = useState(keys[0]!.id);
  const [tools, setTools] = useState<Tool[] | undefined>();
  const [media, setMedia] = useState<MediaChoice[]>([]);
  const [operationId, setOperationId] = useState('');
  // What the user typed, for the operation it was typed for (another operation starts from its defaults).
  const [edited, setEdited] = useState<{ operationId: string; values: FormValues } | undefined>();
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [estimate, setEstimate] = useState<{ estimate: Estimate; input: Record<string, unknown>; idempotencyKey: string } | undefined>();
  const [answer, setAnswer] = useState<{ run: RunAnswer; replayed: boolean } | undefined>();
  const [busy, setBusy] = useState(false);
  const [uploading, setUploading] = useState<string | undefined>();
  const busyRef = useRef(false);
  // Bumped by every change of the form: an estimate answered for an older form is not shown.
  const formVersion = useRef(0);

  useEffect(() => {
    setTools(undefined);
    setError(undefined);
    runsApi.tools(workspace.id, keyId).then((r) => setTools(r.items), setError);
  }, [workspace.id, keyId]);
  useEffect(() => {
    runsApi.media(workspace.id).then((r) => setMedia(r.items), () => setMedia([]));
  }, [workspace.id]);

  const operations = useMemo(() => (tools ?? []).flatMap((t) => t.operations.map((op) => ({ tool: t, op }))), [tools]);
  const operation: Operation | undefined = operations.find((o) => o.op.operationId === operationId)?.op;
  const fields = useMemo(() => (operation ? formFields(operation.inputSchema, operation.mediaFields) : []), [operation]);
  const defaults = useMemo(() => initialValues(fields), [fields]);
  const values = edited?.operationId === operationId ? edited.values : defaults;

  useEffect(() => {
    if (operations.length > 0 && !operations.some((o) => o.op.operationId === operationId)) chooseOperation(operations[0]!.op.operationId);
  }, [operations]);

  /** A new form: another operation or key, so no estimate, answer or refusal of the old one. */
  function startOver() {
    formVersion.current++;
    setProblems({});
    setEstimate(undefined);
    setAnswer(undefined);
    setError(undefined);
  }

  function chooseOperation(id: string) {
    setOperationId(id);
    setEdited(undefined);
    startOver();
  }

  function change(name: string, value: FieldValue) {
    formVersion.current++;
    setEdited((e) => ({ operationId, values: { ...(e?.operationId === operationId ? e.values : defaults), [name]: value } }));
    // A changed form is a new form: its estimate and its Idempotency-Key no longer hold.
    setEstimate(undefined);
    setAnswer(undefined);
    if (problems[name]) setProblems((p) => ({ ...p, [name]: '' }));
  }

  /** Uploads a file for a media field, as the Media page does, then chooses it in that field. */
  async function uploadFor(name: string, file: File) {
    setUploading(name);
    setError(undefined);
    try {
      const { media: item } = await mediaApi.upload(workspace.id, file);
      setMedia((list) => [{ id: item.id, name: item.name, mimeType: item.mimeType }, ...list.filter((m) => m.id !== item.id)]);
      const field = fields.find((f) => f.name === name);
      const current = values[name];
      change(name, field?.kind.kind === 'media' && field.kind.multiple ? [...(Array.isArray(current) ? current : []), item.id] : item.id);
    } catch (err) {
      showRefusal(err);
    } finally {
      setUploading(undefined);
    }
  }

  function showRefusal(err: unknown) {
    setError(err);
    const errors = err instanceof ApiError ? (err.details as { errors?: { pointer: string; message: string }[] } | undefined)?.errors : undefined;
    const byField: Record<string, string> = {};
    for (const e of errors ?? []) {
      const f = fieldOfPointer(e.pointer);
      if (f) byField[f] = byField[f] ? `${byField[f]}; ${e.message}` : e.message;
    }
    if (err instanceof FormProblem) byField[err.field] = err.message;
    setProblems(byField);
  }

  async function guarded(what: () => Promise<void>) {
    if (busyRef.current) return;
    busyRef.current = true;
    setBusy(true);
    setError(undefined);
    try {
      await what();
    } catch (err) {
      showRefusal(err);
    } finally {
      busyRef.current = false;
      setBusy(false);
    }
  }

  const estimateNow = (event: Event) => {
    event.preventDefault();
    void guarded(async () => {
      const input = inputOf(fields, values);
      const version = formVersion.current;
      const e = await runsApi.estimate(workspace.id, { keyId, operationId, input });
      if (version !== formVersion.current) return;
      setProblems({});
      setAnswer(undefined);
      setEstimate({ estimate: e, input, idempotencyKey: newIdempotencyKey() });
    });
  };

  const runNow = () =>
    guarded(async () => {
      if (!estimate) return;
      const result = await runsApi.run(workspace.id, { keyId, operationId, input: estimate.input }, estimate.idempotencyKey);
      setAnswer(result);
    });

  const keyLabel = (k: ApiKey) => `${k.prefix}… (${k.operations.length} operations${k.budgets.dailyMillicents || k.budgets.weeklyMillicents || k.budgets.monthlyMillicents ? ', budgets' : ''})`;

  return html`<form class="run-form" onSubmit=${estimateNow} aria-labelledby="run-heading" novalidate>
      <h2 id="run-heading">Operation and input</h2>
      <div class="field">
        <label for="run-key">Run with key</label>
        <select id="run-key" value=${keyId} onChange=${(e: Event) => {
          setKeyId((e.currentTarget as HTMLSelectElement).value);
          startOver();
        }}>
          ${keys.map((k) => html`<option key=${k.id} value=${k.id}>${keyLabel(k)}</option>`)}
        </select>
      </div>
      ${!tools
        ? error ? null : html`<p aria-live="polite">Loading operations…</p>`
        : operations.length === 0
          ? html`<p class="notice">This key may run no operation this service offers; edit its operations on the Keys page.</p>`
          : html`<div class="field">
              <label for="run-operation">Operation</label>
              <select id="run-operation" value=${operationId} onChange=${(e: Event) => chooseOperation((e.currentTarget as HTMLSelectElement).value)}>
                ${(tools ?? []).map((t) => html`<optgroup key=${t.slug} label=${t.name}>${t.operations.map((op) => html`<option key=${op.operationId} value=${op.operationId}>${op.operationId}</option>`)}</optgroup>`)}
              </select>
              ${operation ? html`<span class="hint">${operation.asynchronous ? 'Queued: runs as a job you can follow.' : 'Synchronous: the result comes with the answer.'} ${operation.usagePoints} usage points.</span>` : null}
            </div>`}
      ${operation ? html`<fieldset class="inputs"><legend>Input of ${operation.operationId}</legend>
          <${SchemaFields} fields=${fields} values=${values} media=${media} problems=${problems} onChange=${change} onUpload=${uploadFor} uploading=${uploading} />
        </fieldset>` : null}
      <${ErrorNotice} error=${error} />
      ${operation ? html`<p><button type="submit" disabled=${busy}>Estimate cost</button></p>` : null}
      ${estimate
        ? html`<section class="estimate notice" aria-labelledby="estimate-heading">
            <h3 id="estimate-heading">Before you run</h3>
            <p>Estimated cost: <strong>${formatMillicents(estimate.estimate.estimatedCostMillicents)}</strong>.</p>
            <p>Maximum cost: <strong>${formatMillicents(estimate.estimate.maximumCostMillicents)}</strong> (reserved from the workspace's credits until the job ends; only what it uses is charged).</p>
            <p>Usage points: ${estimate.estimate.usagePoints}.</p>
            <p><button type="button" class="primary" disabled=${busy} onClick=${runNow}>Run</button></p>
          </section>`
        : null}
    </form>
    ${answer
      ? html`<section class="run-answer" aria-live="polite">
          <p>${answer.replayed ? 'This form was already run: the same job is shown again, nothing new was started (Idempotency-Key replay).' : answer.run.kind === 'job' ? `Queued with at most ${formatMillicents(answer.run.maximumCostMillicents)} reserved.` : `Finished: ${answer.run.status}.`}${' '}
            <a href=${`/console/jobs?job=${encodeURIComponent(answer.run.jobId)}`}>Open in Jobs</a></p>
          <${JobView} key=${answer.run.jobId} workspaceId=${workspace.id} jobId=${answer.run.jobId} keys=${allKeys} canManage=${workspace.canManageKeys} focus=${true} />
        </section>`
      : null}`;
}

/**
 * Run: choose a key of the workspace and one of the operations it may run, fill the form generated
 * from the operation's inputSchema, see the estimate and the maximum cost, then confirm with
 * "Run". The submitted form carries one Idempotency-Key: pressing "Run" again (a double click, a
 * second press after the answer) replays the first run instead of starting another. The job is
 * then followed live and its result shown with previews (job-view.ts). Owners and admins only.
 * The shell's test-mode switch chooses the keys: live keys, or (test mode) the workspace's test
 * keys, whose runs are simulated, paid from the test balance and make test jobs.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, type ApiKey, type KeyMode, type Workspace } from '../api.js';
import { ErrorNotice, PageHeading } from '../components.js';
import { html } from '../html.js';
import { JobView } from '../job-view.js';
import { consoleHref } from '../mode.js';
import { formatMillicents, newIdempotencyKey, runsApi, usableKeys, type Estimate, type MediaChoice, type Operation, type RunAnswer, type Tool } from '../runs-api.js';
import { mediaApi } from './media-api.js';
import { fieldOfPointer, formFields, FormProblem, initialValues, inputOf, SchemaFields, type FieldValue, type FormValues } from '../schema-form.js';

export function RunPage({ workspace, mode }: { workspace: Workspace | undefined; mode: KeyMode }) {
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
  const usable = keys ? usableKeys(keys, 'tools:run', mode) : undefined;
  const keysLink = html`<a href=${consoleHref('/console/keys', mode)}>Keys</a>`;
  return html`<${PageHeading}>Run<//>
    <p>Run an operation in <strong>${workspace.name}</strong>. The run is made with one of the workspace's API keys and is bound by everything that key allows: its operations, budgets, IP ranges and expiry. The job records the origin <code>web</code>.</p>
    ${mode === 'test'
      ? html`<p class="notice test-mode" id="run-mode-note"><span class="badge test">Test</span> Test mode: runs use the workspace's test keys, are simulated (no provider is called) and are paid from the test balance, never from live credits. Their jobs are test jobs, shown on the Jobs page in test mode.</p>`
      : null}
    <${ErrorNotice} error=${error} />
    ${!usable
      ? error ? null : html`<p aria-live="polite">Loading keys…</p>`
      : usable.length === 0
        ? mode === 'test'
          ? html`<p class="notice">No test key of this workspace may run operations here: a test key (secret <code>wask_test_…</code>) needs the scope <code>tools:run</code> and the <code>rest</code> transport. Create one on the ${keysLink} page (Mode: Test).</p>`
          : html`<p class="notice">No live key of this workspace may run operations here: a live key needs the scope <code>tools:run</code> and the <code>rest</code> transport. Create one on the ${keysLink} page, or turn test mode on to run with a test key for free.</p>`
        : html`<${RunForm} key=${`${workspace.id}:${mode}`} workspace=${workspace} mode=${mode} keys=${usable} allKeys=${keys!} />`}`;
}

/** The operations a key may run (its tools) and the workspace's media to choose from. */
function useRunChoices(workspaceId: string, mode: KeyMode, keyId: string, setError: (e: unknown) => void) {
  const [tools, setTools] = useState<Tool[] | undefined>();
  const [media, setMedia] = useState<MediaChoice[]>([]);
  useEffect(() => {
    setTools(undefined);
    setError(undefined);
    runsApi.tools(workspaceId, keyId, mode).then((r) => setTools(r.items), setError);
  }, [workspaceId, mode, keyId]);
  useEffect(() => {
    runsApi.media(workspaceId, mode).then((r) => setMedia(r.items), () => setMedia([]));
  }, [workspaceId, mode]);
  const operations = useMemo(() => (tools ?? []).flatMap((t) => t.operations), [tools]);
  return { tools, media, setMedia, operations };
}

type EstimateState = { estimate: Estimate; input: Record<string, unknown>; idempotencyKey: string };

/**
 * The form of one operation: what the user typed (for the operation it was typed for; another
 * operation starts from its defaults), its problems, estimate and answer. Every change makes a
 * new form: the estimate and its Idempotency-Key of the old one no longer hold.
 */
function useOperationForm(operations: Operation[], setError: (e: unknown) => void) {
  const [operationId, setOperationId] = useState('');
  const [edited, setEdited] = useState<{ operationId: string; values: FormValues } | undefined>();
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [estimate, setEstimate] = useState<EstimateState | undefined>();
  const [answer, setAnswer] = useState<{ run: RunAnswer; replayed: boolean } | undefined>();
  // Bumped by every change of the form: an estimate answered for an older form is not shown.
  const formVersion = useRef(0);
  const operation = operations.find((op) => op.operationId === operationId);
  const fields = useMemo(() => (operation ? formFields(operation.inputSchema, operation.mediaFields) : []), [operation]);
  const defaults = useMemo(() => initialValues(fields), [fields]);
  const values = edited?.operationId === operationId ? edited.values : defaults;

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
    setEstimate(undefined);
    setAnswer(undefined);
    if (problems[name]) setProblems((p) => ({ ...p, [name]: '' }));
  }
  useEffect(() => {
    if (operations.length > 0 && !operations.some((op) => op.operationId === operationId)) chooseOperation(operations[0]!.operationId);
  }, [operations]);
  return { operationId, operation, fields, values, problems, setProblems, estimate, setEstimate, answer, setAnswer, formVersion, startOver, chooseOperation, change };
}

const keyLabel = (k: ApiKey) => `${k.prefix}… (${k.operations.length} operations${k.budgets.dailyMillicents || k.budgets.weeklyMillicents || k.budgets.monthlyMillicents ? ', budgets' : ''})`;

function RunForm({ workspace, mode, keys, allKeys }: { workspace: Workspace; mode: KeyMode; keys: ApiKey[]; allKeys: ApiKey[] }) {
  const [keyId, setKeyId] = useState(keys[0]!.id);
  const [error, setError] = useState<unknown>();
  const [uploading, setUploading] = useState<string | undefined>();
  const { tools, media, setMedia, operations } = useRunChoices(workspace.id, mode, keyId, setError);
  const form = useOperationForm(operations, setError);
  const { operationId, operation, fields, values, estimate } = form;
  function showRefusal(err: unknown) {
    setError(err);
    form.setProblems(problemsOf(err));
  }
  const { busy, guarded } = useGuarded(setError, showRefusal);

  /** Uploads a file for a media field, as the Media page does, then chooses it in that field. */
  async function uploadFor(name: string, file: File) {
    setUploading(name);
    setError(undefined);
    try {
      const { media: item } = await mediaApi.upload(workspace.id, file, mode);
      setMedia((list) => [{ id: item.id, name: item.name, mimeType: item.mimeType }, ...list.filter((m) => m.id !== item.id)]);
      const field = fields.find((f) => f.name === name);
      const current = values[name];
      form.change(name, field?.kind.kind === 'media' && field.kind.multiple ? [...(Array.isArray(current) ? current : []), item.id] : item.id);
    } catch (err) {
      showRefusal(err);
    } finally {
      setUploading(undefined);
    }
  }
  const estimateNow = (event: Event) => {
    event.preventDefault();
    void guarded(async () => {
      const input = inputOf(fields, values);
      const version = form.formVersion.current;
      const e = await runsApi.estimate(workspace.id, { keyId, mode, operationId, input });
      if (version !== form.formVersion.current) return;
      form.setProblems({});
      form.setAnswer(undefined);
      form.setEstimate({ estimate: e, input, idempotencyKey: newIdempotencyKey() });
    });
  };
  const runNow = () =>
    guarded(async () => {
      if (estimate) form.setAnswer(await runsApi.run(workspace.id, { keyId, mode, operationId, input: estimate.input }, estimate.idempotencyKey));
    });

  return html`<form class="run-form" onSubmit=${estimateNow} aria-labelledby="run-heading" novalidate>
      <h2 id="run-heading">Operation and input</h2>
      <div class="field">
        <label for="run-key">Run with ${mode === 'test' ? 'test key' : 'key'}</label>
        <select id="run-key" value=${keyId} onChange=${(e: Event) => {
          setKeyId((e.currentTarget as HTMLSelectElement).value);
          form.startOver();
        }}>
          ${keys.map((k) => html`<option key=${k.id} value=${k.id}>${keyLabel(k)}</option>`)}
        </select>
      </div>
      <${OperationField} tools=${tools} failed=${!!error} operationId=${operationId} operation=${operation} onChoose=${form.chooseOperation} />
      ${operation ? html`<fieldset class="inputs"><legend>Input of ${operation.operationId}</legend>
          <${SchemaFields} fields=${fields} values=${values} media=${media} problems=${form.problems} onChange=${form.change} onUpload=${uploadFor} uploading=${uploading} />
        </fieldset>` : null}
      <${ErrorNotice} error=${error} />
      ${operation ? html`<p><button type="submit" disabled=${busy}>Estimate cost</button></p>` : null}
      ${estimate ? html`<${EstimatePanel} estimate=${estimate.estimate} mode=${mode} busy=${busy} onRun=${runNow} />` : null}
    </form>
    ${form.answer ? html`<${RunAnswerPanel} answer=${form.answer} workspace=${workspace} mode=${mode} allKeys=${allKeys} />` : null}`;
}

/** The refusal's messages by form field: the API's JSON pointers, or the form's own problem. */
function problemsOf(err: unknown): Record<string, string> {
  const errors = err instanceof ApiError ? (err.details as { errors?: { pointer: string; message: string }[] } | undefined)?.errors : undefined;
  const byField: Record<string, string> = {};
  for (const e of errors ?? []) {
    const f = fieldOfPointer(e.pointer);
    if (f) byField[f] = byField[f] ? `${byField[f]}; ${e.message}` : e.message;
  }
  if (err instanceof FormProblem) byField[err.field] = err.message;
  return byField;
}

/** One request at a time: `guarded(what)` runs `what` unless one runs already; its failure is shown by `refused`. */
function useGuarded(setError: (e: unknown) => void, refused: (err: unknown) => void) {
  const [busy, setBusy] = useState(false);
  const busyRef = useRef(false);
  async function guarded(what: () => Promise<void>) {
    if (busyRef.current) return;
    busyRef.current = true;
    setBusy(true);
    setError(undefined);
    try {
      await what();
    } catch (err) {
      refused(err);
    } finally {
      busyRef.current = false;
      setBusy(false);
    }
  }
  return { busy, guarded };
}

function OperationField({ tools, failed, operationId, operation, onChoose }: { tools: Tool[] | undefined; failed: boolean; operationId: string; operation: Operation | undefined; onChoose: (id: string) => void }) {
  if (!tools) return failed ? null : html`<p aria-live="polite">Loading operations…</p>`;
  if (!tools.some((t) => t.operations.length > 0)) return html`<p class="notice">This key may run no operation this service offers; edit its operations on the Keys page.</p>`;
  return html`<div class="field">
    <label for="run-operation">Operation</label>
    <select id="run-operation" value=${operationId} onChange=${(e: Event) => onChoose((e.currentTarget as HTMLSelectElement).value)}>
      ${tools.map((t) => html`<optgroup key=${t.slug} label=${t.name}>${t.operations.map((op) => html`<option key=${op.operationId} value=${op.operationId}>${op.operationId}</option>`)}</optgroup>`)}
    </select>
    ${operation ? html`<span class="hint">${operation.asynchronous ? 'Queued: runs as a job you can follow.' : 'Synchronous: the result comes with the answer.'} ${operation.usagePoints} usage points.</span>` : null}
  </div>`;
}

function EstimatePanel({ estimate, mode, busy, onRun }: { estimate: Estimate; mode: KeyMode; busy: boolean; onRun: () => void }) {
  return html`<section class="estimate notice" aria-labelledby="estimate-heading">
    <h3 id="estimate-heading">Before you run</h3>
    <p>Estimated cost: <strong>${formatMillicents(estimate.estimatedCostMillicents)}</strong>.</p>
    <p>Maximum cost: <strong>${formatMillicents(estimate.maximumCostMillicents)}</strong> (reserved from the workspace's ${mode === 'test' ? 'test balance' : 'credits'} until the job ends; only what it uses is charged).</p>
    ${mode === 'test' ? html`<p><strong>Test mode:</strong> simulated work, paid from the test balance; live credits are not touched.</p>` : null}
    <p>Usage points: ${estimate.usagePoints}.</p>
    <p><button type="button" class="primary" disabled=${busy} onClick=${onRun}>Run</button></p>
  </section>`;
}

function RunAnswerPanel({ answer, workspace, mode, allKeys }: { answer: { run: RunAnswer; replayed: boolean }; workspace: Workspace; mode: KeyMode; allKeys: ApiKey[] }) {
  const { run, replayed } = answer;
  return html`<section class="run-answer" aria-live="polite">
    <p>${replayed ? 'This form was already run: the same job is shown again, nothing new was started (Idempotency-Key replay).' : run.kind === 'job' ? `Queued with at most ${formatMillicents(run.maximumCostMillicents)} reserved.` : `Finished: ${run.status}.`}${' '}
      <a href=${consoleHref('/console/jobs', mode, { job: run.jobId })}>Open in Jobs</a></p>
    <${JobView} key=${run.jobId} workspaceId=${workspace.id} mode=${mode} jobId=${run.jobId} keys=${allKeys} canManage=${workspace.canManageKeys} focus=${true} />
  </section>`;
}

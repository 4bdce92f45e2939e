/**
 * A form generated from an operation's inputSchema (as GET /v1/tools serves it): strings (a
 * textarea for long ones, a URL field for `format: uri`), numbers and integers with their bounds,
 * booleans, enums, arrays of simple values (checkboxes for an enum, one value per line otherwise),
 * and media fields as a choice among the workspace's media of the accepted kinds. A property of
 * any other shape (an array of objects, an object) is edited as JSON. The service checks the
 * input (400 INVALID_INPUT with JSON pointers); the pointers it names are shown at their fields.
 */
import { html } from './html.js';
import type { JsonSchema, MediaChoice, MediaField } from './runs-api.js';

export type FieldValue = string | boolean | string[];
export type FormValues = Record<string, FieldValue>;

type Kind =
  | { kind: 'media'; multiple: boolean; accept: string[] }
  | { kind: 'enum'; options: string[] }
  | { kind: 'enum-list'; options: string[] }
  | { kind: 'boolean' }
  | { kind: 'number'; integer: boolean }
  | { kind: 'text'; long: boolean; url: boolean }
  | { kind: 'list'; item: 'string' | 'number' | 'integer' }
  | { kind: 'json' };

const typeOf = (s: JsonSchema | undefined): string | undefined => (Array.isArray(s?.type) ? s!.type.find((t) => t !== 'null') : s?.type);
const isEnum = (s: JsonSchema | undefined) => Array.isArray(s?.enum) && s!.enum.every((v) => typeof v === 'string');

/** What MIME types a media kind covers. */
const MIME_PREFIXES: Record<string, string[]> = { image: ['image/'], audio: ['audio/'], video: ['video/'], model: ['model/'] };

function kindOf(name: string, schema: JsonSchema, mediaFields: MediaField[]): Kind {
  const media = mediaFields.find((m) => m.field === name && m.within === undefined);
  if (media) return { kind: 'media', multiple: media.multiple, accept: media.kinds.flatMap((k) => MIME_PREFIXES[k] ?? []) };
  const type = typeOf(schema);
  if (isEnum(schema)) return { kind: 'enum', options: schema.enum as string[] };
  if (type === 'boolean') return { kind: 'boolean' };
  if (type === 'integer' || type === 'number') return { kind: 'number', integer: type === 'integer' };
  if (type === 'string') return { kind: 'text', long: (schema.maxLength ?? 0) > 200, url: schema.format === 'uri' };
  if (type === 'array') {
    const item = schema.items;
    if (isEnum(item)) return { kind: 'enum-list', options: item!.enum as string[] };
    const t = typeOf(item);
    if (t === 'string' || t === 'number' || t === 'integer') return { kind: 'list', item: t };
  }
  return { kind: 'json' };
}

export interface FormField {
  name: string;
  schema: JsonSchema;
  required: boolean;
  kind: Kind;
}

export function formFields(schema: JsonSchema, mediaFields: MediaField[]): FormField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, s]) => ({ name, schema: s, required: required.has(name), kind: kindOf(name, s, mediaFields) }));
}

/** The form's starting values: each field's default, else empty. */
export function initialValues(fields: FormField[]): FormValues {
  const values: FormValues = {};
  for (const f of fields) {
    const d = f.schema.default;
    switch (f.kind.kind) {
      case 'boolean':
        values[f.name] = d === true;
        break;
      case 'enum-list':
        values[f.name] = Array.isArray(d) ? d.map(String) : [];
        break;
      case 'media':
        values[f.name] = f.kind.multiple ? [] : '';
        break;
      case 'list':
        values[f.name] = Array.isArray(d) ? d.join('\n') : '';
        break;
      case 'json':
        values[f.name] = d === undefined ? '' : JSON.stringify(d, null, 2);
        break;
      default:
        values[f.name] = d === undefined || d === null ? '' : String(d);
    }
  }
  return values;
}

/** A value the form cannot turn into input (a JSON field that does not parse): shown at its field. */
export class FormProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The operation input the form holds: empty optional fields are left out (the schema's defaults apply). */
export function inputOf(fields: FormField[], values: FormValues): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    switch (f.kind.kind) {
      case 'boolean':
        if (v === true || f.required || f.schema.default !== undefined) input[f.name] = v === true;
        break;
      case 'enum-list':
      case 'media':
        if (Array.isArray(v)) {
          if (v.length > 0 || f.required) input[f.name] = v;
        } else if (v !== '') input[f.name] = v;
        break;
      case 'number': {
        const s = String(v).trim();
        if (s !== '') input[f.name] = Number(s);
        break;
      }
      case 'list': {
        const items = String(v).split('\n').map((x) => x.trim()).filter(Boolean);
        if (items.length > 0 || f.required) input[f.name] = f.kind.item === 'string' ? items : items.map(Number);
        break;
      }
      case 'json': {
        const s = String(v).trim();
        if (s === '') break;
        try {
          input[f.name] = JSON.parse(s);
        } catch {
          throw new FormProblem(f.name, `${f.name}: not valid JSON.`);
        }
        break;
      }
      default:
        if (v !== '') input[f.name] = v;
    }
  }
  return input;
}

/** The field a JSON pointer of a refusal names (`/input/width` → width). */
export function fieldOfPointer(pointer: string): string | undefined {
  const m = /^\/input\/([^/]+)/.exec(pointer);
  return m ? m[1]!.replaceAll('~1', '/').replaceAll('~0', '~') : undefined;
}

function hint(f: FormField): string {
  const s = f.schema;
  const parts: string[] = [];
  if (s.description) parts.push(s.description.replace(/\.$/, ''));
  if (s.minimum !== undefined || s.maximum !== undefined) parts.push(`from ${s.minimum ?? '…'} to ${s.maximum ?? '…'}`);
  if (s.maxLength !== undefined) parts.push(`up to ${s.maxLength} characters`);
  if (f.kind.kind === 'list') parts.push('one value per line');
  if (f.kind.kind === 'json') parts.push('as JSON');
  if (f.kind.kind === 'media') parts.push(f.kind.multiple ? 'workspace media; choose any number (Ctrl or Shift to add)' : 'workspace media');
  if (s.default !== undefined && f.kind.kind !== 'boolean') parts.push(`default ${JSON.stringify(s.default)}`);
  return parts.join('; ');
}

export interface SchemaFormProps {
  fields: FormField[];
  values: FormValues;
  media: MediaChoice[];
  /** Problems by field name (from INVALID_INPUT pointers or the form itself). */
  problems: Record<string, string>;
  onChange: (name: string, value: FieldValue) => void;
  /** Uploads a file for a media field (then chosen in it); absent: media fields only choose. */
  onUpload?: (name: string, file: File) => void;
  /** The media field whose upload is in progress. */
  uploading?: string | undefined;
}

/** The fields of the form, each labelled, with its hint and any problem tied by aria-describedby. */
export function SchemaFields({ fields, values, media, problems, onChange, onUpload, uploading }: SchemaFormProps) {
  return fields.map((f) => {
    const id = `input-${f.name}`;
    const hintId = `${id}-hint`;
    const problemId = `${id}-problem`;
    const described = [hint(f) ? hintId : '', problems[f.name] ? problemId : ''].filter(Boolean).join(' ') || undefined;
    const value = values[f.name];
    const common = { id, name: f.name, 'aria-describedby': described, 'aria-invalid': problems[f.name] ? 'true' : undefined, required: f.required && f.kind.kind !== 'boolean' };
    const text = (e: Event) => onChange(f.name, (e.currentTarget as HTMLInputElement).value);
    let control: unknown;
    const k = f.kind;
    switch (k.kind) {
      case 'boolean':
        control = html`<input type="checkbox" ...${common} required=${false} checked=${value === true} onChange=${(e: Event) => onChange(f.name, (e.currentTarget as HTMLInputElement).checked)} />`;
        break;
      case 'enum':
        control = html`<select ...${common} value=${value} onChange=${text}>
          ${f.required && f.schema.default !== undefined ? null : html`<option value="">${f.required ? 'Choose…' : '(not set)'}</option>`}
          ${k.options.map((o) => html`<option key=${o} value=${o}>${o}</option>`)}
        </select>`;
        break;
      case 'enum-list':
        control = html`<fieldset class="choices" aria-describedby=${described}>
          <legend>${f.name}${f.required ? ' (required)' : ''}</legend>
          ${k.options.map((o) => {
            const list = Array.isArray(value) ? value : [];
            return html`<label key=${o} class="check"><input type="checkbox" name=${f.name} value=${o} checked=${list.includes(o)} onChange=${(e: Event) => {
              const on = (e.currentTarget as HTMLInputElement).checked;
              onChange(f.name, on ? [...list, o] : list.filter((x) => x !== o));
            }} /> ${o}</label>`;
          })}
        </fieldset>`;
        break;
      case 'media':
        control = mediaControl(f, k, { common, described, value, media, onChange, onUpload, uploading });
        break;
      case 'number':
        control = html`<input type="number" ...${common} value=${value} min=${f.schema.minimum} max=${f.schema.maximum} step=${k.integer ? 1 : 'any'} onInput=${text} />`;
        break;
      case 'text':
        control = k.long
          ? html`<textarea ...${common} rows="4" cols="60" maxlength=${f.schema.maxLength} value=${value} onInput=${text}></textarea>`
          : html`<input type=${k.url ? 'url' : 'text'} ...${common} size="50" maxlength=${f.schema.maxLength} value=${value} onInput=${text} />`;
        break;
      case 'list':
        control = html`<textarea ...${common} rows="3" cols="50" value=${value} onInput=${text}></textarea>`;
        break;
      default:
        control = html`<textarea ...${common} class="json" rows="6" cols="60" spellcheck=${false} value=${value} onInput=${text}></textarea>`;
    }
    const labelText = html`${f.name}${f.required ? html` <span class="required">(required)</span>` : null}`;
    return html`<div class="field" key=${f.name}>
      ${k.kind === 'enum-list' ? null : html`<label for=${id}>${labelText}</label>`}
      ${control}
      ${hint(f) ? html`<span class="hint" id=${hintId}>${hint(f)}</span>` : null}
      ${problems[f.name] ? html`<span class="problem" id=${problemId}>${problems[f.name]}</span>` : null}
    </div>`;
  });
}

type MediaKind = Extract<FormField['kind'], { kind: 'media' }>;

/** A media field: a choice among the workspace's media of an accepted kind, and (with onUpload) a file to upload into it. */
function mediaControl(
  f: FormField,
  k: MediaKind,
  p: { common: Record<string, unknown>; described: string | undefined; value: FieldValue | undefined; media: MediaChoice[]; onChange: SchemaFormProps['onChange']; onUpload: SchemaFormProps['onUpload']; uploading: string | undefined },
): unknown {
  const { common, described, value, onChange, onUpload, uploading } = p;
  const choices = p.media.filter((m) => k.accept.length === 0 || k.accept.some((prefix) => m.mimeType.startsWith(prefix)));
  const text = (e: Event) => onChange(f.name, (e.currentTarget as HTMLInputElement).value);
  const control = k.multiple && choices.length === 0
    ? html`<select ...${common} multiple size="2" disabled></select> <span class="hint">No media of this kind in the workspace yet: upload some on the Media page.</span>`
    : k.multiple
    ? html`<select ...${common} multiple size=${Math.min(6, Math.max(2, choices.length))} onChange=${(e: Event) => onChange(f.name, [...(e.currentTarget as HTMLSelectElement).selectedOptions].map((o) => o.value))}>
        ${choices.map((m) => html`<option key=${m.id} value=${m.id} selected=${Array.isArray(value) && value.includes(m.id)}>${m.name} (${m.mimeType})</option>`)}
      </select>`
    : html`<select ...${common} value=${value} onChange=${text}>
        <option value="">${choices.length ? 'Choose media…' : 'No media of this kind: upload some on the Media page'}</option>
        ${choices.map((m) => html`<option key=${m.id} value=${m.id}>${m.name} (${m.mimeType})</option>`)}
      </select>`;
  if (!onUpload) return control;
  // Or upload a file here: it is stored as workspace media (the API's checks) and chosen.
  const accept = k.accept.map((prefix) => (prefix.endsWith('/') ? `${prefix}*` : prefix)).join(',');
  return html`${control}
    <label class="upload-inline">or upload a file
      <input type="file" name=${`${f.name}-upload`} accept=${accept} disabled=${uploading === f.name} aria-describedby=${described} onChange=${(e: Event) => {
        const input = e.currentTarget as HTMLInputElement;
        const file = input.files?.[0];
        if (file) onUpload(f.name, file);
        input.value = '';
      }} />
    </label>
    ${uploading === f.name ? html`<span class="hint" aria-live="polite">Uploading…</span>` : null}`;
}

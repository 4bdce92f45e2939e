/**
 * The outside programs local engines run (ffmpeg and ffprobe, espeak-ng), found once at start-up:
 * on PATH or at FFMPEG_PATH / FFPROBE_PATH / ESPEAK_NG_PATH, each asked for its version (a program
 * that does not answer is missing). A providers file that maps an operation to an engine whose
 * program is missing stops start-up (exit 78) naming the Debian package to install (local/index.ts).
 *
 * Programs run as separate processes with argument arrays, never through a shell (they are GPL;
 * the service only talks to them over pipes and files).
 */
import { spawn } from 'node:child_process';

export interface ProgramInfo {
  path: string;
  /** The first line the program printed of its version. */
  version: string;
}

export interface EspeakVoice {
  /** The name `-v` takes (the voice file, e.g. `gmw/en-US`, or the language, e.g. `en-us`). */
  name: string;
  language: string;
  description: string;
}

export interface LocalEngines {
  ffmpeg?: ProgramInfo;
  ffprobe?: ProgramInfo;
  espeak?: ProgramInfo & { voices: EspeakVoice[] };
}

export interface EnginePaths {
  ffmpegPath?: string | undefined;
  ffprobePath?: string | undefined;
  espeakPath?: string | undefined;
}

const PROBE_TIMEOUT_MS = 10_000;

/** Runs `path args…` and resolves with its stdout, or undefined when it cannot run or fails. */
export function runForOutput(path: string, args: string[], timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  return new Promise((resolve) => {
    let out = '';
    let child;
    try {
      child = spawn(path, args, { stdio: ['ignore', 'pipe', 'ignore'], timeout: timeoutMs });
    } catch {
      resolve(undefined);
      return;
    }
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      if (out.length < 1_000_000) out += c;
    });
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? out : undefined));
  });
}

async function probe(path: string, args: string[]): Promise<ProgramInfo | undefined> {
  const out = await runForOutput(path, args);
  if (out === undefined) return undefined;
  return { path, version: (out.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 200) };
}

/** Parses `espeak-ng --voices` (columns: Pty Language Age/Gender VoiceName File Other). */
export function parseEspeakVoices(listing: string): EspeakVoice[] {
  const voices: EspeakVoice[] = [];
  const seen = new Set<string>();
  for (const line of listing.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 5) continue;
    const [, language, , description, file] = cols as [string, string, string, string, string];
    if (!/^[a-z0-9_-]+(\/[A-Za-z0-9_-]+)?$/i.test(language) || seen.has(language)) continue;
    seen.add(language);
    voices.push({ name: language, language, description: `${description.replace(/_/g, ' ')} (${file})` });
  }
  return voices;
}

/** Finds and asks every program; engines whose programs are missing are left out. */
export async function probeEngines(paths: EnginePaths): Promise<LocalEngines> {
  const [ffmpeg, ffprobe, espeak] = await Promise.all([
    probe(paths.ffmpegPath ?? 'ffmpeg', ['-hide_banner', '-version']),
    probe(paths.ffprobePath ?? 'ffprobe', ['-hide_banner', '-version']),
    probe(paths.espeakPath ?? 'espeak-ng', ['--version']),
  ]);
  const engines: LocalEngines = {};
  if (ffmpeg) engines.ffmpeg = ffmpeg;
  if (ffprobe) engines.ffprobe = ffprobe;
  if (espeak) {
    const listing = await runForOutput(espeak.path, ['--voices']);
    engines.espeak = { ...espeak, voices: listing ? parseEspeakVoices(listing) : [] };
  }
  return engines;
}

/**
 * Characters that change how text looks but not what it does (Trojan Source,
 * CVE-2021-42574; ASCII smuggling), shown as `⟨U+202E⟩` markers: bidi controls, zero-width
 * and other format characters, Unicode tag characters, controls (but \n, \t and a CRLF's CR).
 * The same rules as nb_tools/transcript/_visible.py (the goldens check both show the same).
 */

import { SHOWN_DEPTH } from './transcript.generated';

type HiddenKind = 'direction' | 'invisible' | 'tag' | 'control';

const BIDI = new Set([0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);
const EXTRA_INVISIBLE = new Set([
  0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180b, 0x180c, 0x180d, 0x180f, 0x3164, 0xffa0, 0x13439, 0x1343a, 0x1343b,
  0x1343c, 0x1343d, 0x1343e, 0x1343f
]);
const CONTROL = /^\p{Cc}$/u;
const INVISIBLE = /^[\p{Cf}\p{Cs}\p{Zl}\p{Zp}]$/u;
/** Names for the tooltip (the Python side names every character from unicodedata). */
const NAMES: { [cp: number]: string } = {
  0x00: 'NULL',
  0x07: 'BELL',
  0x08: 'BACKSPACE',
  0x0b: 'LINE TABULATION',
  0x0c: 'FORM FEED',
  0x0d: 'CARRIAGE RETURN',
  0x1b: 'ESCAPE (starts an ANSI escape)',
  0x7f: 'DELETE',
  0x85: 'NEXT LINE',
  0x9b: 'CONTROL SEQUENCE INTRODUCER',
  0x00ad: 'SOFT HYPHEN',
  0x061c: 'ARABIC LETTER MARK',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE'
};
const KIND_WORDS: [HiddenKind, string][] = [
  ['direction', 'direction-changing'],
  ['invisible', 'invisible'],
  ['tag', 'hidden-ASCII tag'],
  ['control', 'control']
];

function isVs(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

function hex(cp: number): string {
  return 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
}

/** The kind of hidden character at chars[i] (code points), or null (Python: hidden_kind). */
function hiddenKind(chars: string[], i: number): HiddenKind | null {
  const ch = chars[i];
  const cp = ch.codePointAt(0) ?? 0;
  if ((cp >= 0x20 && cp < 0x7f) || ch === '\n' || ch === '\t') {
    return null;
  }
  if (BIDI.has(cp)) {
    return 'direction';
  }
  if (cp >= 0xe0000 && cp <= 0xe007f) {
    return 'tag';
  }
  if (CONTROL.test(ch)) {
    return ch === '\r' && chars[i + 1] === '\n' ? null : 'control';
  }
  if (INVISIBLE.test(ch) || EXTRA_INVISIBLE.has(cp) || (cp >= 0xe0100 && cp <= 0xe01ef)) {
    return 'invisible';
  }
  if (cp >= 0xfe00 && cp <= 0xfe0f && i > 0 && isVs(chars[i - 1].codePointAt(0) ?? 0)) {
    return 'invisible';
  }
  return null;
}

interface IRun {
  start: number;
  end: number;
  kind: HiddenKind;
  label: string;
  title: string;
}

function makeRun(chars: string[], start: number, end: number, kind: HiddenKind): IRun {
  const piece = chars.slice(start, end);
  const cp = piece[0].codePointAt(0) ?? 0;
  if (kind === 'tag') {
    const shown = piece
      .map(c => {
        const t = c.codePointAt(0) ?? 0;
        return t >= 0xe0020 && t <= 0xe007e ? String.fromCodePoint(t - 0xe0000) : '·';
      })
      .join('');
    return { start, end, kind, label: `tags "${shown}"`, title: `${piece.length} Unicode tag character(s): invisible ASCII` };
  }
  if (isVs(cp) && piece.length > 1) {
    return { start, end, kind, label: `variation selectors ×${piece.length}`, title: 'hidden data' };
  }
  const name = `${hex(cp)} ${NAMES[cp] ?? (kind === 'control' ? 'control character' : 'invisible character')}`;
  if (piece.length > 1) {
    return { start, end, kind, label: `${hex(cp)}×${piece.length}`, title: `${piece.length} × ${name}` };
  }
  return { start, end, kind, label: hex(cp), title: name };
}

/** The hidden characters of chars as markers (Python: hidden_runs). */
function hiddenRuns(chars: string[]): IRun[] {
  const runs: IRun[] = [];
  let i = 0;
  while (i < chars.length) {
    const kind = hiddenKind(chars, i);
    if (kind === null) {
      i += 1;
      continue;
    }
    const cp = chars[i].codePointAt(0) ?? 0;
    let j = i + 1;
    while (j < chars.length && hiddenKind(chars, j) === kind) {
      const next = chars[j].codePointAt(0) ?? 0;
      if (!(kind === 'tag' || next === cp || (kind === 'invisible' && isVs(cp) && isVs(next)))) {
        break;
      }
      j += 1;
    }
    runs.push(makeRun(chars, i, j, kind));
    i = j;
  }
  return runs;
}

/** The code points (not surrogates) marked when alone between two letters (the parity test). */
export function hiddenCodePoints(): number[] {
  const out: number[] = [];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp < 0xd800 || cp > 0xdfff) {
      if (hiddenKind(['a', String.fromCodePoint(cp), 'b'], 1) !== null) {
        out.push(cp);
      }
    }
  }
  return out;
}

/** Append text to parent, each hidden character (run) as a marker span. */
export function appendVisible(parent: HTMLElement, text: string): HTMLElement {
  const chars = Array.from(text);
  let pos = 0;
  for (const run of hiddenRuns(chars)) {
    if (run.start > pos) {
      parent.appendChild(document.createTextNode(chars.slice(pos, run.start).join('')));
    }
    const marker = document.createElement('span');
    marker.className = 'jp-nbtools-hidden';
    marker.dataset.hidden = run.kind;
    marker.title = run.title;
    marker.textContent = `⟨${run.label}⟩`;
    parent.appendChild(marker);
    pos = run.end;
  }
  if (pos < chars.length) {
    parent.appendChild(document.createTextNode(chars.slice(pos).join('')));
  }
  return parent;
}

function countHidden(text: string, into: Map<HiddenKind, number>): void {
  const chars = Array.from(text);
  for (const run of hiddenRuns(chars)) {
    into.set(run.kind, (into.get(run.kind) ?? 0) + run.end - run.start);
  }
}

function strings(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    out.push(value);
  } else if (Array.isArray(value)) {
    value.forEach(v => strings(v, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value as { [key: string]: unknown })) {
      out.push(key);
      strings(v, out);
    }
  }
}

/**
 * A call's argument text parsed for display, or undefined (not JSON, or nested deeper
 * than SHOWN_DEPTH, which JSON.stringify and the renderers' recursion could not take):
 * the one parse every view of a call's arguments uses (Python: shown_arguments).
 */
export function shownArguments(raw: string): unknown {
  if (typeof raw !== 'string' || depthOver(raw, SHOWN_DEPTH)) {
    return undefined;
  }
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function depthOver(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (ch === '\\') {
        escaped = true;
      } else if (ch === '"') {
        inString = false;
      }
    } else if (ch === '"') {
      inString = true;
    } else if (ch === '[' || ch === '{') {
      if (++depth > limit) {
        return true;
      }
    } else if (ch === ']' || ch === '}') {
      depth--;
    }
  }
  return false;
}

/**
 * The transcript's line on a call whose arguments hold hidden characters, counted in the
 * JSON's keys and strings ("" when there are none; Python: transcript_warning).
 */
export function argumentsWarning(raw: string): string {
  const value = shownArguments(raw);
  const parsed: unknown = value === undefined ? raw : value;
  const all: string[] = [];
  strings(parsed, all);
  const found = new Map<HiddenKind, number>();
  all.forEach(s => countHidden(s, found));
  let total = 0;
  found.forEach(n => (total += n));
  if (total === 0) {
    return '';
  }
  const kinds = KIND_WORDS.filter(([k]) => found.get(k))
    .map(([k, word]) => `${found.get(k)} ${word}`)
    .join(', ');
  const noun = total === 1 ? 'character' : 'characters';
  return `⚠ The arguments contain ${total} invisible or direction-changing ${noun} (${kinds}), shown as ⟨U+…⟩.`;
}

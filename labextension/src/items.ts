/**
 * The pieces of a transcript that need no Markdown: small DOM helpers, the tool card's
 * arguments and images, and the Messages API items (server tools, citations, compaction,
 * notices). The Python fallback (nb_tools/transcript/_html*.py) shows the same; the
 * golden tests (tests/fixtures/transcripts/) check it. `data-nbt` attributes mark what
 * the goldens compare.
 */
import { appendVisible, argumentsWarning, shownArguments } from './visible';
import type {
  CitationsItem,
  CompactionItem,
  NoticeItem,
  Part,
  ServerToolItem,
  ToolHeadline
} from './transcript.generated';

/** document.createElement with a class, an optional golden field and text (textContent). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls: string,
  text?: string,
  field?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (field) {
    node.dataset.nbt = field;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** The images a card shows: raster types a browser draws without running anything. */
export const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/=\s]+$/;

/** Whether a card shows this image: a whitelisted type and base64 data (Python: is_shown_image). */
export function isShownImage(mediaType: unknown, data: unknown): data is string {
  return (
    typeof mediaType === 'string' && IMAGE_TYPES.test(mediaType) && typeof data === 'string' && BASE64.test(data)
  );
}

export function image(mediaType: string, data: string, cls: string, field: string, alt: string): HTMLImageElement {
  const img = el('img', cls, undefined, field);
  img.src = `data:${mediaType};base64,${data}`;
  img.alt = alt;
  return img;
}

/** A part that is not shown: `[image image/svg+xml]`, with its note if it has one. */
export function partText(part: Partial<Part>): string {
  const note = part.note ? `: ${part.note}` : '';
  return `[${part.kind || 'part'} ${part.media_type || ''}${note}]`;
}

/** Pretty-print the raw argument text; keep it verbatim when it is not valid JSON. */
export function prettyArguments(raw: string): string {
  const parsed = shownArguments(raw);
  return parsed === undefined ? raw : JSON.stringify(parsed, null, 2);
}

/**
 * A call's arguments: the argument the tool declared as its headline (the item's
 * `headline`) as a block (kinds command, code) or on a line (path, url, text), the rest as
 * JSON; hidden characters (bidi controls, zero-width, tags, controls) as `⟨U+202E⟩`
 * markers, with a line that counts them first. No table of tool or argument names
 * (Python: args_html).
 */
export function renderArguments(raw: string, headline?: ToolHeadline | null): HTMLElement[] {
  const warning = argumentsWarning(raw);
  const shown = renderArgumentValues(raw, headline ?? null);
  if (warning && shown.length > 0) {
    shown.unshift(el('div', 'jp-nbtools-hidden-warning', warning, 'hidden'));
  }
  return shown;
}

function renderArgumentValues(raw: string, headline: ToolHeadline | null): HTMLElement[] {
  const parsed = shownArguments(raw);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return raw ? [appendVisible(el('pre', 'jp-nbtools-args', undefined, 'args'), prettyArguments(raw))] : [];
  }
  const out: HTMLElement[] = [];
  const rest: { [key: string]: unknown } = {};
  let hasRest = false;
  for (const [key, value] of Object.entries(parsed as { [key: string]: unknown })) {
    const isHead = headline !== null && key === headline.arg && typeof value === 'string';
    if (isHead && (headline.kind === 'command' || headline.kind === 'code')) {
      out.push(appendVisible(el('pre', 'jp-nbtools-args jp-nbtools-code', undefined, 'args'), value));
    } else if (isHead) {
      const line = el('div', 'jp-nbtools-arg-path', undefined, 'args');
      line.appendChild(el('span', 'jp-nbtools-label', key));
      line.appendChild(document.createTextNode(' '));
      line.appendChild(appendVisible(el('code', ''), value));
      out.push(line);
    } else {
      rest[key] = value;
      hasRest = true;
    }
  }
  if (hasRest) {
    out.push(appendVisible(el('pre', 'jp-nbtools-args', undefined, 'args'), JSON.stringify(rest, null, 2)));
  }
  return out;
}

/** A link when the URL is http(s), else its text (Python: _link). */
function link(url: string, title: string, field: string): HTMLElement {
  if (/^https?:\/\//.test(url)) {
    const a = el('a', 'jp-nbtools-link', title || url, field);
    a.href = url;
    a.target = '_blank';
    a.rel = 'noopener';
    return a;
  }
  return el('span', 'jp-nbtools-link', title || url, field);
}

export function renderServerTool(item: ServerToolItem): HTMLElement {
  const box = el('div', 'jp-nbtools-server-tool');
  box.dataset.nbtItem = 'server_tool';
  box.appendChild(el('b', 'jp-nbtools-tool-name', String(item.name ?? ''), 'name'));
  box.appendChild(document.createTextNode(' '));
  box.appendChild(el('span', 'jp-nbtools-label', '(run by the API)', 'label'));
  if (item.code) {
    box.appendChild(el('pre', 'jp-nbtools-code', String(item.code), 'code'));
  } else {
    box.appendChild(el('code', 'jp-nbtools-args', String(item.arguments ?? ''), 'args'));
  }
  if (item.error) {
    box.appendChild(el('div', 'jp-nbtools-error', `error: ${item.error}`, 'error'));
  }
  const results = item.results ?? [];
  if (results.length > 0) {
    const list = el('ul', 'jp-nbtools-results');
    for (const r of results) {
      const li = el('li', '');
      li.appendChild(link(String(r.url ?? ''), String(r.title ?? ''), 'link'));
      list.appendChild(li);
    }
    box.appendChild(list);
  }
  for (const key of ['stdout', 'stderr'] as const) {
    const text = item[key];
    if (text) {
      box.appendChild(el('pre', `jp-nbtools-${key}`, String(text), key));
    }
  }
  if (item.url && !item.code) {
    box.appendChild(link(String(item.url), String(item.url), 'url'));
  }
  return box;
}

export function renderCitations(item: CitationsItem): HTMLElement {
  const box = el('div', 'jp-nbtools-citations');
  box.dataset.nbtItem = 'citations';
  box.appendChild(el('span', 'jp-nbtools-label', 'Sources:', 'label'));
  box.appendChild(document.createTextNode(' '));
  (item.sources ?? []).forEach((s, i) => {
    if (i > 0) {
      box.appendChild(document.createTextNode(', '));
    }
    box.appendChild(link(String(s.url ?? ''), String(s.title || s.url || ''), 'source'));
  });
  return box;
}

/** A compaction or a notice: one muted line. */
export function renderNote(item: CompactionItem | NoticeItem): HTMLElement {
  const box = el('div', `jp-nbtools-note jp-nbtools-${item.kind}`);
  box.dataset.nbtItem = item.kind;
  box.appendChild(el('span', '', String(item.text ?? ''), 'text'));
  return box;
}

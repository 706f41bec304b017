/**
 * Renders an nb_tools transcript (docs/transcript.md, version 1; the types are generated
 * from its JSON Schema) as DOM. Pure DOM: the page's Markdown renderer and sanitizer come
 * in as `IRenderTools`, so the golden tests run this under jsdom
 * (labextension/test/golden.test.js) against the same fixtures as the Python fallback.
 *
 * Every string goes in through textContent, except the assistant's Markdown and a tool's
 * HTML value, which go through the page's sanitizer.
 */
import {
  el,
  image,
  isShownImage,
  partText,
  renderArguments,
  renderCitations,
  renderNote,
  renderServerTool
} from './items';
import { decorateCodeBlocks } from './codeblocks';
import { transcriptAsCode } from './runcode';
import { safeFragment } from './safehtml';
import { appendVisible } from './visible';
import { CONTINUABLE, CONTINUE_HINT, ENDINGS, STATUS_LABELS, TOOL_STATUSES } from './transcript.generated';
import type { Diff, Item, StopReason, ToolItem, Transcript } from './transcript.generated';

export const MIME_TYPE = 'application/vnd.nbtools.transcript+json';
const CLASS = 'jp-nbtools-Transcript';
/** Result text: a preview, then the rest (up to FULL_RESULT_CHARS) behind "show all". */
const RESULT_PREVIEW_CHARS = 1500;
const RESULT_PREVIEW_LINES = 10;
const FULL_RESULT_CHARS = 20000;
const PROGRESS_LINES = 12;
const MAX_DIFF_LINES = 400;

/** The page's machinery, from the renderer's options (absent in plain tests). */
export interface IRenderTools {
  /** Cleans a tool's HTML value (JupyterLab's sanitizer). */
  sanitizer: { sanitize(dirty: string): string };
  /** Renders Markdown into host (sanitized); null: show the text as it is. */
  markdown: ((host: HTMLElement, source: string) => Promise<void>) | null;
}

/**
 * `12 ms`, `1.5 s`, `2 min 5 s`: whole milliseconds first, then tenths of a second under a
 * minute, then whole seconds, each rounded half up in integers (the same arithmetic as
 * Python's format_duration, so both show the same text).
 */
export function formatDuration(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !isFinite(seconds) || seconds < 0) {
    return '';
  }
  const ms = Math.floor(seconds * 1000 + 0.5);
  if (ms < 1000) {
    return `${ms} ms`;
  }
  const tenths = Math.floor((ms + 50) / 100);
  if (tenths < 600) {
    return `${Math.floor(tenths / 10)}.${tenths % 10} s`;
  }
  const whole = Math.floor((ms + 500) / 1000);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/** 1234 -> "1,234" (the Python side formats numbers the same way). */
export function formatCount(n: number | undefined | null): string {
  return (n ?? 0).toLocaleString('en-US');
}

/** Python's str.splitlines for the separators a transcript holds. */
function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (lines.length > 0 && lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

function renderText(text: string, cls: string, kind: string, tools: IRenderTools | null, pending: Promise<void>[]): HTMLElement {
  const box = el('div', cls);
  box.dataset.nbtItem = kind;
  if (!tools?.markdown) {
    box.appendChild(el('div', 'jp-nbtools-text', text, 'text'));
    return box;
  }
  const host = el('div', 'jp-nbtools-markdown jp-RenderedHTMLCommon jp-RenderedMarkdown', undefined, 'text');
  box.appendChild(host);
  pending.push(
    tools.markdown(host, text).then(
      () => {
        if (kind === 'assistant') {
          decorateCodeBlocks(host); // Copy / Insert as cell (handled by ./actions)
        }
      },
      () => {
        host.replaceChildren(el('div', 'jp-nbtools-text', text));
      }
    )
  );
  return box;
}

function renderThinking(text: string, tools: IRenderTools | null, pending: Promise<void>[]): HTMLElement {
  const box = el('details', 'jp-nbtools-thinking');
  box.dataset.nbtItem = 'thinking';
  box.appendChild(el('summary', 'jp-nbtools-thinking-summary', 'Thinking'));
  const body = renderText(text, 'jp-nbtools-thinking-text', 'thinking', tools, pending);
  delete body.dataset.nbtItem;
  box.appendChild(body);
  return box;
}

function diffLineClass(line: string): string {
  if (line.startsWith('@@')) {
    return 'jp-nbtools-diff-hunk';
  }
  if (line.startsWith('+++') || line.startsWith('---')) {
    return 'jp-nbtools-diff-meta';
  }
  if (line.startsWith('+')) {
    return 'jp-nbtools-diff-add';
  }
  if (line.startsWith('-')) {
    return 'jp-nbtools-diff-del';
  }
  return 'jp-nbtools-diff-ctx';
}

function renderDiff(diff: Partial<Diff>): HTMLElement {
  const box = el('div', 'jp-nbtools-diff');
  box.appendChild(appendVisible(el('div', 'jp-nbtools-diff-path', undefined, 'diff-path'), diff.label || `${diff.kind} ${diff.path}`));
  const pre = el('pre', 'jp-nbtools-diff-body', undefined, 'diff');
  pre.dataset.nbtLines = '';
  const lines = splitLines(diff.diff ?? '');
  for (const line of lines.slice(0, MAX_DIFF_LINES)) {
    pre.appendChild(appendVisible(el('span', diffLineClass(line)), line + '\n'));
  }
  if (lines.length > MAX_DIFF_LINES) {
    pre.appendChild(el('span', 'jp-nbtools-diff-hunk', `… ${lines.length - MAX_DIFF_LINES} more lines\n`));
  }
  box.appendChild(pre);
  return box;
}

/** The result holds the streamed log (its last line): show it once, as the result
 * (Python: progress_in_result). */
function progressInResult(tail: string, result: string | null | undefined): boolean {
  const lines = tail.trim().split('\n');
  const last = lines[lines.length - 1].trim();
  return !!result && !!last && result.includes(last);
}

function section(label: string, ...body: HTMLElement[]): HTMLElement {
  const box = el('div', 'jp-nbtools-section');
  box.appendChild(el('div', 'jp-nbtools-label', label));
  body.forEach(node => box.appendChild(node));
  return box;
}

/** A result: its first lines (at most RESULT_PREVIEW_LINES and RESULT_PREVIEW_CHARS),
 * and the whole (up to 20,000 characters) behind "show all". */
function renderResult(text: string): HTMLElement[] {
  const chars = Array.from(text); // code points, as Python counts
  const preview = Array.from(text.split('\n').slice(0, RESULT_PREVIEW_LINES).join('\n'))
    .slice(0, RESULT_PREVIEW_CHARS)
    .join('');
  if (preview === text) {
    return [el('pre', 'jp-nbtools-result', text, 'result')];
  }
  const more =
    chars.length > FULL_RESULT_CHARS ? `\n… ${formatCount(chars.length - FULL_RESULT_CHARS)} more characters` : '';
  const all = el('details', 'jp-nbtools-result-all');
  all.appendChild(el('summary', 'jp-nbtools-label', `show all (${formatCount(chars.length)} characters)`, 'result-more'));
  all.appendChild(el('pre', 'jp-nbtools-result', chars.slice(0, FULL_RESULT_CHARS).join('') + more, 'result-full'));
  return [el('pre', 'jp-nbtools-result', preview + ' …', 'result'), all];
}

/** A tool's rich value (its HTML, sanitized, or an image) inside its card. */
function renderDisplay(shown: { [mime: string]: string }, tools: IRenderTools | null): HTMLElement | null {
  const html = shown['text/html'];
  if (typeof html === 'string' && tools) {
    const box = el('div', 'jp-nbtools-display jp-RenderedHTMLCommon', undefined, 'display');
    box.appendChild(safeFragment(tools.sanitizer.sanitize(html)));
    return box;
  }
  for (const mime of ['image/png', 'image/jpeg']) {
    const data = shown[mime];
    if (isShownImage(mime, data)) {
      return image(mime, data, 'jp-nbtools-image jp-nbtools-display', 'display-image', 'tool output');
    }
  }
  return null;
}

function renderTool(item: ToolItem, tools: IRenderTools | null): HTMLElement {
  const status = typeof item.status === 'string' && item.status ? item.status : 'pending';
  const known = TOOL_STATUSES.includes(status) ? status : 'pending';
  const card = el('details', `jp-nbtools-tool jp-nbtools-status-${known}`);
  card.dataset.nbtItem = 'tool';
  card.dataset.status = status;
  card.open =
    item.headline?.kind === 'command' || status !== 'ok' || (item.diffs?.length ?? 0) > 0 || !!item.display;
  const summary = el('summary', 'jp-nbtools-tool-summary');
  const name = item.name || '(unnamed tool)';
  summary.appendChild(el('span', 'jp-nbtools-tool-name', name, 'name'));
  summary.appendChild(el('span', 'jp-nbtools-badge', STATUS_LABELS[status] ?? status.replace(/_/g, ' '), 'status'));
  const duration = formatDuration(item.duration);
  if (duration) {
    summary.appendChild(el('span', 'jp-nbtools-duration', duration, 'duration'));
  }
  card.appendChild(summary);

  const args = renderArguments(item.arguments ?? '', item.headline);
  if (args.length > 0) {
    card.appendChild(section('Arguments', ...args));
  }
  const approval = item.approval;
  if (approval) {
    const verb = approval.approved ? 'Approved' : 'Denied';
    const who = ` by ${!approval.by || approval.by === 'user' ? 'you' : approval.by}`;
    const why = approval.message ? `: ${approval.message}` : '';
    card.appendChild(el('div', `jp-nbtools-approval jp-nbtools-${verb.toLowerCase()}`, verb + who + why, 'approval'));
  }
  for (const diff of item.diffs ?? []) {
    card.appendChild(renderDiff(diff));
  }
  if (item.progress) {
    // kept beside the result: a long tool's log is part of the record
    const tail = splitLines(item.progress).slice(-PROGRESS_LINES).join('\n');
    if (!progressInResult(tail, item.result)) {
      card.appendChild(section('Progress', el('pre', 'jp-nbtools-progress', tail, 'progress')));
    }
  }
  if (item.model_saw) {
    const saw = item.model_saw;
    const text = `The model saw the start and the end: ${formatCount(saw.bytes)} of ${formatCount(saw.of)} bytes (--result-limit)`;
    card.appendChild(el('div', 'jp-nbtools-model-saw', text, 'model-saw'));
  }
  if (item.result) {
    card.appendChild(section('Result', ...renderResult(item.result)));
  }
  if (item.traceback) {
    // For the tool's developer; the model got the one-line message above.
    const tb = el('details', 'jp-nbtools-traceback');
    tb.appendChild(el('summary', 'jp-nbtools-label', 'Traceback'));
    tb.appendChild(el('pre', 'jp-nbtools-traceback-body', item.traceback, 'traceback'));
    card.appendChild(tb);
  }
  if (item.display) {
    const shown = renderDisplay(item.display, tools);
    if (shown) {
      card.appendChild(shown);
    }
  }
  for (const part of item.parts ?? []) {
    if (part.kind === 'image' && isShownImage(part.media_type, part.data)) {
      card.appendChild(image(part.media_type, part.data, 'jp-nbtools-image', 'image', `${name} image`));
    } else {
      card.appendChild(el('div', 'jp-nbtools-part', partText(part), 'part'));
    }
  }
  return card;
}

/** The same line the live view's footer shows (nb_tools/transcript/_html.py). */
function renderFooter(t: Transcript): HTMLElement {
  const u = t.usage ?? {};
  const bits = [
    t.model ?? '',
    typeof t.turns === 'number' ? `${t.turns} turn${t.turns === 1 ? '' : 's'}` : '',
    `${formatCount(u.input_tokens)} in / ${formatCount(u.output_tokens)} out tokens`,
    `${formatCount(u.cache_read_input_tokens)} cached`,
    `$${(u.cost_usd ?? 0).toFixed(4)}${u.estimated ? ' (estimated)' : ''}`,
    t.stop_reason ?? ''
  ];
  return el('div', 'jp-nbtools-footer', bits.filter(Boolean).join(' · '), 'footer');
}

/** What a run's end means and what to do next ("" for an ordinary end). */
export function endingText(t: Transcript): string {
  const reason = t.stop_reason;
  const template = reason ? ENDINGS[reason] : undefined;
  if (!reason || !template) {
    return '';
  }
  const text = template.replace('{turns}', String(t.turns ?? '?'));
  return CONTINUABLE.includes(reason) ? `${text} ${CONTINUE_HINT}` : text;
}

/** The ending line, `code` spans shown as code (not backticks), and for a run that can
 * go on a Continue button (it adds a `%%agent --continue` cell below and runs it). */
function renderEnding(text: string, continuable: boolean): HTMLElement {
  const line = el('div', 'jp-nbtools-ending', undefined, 'ending');
  text.split(/(`[^`]+`)/).forEach(bit => {
    if (bit.length > 2 && bit.startsWith('`') && bit.endsWith('`')) {
      line.appendChild(el('code', 'jp-nbtools-inline-code', bit.slice(1, -1)));
    } else if (bit) {
      line.appendChild(document.createTextNode(bit));
    }
  });
  if (continuable) {
    const button = el('button', 'jp-nbtools-continue jp-mod-styled jp-mod-accept', 'Continue');
    (button as HTMLButtonElement).type = 'button';
    button.dataset.nbtAction = 'continue';
    button.title = 'Add a %%agent --continue cell below and run it';
    line.appendChild(document.createTextNode(' '));
    line.appendChild(button);
  }
  return line;
}

/** One item ("first": nothing shown before it); null for a kind this version does not know. */
function renderItem(item: Item, first: boolean, tools: IRenderTools | null, pending: Promise<void>[]): HTMLElement | null {
  switch (item.kind) {
    case 'user': {
      // The first prompt is the cell's own source, just above; a continued run's is shown.
      if (first) {
        return null;
      }
      const box = el('div', 'jp-nbtools-user');
      box.dataset.nbtItem = 'user';
      box.appendChild(el('div', 'jp-nbtools-text', item.text ?? '', 'text'));
      return box;
    }
    case 'assistant':
      return renderText(item.text ?? '', 'jp-nbtools-assistant', 'assistant', tools, pending);
    case 'thinking':
      return renderThinking(item.text ?? '', tools, pending);
    case 'tool':
      return renderTool(item, tools);
    case 'server_tool':
      return renderServerTool(item);
    case 'citations':
      return renderCitations(item);
    case 'compaction':
    case 'notice':
      return renderNote(item);
    default: {
      const unknown: never = item; // a new kind must be rendered here (compile error)
      void unknown; // at run time: a newer nb_tools's kind, skipped
      return null;
    }
  }
}

export function renderTranscript(data: unknown, tools: IRenderTools | null = null, pending: Promise<void>[] = []): HTMLElement {
  const root = el('div', CLASS);
  root.dataset.mimeType = MIME_TYPE;
  const t = (data ?? {}) as Transcript;
  if (typeof data !== 'object' || t.version !== 1) {
    root.appendChild(
      el(
        'div',
        'jp-nbtools-error',
        `nb_tools transcript version ${String(t.version)} is not supported by this extension ` +
          '(it reads version 1); upgrade nb_tools to view it.'
      )
    );
    return root;
  }
  for (const item of t.items ?? []) {
    const shown = renderItem(item, root.childElementCount === 0, tools, pending);
    if (shown) {
      root.appendChild(shown);
    }
  }
  root.appendChild(renderFooter(t));
  if ((t.items ?? []).some((i: any) => i.kind === 'tool')) {
    const copy = el('button', 'jp-nbtools-copy-code jp-mod-styled', 'Copy as code');
    (copy as HTMLButtonElement).type = 'button';
    copy.dataset.nbtAction = 'copy-code';
    copy.dataset.nbtCode = transcriptAsCode(t);
    copy.title = "Copy the run's tool calls as Python that re-does them without the model";
    root.appendChild(copy);
  }
  if (t.error) {
    root.appendChild(el('div', 'jp-nbtools-error', `Error: ${t.error}`, 'error'));
  }
  const ending = endingText(t);
  if (ending) {
    root.appendChild(renderEnding(ending, CONTINUABLE.includes(t.stop_reason as StopReason)));
  }
  return root;
}

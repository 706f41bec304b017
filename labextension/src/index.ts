/**
 * Renders nb_tools agent transcripts (docs/transcript.md, version 1).
 *
 * The assistant's text is Markdown, rendered by JupyterLab's own Markdown renderer as
 * untrusted content (JupyterLab's sanitizer removes scripts, event handlers and unsafe
 * URLs; math goes to the page's typesetter). Every other string goes in through
 * textContent.
 */
import { renderMarkdown } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

export const MIME_TYPE = 'application/vnd.nbtools.transcript+json';
const CLASS = 'jp-nbtools-Transcript';
const STATUSES = ['ok', 'error', 'denied', 'stopped', 'cut_off', 'running_in_background', 'pending'];
const STATUS_LABELS: { [status: string]: string } = {
  cut_off: 'cut off',
  running_in_background: 'still running in the background'
};
/** What a run's end means and what to do next (the Python side says the same). */
const ENDINGS: { [reason: string]: string } = {
  max_turns: 'Paused at the turn limit ({turns} turns). Run `%%agent --continue` to go on.',
  budget: "Paused: the next turn would pass this run's budget. Run `%%agent --continue` to go on.",
  stopped: 'Stopped.'
};
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;

interface IPart {
  kind?: string;
  media_type?: string;
  data?: string;
}
interface IDiff {
  path?: string;
  kind?: string;
  diff?: string;
}
interface IApproval {
  approved?: boolean;
  by?: string | null;
  message?: string | null;
}
interface IItem {
  kind?: string;
  text?: string;
  id?: string;
  name?: string;
  arguments?: string;
  status?: string;
  result?: string;
  parts?: IPart[];
  duration?: number | null;
  diffs?: IDiff[];
  progress?: string | null;
  approval?: IApproval | null;
  traceback?: string | null;
  display?: { [mime: string]: string } | null;
  model_saw?: { bytes?: number; of?: number } | null;
}
interface IUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  cost_usd?: number;
}
interface ITranscript {
  version?: number;
  model?: string;
  stop_reason?: string;
  error?: string | null;
  turns?: number;
  items?: IItem[];
  usage?: IUsage;
}

/** document.createElement with a class and optional text (always as textContent). */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

export function formatDuration(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !isFinite(seconds)) {
    return '';
  }
  if (seconds < 1) {
    return `${Math.round(seconds * 1000)} ms`;
  }
  if (seconds < 60) {
    return `${seconds.toFixed(1)} s`;
  }
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** Pretty-print the raw argument text; keep it verbatim when it is not valid JSON. */
function prettyArguments(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/** The page's Markdown machinery, from the renderer's options (absent in plain tests). */
export interface IMarkdownTools {
  sanitizer: IRenderMime.ISanitizer;
  resolver: IRenderMime.IResolver | null;
  linkHandler: IRenderMime.ILinkHandler | null;
  latexTypesetter: IRenderMime.ILatexTypesetter | null;
  markdownParser: IRenderMime.IMarkdownParser | null;
}

/**
 * The tags a model's Markdown may produce: text, lists, tables, code, links. No images,
 * media or forms: an image in a model's text would make the browser fetch a URL the
 * model chose (a way to send data out).
 */
const MODEL_TAGS = [
  'a', 'abbr', 'b', 'blockquote', 'br', 'code', 'del', 'details', 'div', 'em', 'h1', 'h2',
  'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'kbd', 'li', 'ol', 'p', 'pre', 's', 'span', 'strong',
  'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul'
];

/** JupyterLab's sanitizer, with the tags narrowed to MODEL_TAGS. */
function modelSanitizer(base: IRenderMime.ISanitizer): IRenderMime.ISanitizer {
  return {
    getAutolink: () => (base.getAutolink ? base.getAutolink() : true),
    allowNamedProperties: base.allowNamedProperties,
    sanitize: (dirty: string, options?: IRenderMime.ISanitizerOptions) =>
      base.sanitize(dirty, { ...(options ?? {}), allowedTags: MODEL_TAGS })
  };
}

/** The user's prompt: plain text, as typed. */
function renderUser(text: string): HTMLElement {
  const box = el('div', 'jp-nbtools-user');
  box.appendChild(el('div', 'jp-nbtools-text', text));
  return box;
}

/** Assistant (or thinking) text as sanitized Markdown; plain text without the tools. */
function renderMarkdownText(
  text: string,
  cls: string,
  tools: IMarkdownTools | null,
  pending: Promise<void>[]
): HTMLElement {
  const box = el('div', cls);
  if (!tools) {
    box.appendChild(el('div', 'jp-nbtools-text', text));
    return box;
  }
  const host = el('div', 'jp-nbtools-markdown jp-RenderedHTMLCommon jp-RenderedMarkdown');
  box.appendChild(host);
  pending.push(
    renderMarkdown({
      host,
      source: text,
      trusted: false,
      sanitizer: modelSanitizer(tools.sanitizer),
      resolver: tools.resolver,
      linkHandler: tools.linkHandler,
      shouldTypeset: true,
      latexTypesetter: tools.latexTypesetter,
      markdownParser: tools.markdownParser
    }).catch(() => {
      host.replaceChildren(el('div', 'jp-nbtools-text', text));
    })
  );
  return box;
}

function renderThinking(text: string, tools: IMarkdownTools | null, pending: Promise<void>[]): HTMLElement {
  const box = el('details', 'jp-nbtools-thinking');
  box.appendChild(el('summary', 'jp-nbtools-thinking-summary', 'Thinking'));
  box.appendChild(renderMarkdownText(text, 'jp-nbtools-thinking-text', tools, pending));
  return box;
}

/** 1234 -> "1,234" (the Python side formats numbers the same way). */
export function formatCount(n: number | undefined): string {
  return (n ?? 0).toLocaleString('en-US');
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

function renderDiff(diff: IDiff): HTMLElement {
  const box = el('div', 'jp-nbtools-diff');
  box.appendChild(el('div', 'jp-nbtools-diff-path', `${diff.kind ?? 'update'} ${diff.path ?? ''}`));
  const pre = el('pre', 'jp-nbtools-diff-body');
  for (const line of (diff.diff ?? '').replace(/\n$/, '').split('\n')) {
    pre.appendChild(el('span', diffLineClass(line), line + '\n'));
  }
  box.appendChild(pre);
  return box;
}

function section(label: string, body: HTMLElement): HTMLElement {
  const box = el('div', 'jp-nbtools-section');
  box.appendChild(el('div', 'jp-nbtools-label', label));
  box.appendChild(body);
  return box;
}

/** A tool's rich value (its HTML, sanitized, or an image) inside its card. */
function renderDisplay(shown: { [mime: string]: string }, tools: IMarkdownTools | null): HTMLElement | null {
  const html = shown['text/html'];
  if (typeof html === 'string' && tools) {
    const box = el('div', 'jp-nbtools-display jp-RenderedHTMLCommon');
    box.innerHTML = tools.sanitizer.sanitize(html);
    return box;
  }
  for (const mime of ['image/png', 'image/jpeg']) {
    const data = shown[mime];
    if (typeof data === 'string' && /^[A-Za-z0-9+/=\s]*$/.test(data)) {
      const img = el('img', 'jp-nbtools-image jp-nbtools-display');
      img.src = `data:${mime};base64,${data}`;
      return img;
    }
  }
  return null;
}

function renderTool(item: IItem, tools: IMarkdownTools | null = null): HTMLElement {
  const status = STATUSES.includes(item.status ?? '') ? (item.status as string) : 'pending';
  const card = el('details', `jp-nbtools-tool jp-nbtools-status-${status}`);
  card.dataset.status = status;
  card.open = status !== 'ok' || (item.diffs?.length ?? 0) > 0 || !!item.display;
  const summary = el('summary', 'jp-nbtools-tool-summary');
  summary.appendChild(el('span', 'jp-nbtools-tool-name', item.name ?? '(unnamed tool)'));
  summary.appendChild(el('span', 'jp-nbtools-badge', STATUS_LABELS[status] ?? status));
  const duration = formatDuration(item.duration);
  if (duration) {
    summary.appendChild(el('span', 'jp-nbtools-duration', duration));
  }
  card.appendChild(summary);

  const approval = item.approval;
  if (approval) {
    const verb = approval.approved ? 'Approved' : 'Denied';
    const who = ` by ${!approval.by || approval.by === 'user' ? 'you' : approval.by}`;
    const why = approval.message ? `: ${approval.message}` : '';
    card.appendChild(el('div', `jp-nbtools-approval jp-nbtools-${verb.toLowerCase()}`, verb + who + why));
  }
  if (item.arguments) {
    card.appendChild(section('Arguments', el('pre', 'jp-nbtools-args', prettyArguments(item.arguments))));
  }
  for (const diff of item.diffs ?? []) {
    card.appendChild(renderDiff(diff));
  }
  if (item.progress) {
    card.appendChild(section('Progress', el('pre', 'jp-nbtools-progress', item.progress)));
  }
  if (item.model_saw) {
    const saw = item.model_saw;
    card.appendChild(
      el(
        'div',
        'jp-nbtools-model-saw',
        `The model saw the start and the end: ${formatCount(saw.bytes)} of ${formatCount(saw.of)} bytes (--result-limit)`
      )
    );
  }
  if (item.result) {
    card.appendChild(section('Result', el('pre', 'jp-nbtools-result', item.result)));
  }
  if (item.traceback) {
    // For the tool's developer; the model got the one-line message above.
    const tb = el('details', 'jp-nbtools-traceback');
    tb.appendChild(el('summary', 'jp-nbtools-label', 'Traceback'));
    tb.appendChild(el('pre', 'jp-nbtools-traceback-body', item.traceback));
    card.appendChild(tb);
  }
  if (item.display) {
    const shown = renderDisplay(item.display, tools);
    if (shown) {
      card.appendChild(shown);
    }
  }
  for (const part of item.parts ?? []) {
    const type = part.media_type ?? '';
    if (part.kind === 'image' && IMAGE_TYPES.test(type) && /^[A-Za-z0-9+/=\s]*$/.test(part.data ?? '')) {
      const img = el('img', 'jp-nbtools-image');
      img.src = `data:${type};base64,${part.data}`;
      img.alt = `${item.name ?? 'tool'} image`;
      card.appendChild(img);
    } else {
      card.appendChild(el('div', 'jp-nbtools-part', `[${part.kind ?? 'part'} ${type}]`));
    }
  }
  return card;
}

/** The same line the live view's footer shows (nb_tools/jupyter/_display.py). */
function renderFooter(t: ITranscript): HTMLElement {
  const footer = el('div', 'jp-nbtools-footer');
  const u = t.usage ?? {};
  const bits = [
    t.model ?? '',
    t.turns !== undefined ? `${t.turns} turn${t.turns === 1 ? '' : 's'}` : '',
    `${formatCount(u.input_tokens)} in / ${formatCount(u.output_tokens)} out tokens`,
    `${formatCount(u.cache_read_input_tokens)} cached`,
    `$${(u.cost_usd ?? 0).toFixed(4)}`,
    t.stop_reason ?? ''
  ];
  footer.textContent = bits.filter(Boolean).join(' · ');
  return footer;
}

function renderEnding(t: ITranscript): HTMLElement | null {
  const template = ENDINGS[t.stop_reason ?? ''];
  if (!template) {
    return null;
  }
  return el('div', 'jp-nbtools-ending', template.replace('{turns}', String(t.turns ?? '?')));
}

export function renderTranscript(
  data: unknown,
  tools: IMarkdownTools | null = null,
  pending: Promise<void>[] = []
): HTMLElement {
  const root = el('div', CLASS);
  root.dataset.mimeType = MIME_TYPE;
  const t = (data ?? {}) as ITranscript;
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
    if (item.kind === 'user') {
      // The prompt is the cell's own source, just above; a transcript shown elsewhere
      // (a continued run) may still hold one after the start.
      if (root.childElementCount > 0) {
        root.appendChild(renderUser(item.text ?? ''));
      }
    } else if (item.kind === 'assistant') {
      root.appendChild(renderMarkdownText(item.text ?? '', 'jp-nbtools-assistant', tools, pending));
    } else if (item.kind === 'thinking') {
      root.appendChild(renderThinking(item.text ?? '', tools, pending));
    } else if (item.kind === 'tool') {
      root.appendChild(renderTool(item, tools));
    }
  }
  if (t.error) {
    root.appendChild(el('div', 'jp-nbtools-error', `Error: ${t.error}`));
  }
  root.appendChild(renderFooter(t));
  const ending = renderEnding(t);
  if (ending) {
    root.appendChild(ending);
  }
  return root;
}

/** The output widget JupyterLab creates for each transcript bundle. */
export class TranscriptRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(private _options: IRenderMime.IRendererOptions) {
    super();
    this.addClass('jp-nbtools-TranscriptWidget');
    this.node.dataset.mimeType = MIME_TYPE;
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[this._options.mimeType];
    const o = this._options;
    const tools: IMarkdownTools = {
      sanitizer: o.sanitizer,
      resolver: o.resolver,
      linkHandler: o.linkHandler,
      latexTypesetter: o.latexTypesetter,
      markdownParser: o.markdownParser ?? null
    };
    const pending: Promise<void>[] = [];
    this.node.replaceChildren(renderTranscript(data, tools, pending));
    await Promise.all(pending);
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  createRenderer: options => new TranscriptRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'nb-tools-labextension:transcript',
  rendererFactory,
  rank: 0,
  dataType: 'json'
};

export default extension;

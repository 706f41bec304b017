/**
 * The JupyterLab MIME renderer of nb_tools agent transcripts (docs/transcript.md, version
 * 1); the DOM is built in ./render (pure, tested under jsdom against the Python fallback).
 *
 * The assistant's text is Markdown, rendered by JupyterLab's own Markdown renderer as
 * untrusted content (JupyterLab's sanitizer removes scripts, event handlers and unsafe
 * URLs; math goes to the page's typesetter). Every other string goes in through
 * textContent.
 */
import { renderMarkdown } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { IRenderTools, MIME_TYPE, renderTranscript } from './render';
import { modelAttributesOnly } from './safehtml';

export { formatCount, formatDuration, MIME_TYPE, renderTranscript } from './render';
export type { IRenderTools } from './render';
export type { Transcript } from './transcript.generated';

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

/** JupyterLab's sanitizer, with the tags narrowed to MODEL_TAGS and the attributes to
 * modelAttributesOnly's (no style, class, id: nothing fetched, nothing laid over). */
function modelSanitizer(base: IRenderMime.ISanitizer): IRenderMime.ISanitizer {
  return {
    getAutolink: () => (base.getAutolink ? base.getAutolink() : true),
    allowNamedProperties: base.allowNamedProperties,
    sanitize: (dirty: string, options?: IRenderMime.ISanitizerOptions) =>
      modelAttributesOnly(base.sanitize(dirty, { ...(options ?? {}), allowedTags: MODEL_TAGS }))
  };
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
    const tools: IRenderTools = {
      sanitizer: o.sanitizer,
      markdown: (host, source) =>
        renderMarkdown({
          host,
          source,
          trusted: false,
          sanitizer: modelSanitizer(o.sanitizer),
          resolver: o.resolver,
          linkHandler: o.linkHandler,
          shouldTypeset: true,
          latexTypesetter: o.latexTypesetter,
          markdownParser: o.markdownParser ?? null
        })
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

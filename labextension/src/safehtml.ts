/**
 * A tool's own HTML (a DataFrame's table, a Styler, any _repr_html_) rebuilt from a
 * whitelist after the page's sanitizer: its tables and text, nothing that runs, fetches
 * or styles (Python: nb_tools/transcript/_safe_html.py, the same lists). JupyterLab's
 * sanitizer keeps `<img src="https://...">` and inline styles: a value holding the
 * model's text could otherwise send what the model read to a server when the transcript
 * is shown, or lay itself over the page.
 */

const KEPT = new Set(
  (
    'table thead tbody tfoot tr th td caption colgroup col div span p br hr b i u s em ' +
    'strong code pre kbd samp var ul ol li dl dt dd h1 h2 h3 h4 h5 h6 small sub sup ' +
    'blockquote abbr'
  ).split(' ')
);
/** Elements whose content is not text to show (code, CSS, another document). */
const DROPPED = new Set(
  (
    'script style template iframe frame frameset object embed applet svg math noscript ' +
    'noembed noframes title head textarea select option xmp plaintext'
  ).split(' ')
);
const ATTRS: { [name: string]: RegExp } = {
  colspan: /^[0-9]{1,3}$/,
  rowspan: /^[0-9]{1,3}$/,
  align: /^(left|right|center|justify)$/i
};

function rebuild(from: Node, into: Node): void {
  from.childNodes.forEach(child => {
    if (child.nodeType === 3) {
      into.appendChild(document.createTextNode(child.textContent ?? ''));
      return;
    }
    if (child.nodeType !== 1) {
      return; // comments, processing instructions
    }
    const source = child as Element;
    const tag = source.localName.toLowerCase();
    if (DROPPED.has(tag) || source.namespaceURI !== 'http://www.w3.org/1999/xhtml') {
      return;
    }
    if (!KEPT.has(tag)) {
      rebuild(source, into); // the tag goes, its text stays
      return;
    }
    const made = document.createElement(tag);
    for (const name of Object.keys(ATTRS)) {
      const value = source.getAttribute(name);
      if (value !== null && ATTRS[name].test(value)) {
        made.setAttribute(name, value);
      }
    }
    rebuild(source, made);
    into.appendChild(made);
  });
}

/** `html` (already through the page's sanitizer) as fresh nodes from the whitelist. */
export function safeFragment(html: string): DocumentFragment {
  const template = document.createElement('template'); // inert: nothing loads or runs
  template.innerHTML = html;
  const out = document.createDocumentFragment();
  rebuild(template.content, out);
  return out;
}

/**
 * The attributes the model's Markdown keeps, by tag, after JupyterLab's sanitizer (which
 * keeps `style`, with `background-image:url(...)`, a fetch carrying whatever the model
 * put in the URL each time the notebook is shown; and any `class`, `id` or `hidden`, which
 * can lay the page's own dialog or menu styles over a card). Classes: the code
 * highlighter's token spans and a code block's language only.
 */
const MODEL_ATTRS: { [tag: string]: string[] } = {
  a: ['href', 'title'],
  td: ['align', 'colspan', 'rowspan'],
  th: ['align', 'colspan', 'rowspan'],
  ol: ['start'],
  details: ['open'],
  code: ['class'],
  span: ['class']
};
const MODEL_CLASSES: { [tag: string]: RegExp } = {
  code: /^language-[\w+#.-]{1,40}$/,
  // cm-*: older highlighters; ͼ*: the classes of JupyterLab's own highlight style (colours)
  span: /^(cm-[A-Za-z0-9-]{1,40}|\u037c[0-9a-z]{1,6})$/
};

/** `html` (the sanitizer's output for the model's Markdown) with only MODEL_ATTRS left. */
export function modelAttributesOnly(html: string): string {
  const template = document.createElement('template'); // inert: nothing loads or runs
  template.innerHTML = html;
  for (const node of Array.from(template.content.querySelectorAll('*'))) {
    const tag = node.localName.toLowerCase();
    const allowed = MODEL_ATTRS[tag] ?? [];
    for (const name of node.getAttributeNames()) {
      if (!allowed.includes(name.toLowerCase())) {
        node.removeAttribute(name);
      } else if (name.toLowerCase() === 'class') {
        const pattern = MODEL_CLASSES[tag];
        const kept = (node.getAttribute(name) ?? '').split(/\s+/).filter(c => c && pattern?.test(c));
        if (kept.length > 0) {
          node.setAttribute('class', kept.join(' '));
        } else {
          node.removeAttribute(name);
        }
      }
    }
  }
  return template.innerHTML;
}

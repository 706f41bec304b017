/**
 * Code blocks in the assistant's answers get a small toolbar: Copy, and Insert as cell
 * (below the agent cell; the notebook plugin in ./actions applies it as an undoable edit).
 * The buttons are made here with textContent and carry only a `data-nbt-action`: a click
 * is handled by ./actions (one delegated listener), never by anything in the model's text.
 *
 * Used by the transcript renderer (after its Markdown is rendered) and, for the live view
 * (the kernel's HTML widgets), by ./actions on the elements the kernel marks
 * `pre.nbtools-code` inside an answer (the live text widget's `.nbtools-assistant`).
 */

/** The toolbar's class; a block that has one is left alone. */
export const CODE_TOOLBAR = 'jp-nbtools-code-toolbar';
export const ACTION_ATTR = 'nbtAction';

function button(label: string, action: string, title: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'jp-nbtools-code-button';
  b.textContent = label;
  b.title = title;
  b.dataset[ACTION_ATTR] = action;
  return b;
}

/** The language a block says it is in: `language-xxx` on its `<code>` (JupyterLab's
 * Markdown) or `data-language` (the kernel's HTML); "" when none. */
export function blockLanguage(pre: Element): string {
  const own = pre.getAttribute('data-language');
  if (own) {
    return own.toLowerCase();
  }
  const code = pre.querySelector('code');
  const found = /(?:^|\s)language-([\w+#.-]{1,40})/.exec(code?.getAttribute('class') ?? '');
  return found ? found[1].toLowerCase() : '';
}

/** The code of a block as the model wrote it: its text, without the toolbar's. */
export function blockCode(pre: Element): string {
  const copy = pre.cloneNode(true) as Element;
  copy.querySelectorAll(`.${CODE_TOOLBAR}`).forEach(n => n.remove());
  return (copy.textContent ?? '').replace(/\n$/, '');
}

/** Give each `<pre>` under `root` (matched by `selector`) a Copy / Insert as cell bar. */
export function decorateCodeBlocks(root: ParentNode, selector = 'pre'): number {
  let added = 0;
  root.querySelectorAll(selector).forEach(pre => {
    const wrapper = pre.parentElement;
    if (!wrapper || wrapper.classList.contains('jp-nbtools-codeblock')) {
      return;
    }
    const box = document.createElement('div');
    box.className = 'jp-nbtools-codeblock';
    wrapper.insertBefore(box, pre);
    const bar = document.createElement('div');
    bar.className = CODE_TOOLBAR;
    bar.appendChild(button('Copy', 'copy', 'Copy this code'));
    bar.appendChild(
      button('Insert as cell', 'insert', 'Insert this code as a new cell below the agent cell (undo with z)')
    );
    box.appendChild(bar);
    box.appendChild(pre);
    added += 1;
  });
  return added;
}

/** A cell's source for a block: shell code runs under `%%bash`. */
export function cellSource(code: string, language: string): string {
  if (['bash', 'sh', 'shell', 'zsh'].includes(language) && !code.startsWith('%%')) {
    return `%%bash\n${code}`;
  }
  return code;
}

/**
 * What a person does with a run from the page, beside the kernel's own widgets:
 *
 * - The buttons the extension puts in answers and transcripts (`data-nbt-action`): Copy a
 *   code block, Insert it as a cell below the agent cell (one undoable edit of the open
 *   notebook), Continue a paused run (a `%%agent --continue` cell below, run at once).
 *   One delegated listener handles them; nothing in the model's text can name an action
 *   (the sanitizers drop `data-*` and buttons from it).
 * - A waiting approval is hard to miss: while a notebook shows an approval card waiting
 *   (the kernel's `.nbtools-waiting`), its tab carries a dot, the page title a `(!)` and a
 *   notification says so, once per card; while a run is live (its view's `.nbtools-busy`
 *   footer or a waiting card is on the page) the kernel status reads busy, not the idle
 *   the kernel reports between the comm messages of a cell that is still running.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { blockCode, blockLanguage, cellSource, decorateCodeBlocks } from './codeblocks';

export const CONTINUE_SOURCE = '%%agent --continue';
const LIVE_CODE = '.jp-OutputArea-output .nbtools-assistant pre.nbtools-code';
const WAITING = '.nbtools-waiting';
const LIVE = '.nbtools-busy, .nbtools-waiting';
const WAITING_CLASS = 'jp-mod-nbtools-waiting';
const TITLE_MARK = '(!) ';

/** Cells inserted below an agent cell, by its cell id: the next one goes after them. */
const insertedBelow = new Map<string, Set<string>>();

function panelOf(tracker: INotebookTracker, node: Element): NotebookPanel | null {
  return tracker.find(p => p.node.contains(node)) ?? null;
}

/** The index of the cell holding `node` in `panel`, -1 if none. */
function cellIndexOf(panel: NotebookPanel, node: Element): number {
  const cellNode = node.closest('.jp-Cell');
  return panel.content.widgets.findIndex(w => w.node === cellNode);
}

/** Insert a code cell below the agent cell at `index` (after the cells inserted there
 * before), as one step of the shared model's undo; the new cell becomes active. */
export function insertBelow(panel: NotebookPanel, index: number, source: string): number {
  const shared = panel.context.model.sharedModel as any;
  const agentId: string = shared.cells[index].id;
  const mine = insertedBelow.get(agentId) ?? new Set<string>();
  let at = index + 1;
  while (at < shared.cells.length && mine.has(shared.cells[at].id)) {
    at += 1;
  }
  shared.transact(() => {
    shared.insertCell(at, { cell_type: 'code', source, metadata: {} });
  });
  mine.add(shared.cells[at].id);
  insertedBelow.set(agentId, mine);
  panel.content.activeCellIndex = at;
  panel.content.deselectAll();
  return at;
}

async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  document.body.appendChild(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

function flash(button: HTMLElement, text: string): void {
  const was = button.dataset.label ?? button.textContent ?? '';
  button.dataset.label = was;
  button.textContent = text;
  window.setTimeout(() => {
    button.textContent = was;
  }, 1500);
}

async function act(app: JupyterFrontEnd, tracker: INotebookTracker, button: HTMLElement): Promise<void> {
  const action = button.dataset.nbtAction;
  const pre = button.closest('.jp-nbtools-codeblock')?.querySelector('pre') ?? null;
  if (action === 'copy-code') {
    await copyText(button.dataset.nbtCode ?? '');
    flash(button, 'Copied');
    return;
  }
  if (action === 'copy' && pre) {
    await copyText(blockCode(pre));
    flash(button, 'Copied');
    return;
  }
  const panel = panelOf(tracker, button);
  const index = panel ? cellIndexOf(panel, button) : -1;
  if (!panel || index < 0) {
    flash(button, 'No notebook here');
    return;
  }
  if (action === 'insert' && pre) {
    insertBelow(panel, index, cellSource(blockCode(pre), blockLanguage(pre)));
    flash(button, 'Inserted below');
  } else if (action === 'continue') {
    insertBelow(panel, index, CONTINUE_SOURCE);
    (button as HTMLButtonElement).disabled = true;
    await app.commands.execute('notebook:run-cell');
  }
}

const notified = new WeakSet<Element>();
const busyHeld = new WeakSet<object>();
const liveNow = new WeakMap<object, boolean>();

/** Make the session's displayed status read busy while `live()` (an instance getter over
 * the prototype's: the status bar and Notebook 7's indicator read kernelDisplayStatus). */
function holdBusy(ctx: any): void {
  if (busyHeld.has(ctx)) {
    return;
  }
  const getter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(ctx), 'kernelDisplayStatus')?.get;
  if (!getter) {
    return;
  }
  busyHeld.add(ctx);
  Object.defineProperty(ctx, 'kernelDisplayStatus', {
    configurable: true,
    get() {
      const status = getter.call(ctx);
      return status === 'idle' && liveNow.get(ctx) ? 'busy' : status;
    }
  });
}

function baseTitle(): string {
  return document.title.startsWith(TITLE_MARK) ? document.title.slice(TITLE_MARK.length) : document.title;
}

/** Look at every notebook: live runs, waiting cards, code blocks of live answers. */
function scan(app: JupyterFrontEnd, tracker: INotebookTracker): void {
  let anyWaiting = false;
  tracker.forEach(panel => {
    decorateCodeBlocks(panel.node, LIVE_CODE);
    const waiting = Array.from(panel.node.querySelectorAll(WAITING));
    const live = panel.node.querySelector(LIVE) !== null;
    const ctx = panel.sessionContext as any;
    holdBusy(ctx);
    if (liveNow.get(ctx) !== live) {
      liveNow.set(ctx, live);
      ctx.statusChanged?.emit?.(ctx.kernelDisplayStatus);
    }
    if (waiting.length > 0) {
      anyWaiting = true;
      panel.title.className = `${panel.title.className.replace(WAITING_CLASS, '').trim()} ${WAITING_CLASS}`;
      for (const card of waiting) {
        if (!notified.has(card)) {
          notified.add(card);
          const name = panel.context.path.split('/').pop();
          if (app.commands.hasCommand('apputils:notify')) {
            void app.commands.execute('apputils:notify', {
              message: `A call in ${name} waits for your approval.`,
              type: 'warning',
              options: { autoClose: 8000 }
            });
          }
        }
      }
    } else if (panel.title.className.includes(WAITING_CLASS)) {
      panel.title.className = panel.title.className.replace(WAITING_CLASS, '').trim();
    }
  });
  const title = baseTitle();
  const wanted = anyWaiting ? TITLE_MARK + title : title;
  if (document.title !== wanted) {
    document.title = wanted;
  }
}

export const actionsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'nb-tools-labextension:actions',
  description: 'Copy / Insert as cell / Continue buttons, and a waiting approval marked on the tab.',
  autoStart: true,
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker | null) => {
    if (!tracker) {
      return;
    }
    document.body.addEventListener('click', event => {
      const target = event.target as Element | null;
      const button = target?.closest?.('button[data-nbt-action]') as HTMLElement | null;
      if (button) {
        event.preventDefault();
        void act(app, tracker, button).catch(err => flash(button, `Failed: ${String(err?.message ?? err)}`));
      }
    });
    let queued = false;
    const later = () => {
      if (!queued) {
        queued = true;
        window.setTimeout(() => {
          queued = false;
          scan(app, tracker);
        }, 100);
      }
    };
    new MutationObserver(later).observe(document.body, { childList: true, subtree: true });
    // the shell sets the page title when the current tab changes: mark it again
    new MutationObserver(later).observe(document.head, { childList: true, subtree: true, characterData: true });
  }
};

/**
 * "Fix with agent" under a failed cell's error: the kernel (nb_tools loaded) adds a
 * `application/vnd.nbtools.fix+json` output there; this renders it as a button that puts
 * `%%agent --fix --cell ID` in a new cell below the failed one and runs it. The agent's
 * fix is then a `notebook_edit` the person approves on its card.
 *
 * The cell id comes from the document (the cell holding this output), never from the
 * output's data: an output in a notebook someone sent could otherwise smuggle options
 * (`--approval auto`) into the cell the button runs. Nothing runs without the click.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

export const FIX_MIME = 'application/vnd.nbtools.fix+json';
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The magic the button runs for the cell with `id` (null: an id it cannot use). */
export function fixMagic(id: string | null | undefined): string | null {
  return typeof id === 'string' && SAFE_ID.test(id) ? `%%agent --fix --cell ${id}` : null;
}

class FixButton extends Widget implements IRenderMime.IRenderer {
  constructor(private _tracker: INotebookTracker) {
    super();
    this.addClass('jp-nbtools-Fix');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = (model.data[FIX_MIME] ?? {}) as { error?: unknown };
    const button = document.createElement('button');
    button.className = 'jp-nbtools-FixButton jp-mod-styled';
    button.textContent = 'Fix with agent';
    button.title =
      'Ask the agent to fix this error: a cell below runs %%agent --fix; ' +
      'you approve the change it proposes';
    const note = document.createElement('span');
    note.className = 'jp-nbtools-FixNote';
    note.textContent = typeof data.error === 'string' ? data.error : '';
    button.addEventListener('click', () => void this._fix(button));
    this.node.replaceChildren(button, note);
  }

  private async _fix(button: HTMLButtonElement): Promise<void> {
    const found = this._cell();
    if (!found) {
      return;
    }
    const { panel, index } = found;
    const notebook = panel.content;
    const magic = fixMagic(notebook.widgets[index].model.id);
    if (!magic) {
      return;
    }
    button.disabled = true;
    notebook.activeCellIndex = index;
    NotebookActions.insertBelow(notebook);
    const cell = notebook.activeCell;
    if (!cell) {
      return;
    }
    cell.model.sharedModel.setSource(magic);
    await NotebookActions.run(notebook, panel.sessionContext);
  }

  /** The notebook and index of the cell whose output this is. */
  private _cell(): { panel: NotebookPanel; index: number } | null {
    let result: { panel: NotebookPanel; index: number } | null = null;
    this._tracker.forEach(panel => {
      const index = panel.content.widgets.findIndex(c => c.node.contains(this.node));
      if (index >= 0 && !result) {
        result = { panel, index };
      }
    });
    return result;
  }
}

export const fixPlugin: JupyterFrontEndPlugin<void> = {
  id: 'nb-tools-labextension:fix',
  description: 'A "Fix with agent" button under the error of a failed cell.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [INotebookTracker],
  activate: (
    _app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    tracker: INotebookTracker | null
  ) => {
    if (!tracker) {
      return;
    }
    rendermime.addFactory(
      { safe: true, mimeTypes: [FIX_MIME], createRenderer: () => new FixButton(tracker) },
      0
    );
  }
};

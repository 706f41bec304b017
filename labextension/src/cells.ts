/**
 * What the extension does to notebooks, beside rendering transcripts:
 *
 * - `%%agent` cells are edited as Markdown (the request is prose, not Python): a code cell
 *   whose source starts with `%%agent` gets the Markdown editor mode, and keeps it when the
 *   kernel's language resets the cells' modes.
 * - A live run's view that lost its kernel (restart, shutdown, reopened notebook) is
 *   replaced by a one-line note: the live view's output carries a marker MIME type
 *   (`application/vnd.nbtools.live+json`), so no dead "running…" view, no widget repr and no
 *   "model not found" is left. A finished run's output is its transcript and is never
 *   touched.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

export const LIVE_MIME = 'application/vnd.nbtools.live+json';
const MARKDOWN_MIME = 'text/x-ipythongfm';
const AGENT_CELL = /^%%agent(\s|$)/;
export const LOST_RUN_TEXT =
  'nb_tools: this run did not finish here (its kernel stopped or restarted before the end, ' +
  'so there is no transcript). Run the cell again to start it over.';

/** Give `%%agent` cells the Markdown mode (and take it back when `%%agent` goes). */
function watchCell(cell: ICellModel): void {
  if (cell.type !== 'code') {
    return;
  }
  let codeMime = cell.mimeType;
  const apply = (): void => {
    const agent = AGENT_CELL.test(cell.sharedModel.getSource());
    if (agent && cell.mimeType !== MARKDOWN_MIME) {
      codeMime = cell.mimeType;
      cell.mimeType = MARKDOWN_MIME;
    } else if (!agent && cell.mimeType === MARKDOWN_MIME) {
      cell.mimeType = codeMime;
    }
  };
  cell.contentChanged.connect(apply);
  cell.mimeTypeChanged.connect(() => {
    if (cell.mimeType !== MARKDOWN_MIME) {
      codeMime = cell.mimeType;
    }
    apply();
  });
  apply();
}

/** Replace live-view outputs (their kernel is gone) by the note; true if any was found. */
export function clearLostRuns(panel: NotebookPanel): boolean {
  const model = panel.content.model;
  if (!model) {
    return false;
  }
  let found = false;
  for (let c = 0; c < model.cells.length; c++) {
    const cell = model.cells.get(c);
    if (cell.type !== 'code') {
      continue;
    }
    const outputs = (cell as any).outputs;
    for (let i = 0; i < outputs.length; i++) {
      const out = outputs.get(i);
      if (out.data && LIVE_MIME in out.data) {
        found = true;
        // a live view may say what stands in its place (the review list of a run's changes)
        const marker = out.data[LIVE_MIME] as { lost?: unknown } | undefined;
        const text = typeof marker?.lost === 'string' ? marker.lost : LOST_RUN_TEXT;
        outputs.set(i, {
          output_type: 'display_data',
          data: { 'text/plain': text },
          metadata: {}
        });
      }
    }
  }
  return found;
}

function watchNotebook(panel: NotebookPanel): void {
  const model = panel.content.model;
  if (model) {
    for (let i = 0; i < model.cells.length; i++) {
      watchCell(model.cells.get(i));
    }
    model.cells.changed.connect((_list, change) => {
      if (change.type === 'add') {
        change.newValues.forEach(watchCell);
      }
    });
  }
  // Opened from disk: a live view in the file is from a kernel that is gone.
  void panel.context.ready.then(() => clearLostRuns(panel));
  const session = panel.sessionContext;
  session.statusChanged.connect((_ctx, status) => {
    if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
      clearLostRuns(panel);
    }
  });
  session.kernelChanged.connect(() => clearLostRuns(panel));
}

export const cellsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'nb-tools-labextension:cells',
  description: '%%agent cells edited as Markdown; live run views whose kernel is gone cleared.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker) => {
    tracker.widgetAdded.connect((_t, panel) => watchNotebook(panel));
  }
};

/**
 * The frontend side of the `nb_tools.notebook` comm (docs/comm.md, protocol 1): the open
 * notebook's snapshot for the kernel, and the agent's cell edits applied to the shared
 * model in one transaction, so that one undo (`z` in command mode) takes back a whole
 * `%%agent` run. Nothing is saved: the user saves.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

export const COMM_TARGET = 'nb_tools.notebook';
export const PROTOCOL = 1;
const AGENT_CELL = /^\s*%%?agent\b|run_agent\(/m;
/** Undo steps of one run merge, however far apart its edits come. */
const ONE_STEP_MS = 24 * 3600 * 1000;

type JSONObject = { [key: string]: any };

interface IEdit {
  action: 'insert' | 'replace' | 'delete' | 'move';
  cell_id?: string;
  after?: string | null;
  cell?: JSONObject;
  source?: string;
  cell_type?: string | null;
  expect?: string;
  outputs?: JSONObject[];
  execution_count?: number | null;
}

function clientId(): string {
  return Math.random().toString(16).slice(2, 10) + Date.now().toString(16);
}

/** The cells as nbformat JSON (unsaved edits included), and the document's state. */
export function snapshot(panel: NotebookPanel): JSONObject {
  const shared = panel.context.model.sharedModel;
  return {
    path: panel.context.path,
    dirty: panel.context.model.dirty,
    active_cell: panel.content.activeCell?.model.id ?? null,
    cells: shared.cells.map(cell => {
      const json = cell.toJSON() as JSONObject;
      return {
        id: cell.id,
        cell_type: json.cell_type,
        source: json.source,
        execution_count: json.execution_count ?? null,
        outputs: json.outputs ?? []
      };
    })
  };
}

function indexOf(shared: any, id: string | null | undefined): number {
  if (id === null || id === undefined) {
    return -1;
  }
  const i = shared.cells.findIndex((c: any) => c.id === id);
  if (i < 0) {
    throw new Error(
      `the open notebook has no cell ${JSON.stringify(id)} (it changed since the read); ` +
        'read it again'
    );
  }
  return i;
}

function cellJSON(cell: any): JSONObject {
  return { ...(cell.toJSON() as JSONObject), id: cell.id };
}

/** Apply `edits` in one transaction of the shared model; throws before changing anything
 * when an edit no longer fits the document (a cell gone or changed since the preview). */
export function applyEdits(
  panel: NotebookPanel,
  edits: IEdit[],
  turn: string,
  state: { turn: string }
): void {
  const shared = panel.context.model.sharedModel as any;
  for (const e of edits) {
    if (e.action !== 'insert') {
      const i = indexOf(shared, e.cell_id);
      if (e.expect !== undefined && shared.cells[i].getSource() !== e.expect) {
        throw new Error(
          `cell ${e.cell_id} changed since the agent read it (the card showed the old ` +
            'source); read it again'
        );
      }
    } else if (e.after) {
      indexOf(shared, e.after);
    }
  }
  const undo = shared.undoManager;
  const saved = undo ? undo.captureTimeout : 0;
  if (undo) {
    if (state.turn !== turn) {
      undo.stopCapturing(); // a new run: a new undo step
    } else {
      undo.captureTimeout = ONE_STEP_MS; // the same run: merge into its step
    }
  }
  try {
    shared.transact(() => {
      for (const e of edits) {
        applyOne(shared, e);
      }
    });
  } finally {
    if (undo) {
      undo.captureTimeout = saved;
    }
  }
  state.turn = turn;
}

function applyOne(shared: any, e: IEdit): void {
  if (e.action === 'insert') {
    const at = e.after ? indexOf(shared, e.after) + 1 : 0;
    const cell: JSONObject = { metadata: {}, ...(e.cell ?? {}) };
    if (cell.cell_type === 'code') {
      cell.outputs = e.outputs ?? [];
      cell.execution_count = e.execution_count ?? null;
    }
    shared.insertCell(at, cell);
    return;
  }
  const i = indexOf(shared, e.cell_id);
  if (e.action === 'delete') {
    shared.deleteCell(i);
    return;
  }
  if (e.action === 'move') {
    const json = cellJSON(shared.cells[i]);
    shared.deleteCell(i);
    const at = e.after ? indexOf(shared, e.after) + 1 : 0;
    shared.insertCell(at, json);
    return;
  }
  // replace: a new cell of the same id in place, so the change is one structural step
  const old = cellJSON(shared.cells[i]);
  const type = e.cell_type ?? old.cell_type;
  const cell: JSONObject = {
    id: old.id,
    cell_type: type,
    source: e.source ?? '',
    metadata: old.metadata ?? {}
  };
  if (type === 'code') {
    cell.outputs = e.outputs ?? [];
    cell.execution_count = e.execution_count ?? null;
  }
  shared.deleteCell(i);
  shared.insertCell(i, cell);
}

/** One kernel connection's end of the comm (one per kernel, shared by a notebook's views). */
class Connection {
  readonly client = clientId();
  comm: Kernel.IComm | null = null;
  undoState = { turn: '' };

  constructor(private _panel: () => NotebookPanel | null) {}

  open(comm: Kernel.IComm): void {
    this.comm = comm;
    const panel = this._panel();
    comm.onMsg = msg => this._onMsg(msg);
    comm.onClose = () => {
      if (this.comm === comm) {
        this.comm = null;
      }
    };
    comm.send({
      type: 'hello',
      protocol: PROTOCOL,
      client: this.client,
      path: panel?.context.path ?? null,
      app: document.body.dataset.notebook ? 'notebook' : 'lab'
    });
  }

  pushSnapshot(): void {
    const panel = this._panel();
    if (this.comm && panel && !this.comm.isDisposed) {
      this.comm.send({
        type: 'snapshot',
        client: this.client,
        snapshot: snapshot(panel)
      });
    }
  }

  private _onMsg(msg: KernelMessage.ICommMsgMsg): void {
    const data = msg.content.data as JSONObject;
    if (data.type !== 'request' || data.leader !== this.client || !this.comm) {
      return; // another window is the leader: it applies the edit, once
    }
    const reply: JSONObject = { type: 'reply', id: data.id, ok: true };
    const panel = this._panel();
    try {
      if (!panel) {
        throw new Error('the notebook was closed');
      }
      if (data.op === 'snapshot') {
        reply.snapshot = snapshot(panel);
      } else if (data.op === 'edit') {
        applyEdits(panel, data.edits as IEdit[], String(data.turn ?? ''), this.undoState);
        reply.snapshot = snapshot(panel);
      } else {
        throw new Error(`unknown request ${JSON.stringify(data.op)} (protocol ${PROTOCOL})`);
      }
    } catch (err) {
      reply.ok = false;
      reply.error = err instanceof Error ? err.message : String(err);
      delete reply.snapshot;
    }
    this.comm.send(reply);
  }
}

const connections = new WeakMap<Kernel.IKernelConnection, Connection>();

function watch(panel: NotebookPanel, tracker: INotebookTracker): void {
  const register = (kernel: Kernel.IKernelConnection | null | undefined) => {
    if (!kernel || connections.has(kernel)) {
      return;
    }
    const context = panel.context;
    // any open view of this document (a closed view's twin keeps working)
    const find = () => tracker.find(p => p.context === context && !p.isDisposed) ?? null;
    const conn = new Connection(find);
    connections.set(kernel, conn);
    kernel.registerCommTarget(COMM_TARGET, comm => conn.open(comm));
  };
  register(panel.sessionContext.session?.kernel);
  panel.sessionContext.kernelChanged.connect((_, args) => register(args.newValue));
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'nb-tools-labextension:notebook',
  description: 'The open notebook for nb_tools agents: snapshots and undoable cell edits.',
  autoStart: true,
  optional: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker | null) => {
    if (!tracker) {
      return; // a page without notebooks (Notebook 7's file browser)
    }
    tracker.widgetAdded.connect((_, panel) => watch(panel, tracker));
    tracker.forEach(panel => watch(panel, tracker));
    // the snapshot reaches the kernel before an agent cell runs
    NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
      const source = cell.model.sharedModel.getSource();
      if (cell.model.type !== 'code' || !AGENT_CELL.test(source)) {
        return;
      }
      const panel = tracker.find(p => p.content === notebook);
      const kernel = panel?.sessionContext.session?.kernel;
      const conn = kernel ? connections.get(kernel) : undefined;
      conn?.pushSnapshot();
    });
  }
};

export default plugin;

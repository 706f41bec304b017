/**
 * The extension's JupyterLab plugins (the transcript renderer is the mime extension in
 * index.ts): the cell view's restart handling and the live notebook's comm.
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { cellsPlugin } from './cells';
import notebookPlugin from './notebook';

const plugins: JupyterFrontEndPlugin<any>[] = [cellsPlugin, notebookPlugin];

export default plugins;

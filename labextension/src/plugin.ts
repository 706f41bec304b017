/**
 * The extension's JupyterLab plugins (the transcript renderer is the mime extension in
 * index.ts): the cell view's restart handling and the live notebook's comm.
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { cellsPlugin } from './cells';
import { fixPlugin } from './fix';
import notebookPlugin from './notebook';

const plugins: JupyterFrontEndPlugin<any>[] = [cellsPlugin, fixPlugin, notebookPlugin];

export default plugins;

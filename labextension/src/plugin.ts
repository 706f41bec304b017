/**
 * The extension's JupyterLab plugins (the transcript renderer is the mime extension in
 * index.ts): the cell view's restart handling, the live notebook's comm, and the
 * page's actions (Copy / Insert as cell / Continue, a waiting approval marked).
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { actionsPlugin } from './actions';
import { cellsPlugin } from './cells';
import { fixPlugin } from './fix';
import notebookPlugin from './notebook';

const plugins: JupyterFrontEndPlugin<any>[] = [
  cellsPlugin,
  fixPlugin,
  notebookPlugin,
  actionsPlugin
];

export default plugins;

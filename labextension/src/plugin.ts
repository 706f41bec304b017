/**
 * The extension's JupyterLab plugins (the transcript renderer is the mime extension in
 * index.ts).
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { cellsPlugin } from './cells';

const plugins: JupyterFrontEndPlugin<any>[] = [cellsPlugin];

export default plugins;

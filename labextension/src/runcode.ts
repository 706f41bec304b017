/**
 * A run as code, from its transcript: the "Copy as code" action. The same program
 * `RunResult.to_code()` writes in the kernel (nb_tools/agent/_replay.py): each tool call
 * that ran as `call_tool('name', arg=value)`, a call of a tool whose headline is Python
 * code (the `python` tool) as that code, and calls that failed, were denied or were cut
 * off as comments. Values are written as Python literals.
 */
import type { Transcript } from './transcript.generated';
import { shownArguments } from './visible';

const NOT_REDONE: { [status: string]: string } = {
  error: 'failed',
  denied: 'denied',
  stopped: 'stopped before it ran',
  cut_off: 'cut off while it ran',
  running_in_background: 'stopped while it ran',
  pending: 'never finished'
};
const KEYWORDS = new Set(
  ('False None True and as assert async await break class continue def del elif else ' +
    'except finally for from global if import in is lambda nonlocal not or pass raise ' +
    'return try while with yield').split(' ')
);

/** A JSON value as a Python literal. */
export function pyLiteral(value: unknown): string {
  if (value === null || value === undefined) {
    return 'None';
  }
  if (value === true) {
    return 'True';
  }
  if (value === false) {
    return 'False';
  }
  if (typeof value === 'number' || typeof value === 'string') {
    return JSON.stringify(value); // JSON's escapes are Python's too
  }
  if (Array.isArray(value)) {
    return `[${value.map(pyLiteral).join(', ')}]`;
  }
  const entries = Object.entries(value as { [key: string]: unknown });
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pyLiteral(v)}`).join(', ')}}`;
}

function isName(key: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !KEYWORDS.has(key);
}

function callLine(name: string, args: string): string {
  const value = shownArguments(args || '{}');
  if (value === undefined) {
    return `call_tool(${JSON.stringify(name)})  # arguments were not JSON: ${JSON.stringify(args)}`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return `call_tool(${JSON.stringify(name)}, **${pyLiteral(value)})`;
  }
  const entries = Object.entries(value as { [key: string]: unknown });
  if (!entries.every(([k]) => isName(k))) {
    return `call_tool(${JSON.stringify(name)}, **${pyLiteral(value)})`;
  }
  const kwargs = entries.map(([k, v]) => `${k}=${pyLiteral(v)}`).join(', ');
  return `call_tool(${JSON.stringify(name)}${kwargs ? ', ' + kwargs : ''})`;
}

/** The Python of a tool item that runs code (its headline is Python code), or null. */
function codeOf(item: any): string | null {
  const headline = item.headline;
  if (!headline || headline.kind !== 'code' || headline.language !== 'python') {
    return null;
  }
  const args = shownArguments(item.arguments || '{}');
  const code = args !== null && typeof args === 'object' ? (args as any)[headline.arg] : undefined;
  return typeof code === 'string' ? code : null;
}

/** The run's tool calls as Python that re-does them without the model. */
export function transcriptAsCode(t: Transcript): string {
  const tools = (t.items ?? []).filter((i: any) => i.kind === 'tool') as any[];
  const lines = ['# The tool calls of an agent run, in order, without the model.'];
  if (tools.some(i => i.status === 'ok' && codeOf(i) === null)) {
    lines.push('from nb_tools import call_tool');
  }
  if (tools.length === 0) {
    lines.push('# (the run made no tool calls)');
  }
  tools.forEach((item, n) => {
    const name = String(item.name ?? '');
    const code = codeOf(item);
    lines.push('');
    if (item.status !== 'ok') {
      lines.push(`# ${n + 1}. ${name}: ${NOT_REDONE[item.status] ?? item.status}, not re-done`);
      const shown = code ?? callLine(name, item.arguments);
      // every line end Python honours (a bare CR too), or a denied call's code would run
      shown.split(/\r\n|\r|\n/).forEach(l => lines.push(`# ${l}`));
    } else if (code !== null) {
      lines.push(`# ${n + 1}. ${name}: code run in the kernel`);
      lines.push(code.replace(/\s+$/, ''));
    } else {
      lines.push(`# ${n + 1}. ${name}`);
      lines.push(callLine(name, item.arguments));
    }
  });
  return lines.join('\n') + '\n';
}

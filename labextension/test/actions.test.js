// The buttons the extension adds to a transcript: Copy / Insert as cell on the code blocks
// of answers, Continue on a paused run; a model's own text can make none of them.
'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { JSDOM } = require('jsdom');

const dom = new JSDOM('<!doctype html><html><body></body></html>');
global.document = dom.window.document;

const { renderTranscript } = require('../lib-test/render.js');
const { blockCode, blockLanguage, cellSource } = require('../lib-test/codeblocks.js');
const { modelAttributesOnly } = require('../lib-test/safehtml.js');

// A stand-in for JupyterLab's Markdown renderer: a fenced block becomes <pre><code>.
const TOOLS = {
  sanitizer: { sanitize: html => html },
  markdown: async (host, source) => {
    const m = /```(\w*)\n([\s\S]*?)```/.exec(source);
    host.innerHTML = m
      ? `<p>Here:</p><pre><code class="language-${m[1]}">${m[2]}</code></pre>`
      : `<p>${source}</p>`;
  }
};

function transcript(items, stop = 'end_turn') {
  return {
    version: 1, model: 'm', stop_reason: stop, error: null, turns: 3,
    usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cost_usd: 0 },
    items
  };
}

test('a code block in an answer gets Copy and Insert as cell, its code kept whole', async () => {
  const pending = [];
  const root = renderTranscript(
    transcript([{ kind: 'assistant', text: 'Here:\n```python\nx = 1\nprint(x)\n```' }]), TOOLS, pending
  );
  await Promise.all(pending);
  const block = root.querySelector('.jp-nbtools-codeblock');
  assert.ok(block, 'no toolbar was added');
  const actions = [...block.querySelectorAll('button')].map(b => [b.textContent, b.dataset.nbtAction]);
  assert.deepEqual(actions, [['Copy', 'copy'], ['Insert as cell', 'insert']]);
  const pre = block.querySelector('pre');
  assert.equal(blockCode(pre), 'x = 1\nprint(x)');
  assert.equal(blockLanguage(pre), 'python');
  assert.equal(cellSource('ls -l', 'bash'), '%%bash\nls -l');
  assert.equal(cellSource('x = 1', 'python'), 'x = 1');
});

test("the user's and the thinking text get no code buttons", async () => {
  const pending = [];
  const root = renderTranscript(
    transcript([{ kind: 'thinking', text: '```python\nx\n```' }]), TOOLS, pending
  );
  await Promise.all(pending);
  assert.equal(root.querySelectorAll('button').length, 0);
});

test('a paused run offers a Continue button and shows the command as code', () => {
  const root = renderTranscript(transcript([{ kind: 'assistant', text: 'Working.' }], 'max_turns'), null, []);
  const ending = root.querySelector('[data-nbt="ending"]');
  assert.ok(!ending.textContent.includes('`'), ending.textContent);
  assert.equal(ending.querySelector('code').textContent, '%%agent --continue');
  const button = ending.querySelector('button');
  assert.equal(button.textContent, 'Continue');
  assert.equal(button.dataset.nbtAction, 'continue');
  const done = renderTranscript(transcript([{ kind: 'assistant', text: 'Done.' }]), null, []);
  assert.equal(done.querySelectorAll('button').length, 0);
});

test("the model's Markdown cannot name an action", () => {
  const html = modelAttributesOnly(
    '<span data-nbt-action="continue" class="cm-keyword">x</span><code data-nbt-action="insert">y</code>'
  );
  assert.ok(!html.includes('data-nbt-action'), html);
});

test("JupyterLab's highlight classes stay on the model's code, other classes go", () => {
  const html = modelAttributesOnly(
    '<pre><code class="language-python"><span class="\u037c1e jp-Dialog">def</span></code></pre>'
  );
  assert.ok(html.includes('class="\u037c1e"'), html);
  assert.ok(!html.includes('jp-Dialog'), html);
});

test('a finished bash card is open, shows its command and its output once', () => {
  const out = Array.from({ length: 30 }, (_, i) => `file${i}`).join('\n') + '\n';
  const root = renderTranscript(
    transcript([
      { kind: 'tool', id: 'b', name: 'bash', headline: { arg: 'command', kind: 'command', language: 'bash' }, arguments: '{"command": "ls"}', status: 'ok', result: out, progress: out, duration: 0.09 },
      { kind: 'tool', id: 'j', name: 'job', arguments: '{}', status: 'ok', result: 'done', progress: 'half way\n', duration: 1 }
    ]),
    null,
    []
  );
  const [bash, job] = root.querySelectorAll('details.jp-nbtools-tool');
  assert.ok(bash.open, 'the bash card is collapsed');
  assert.equal(bash.querySelector('[data-nbt="args"]').textContent, 'ls');
  assert.equal(bash.querySelectorAll('[data-nbt="progress"]').length, 0, 'the output shows twice');
  const first = bash.querySelector('[data-nbt="result"]').textContent;
  assert.ok(first.startsWith('file0\nfile1\n') && first.includes('file9') && !first.includes('file10'), first);
  assert.ok(bash.querySelector('[data-nbt="result-full"]').textContent.includes('file29'));
  // a progress log that is not the result stays beside it
  assert.equal(job.querySelector('[data-nbt="progress"]').textContent, 'half way');
});

test('Copy as code: the calls that ran as code, the rest as comments', () => {
  const root = renderTranscript(
    transcript([
      { kind: 'tool', id: 'a', name: 'write_file', arguments: '{"file_path": "a.txt", "content": "x \\"q\\"\\n", "n": null, "ok": true}', status: 'ok' },
      { kind: 'tool', id: 'b', name: 'python', headline: { arg: 'code', kind: 'code', language: 'python' }, arguments: '{"code": "total = 1 + 1\\nprint(total)"}', status: 'ok' },
      { kind: 'tool', id: 'c', name: 'bash', headline: { arg: 'command', kind: 'command', language: 'bash' }, arguments: '{"command": "rm -rf build"}', status: 'denied' },
      { kind: 'tool', id: 'd', name: 'weird', arguments: '{"class": 1}', status: 'ok' }
    ]),
    null,
    []
  );
  const button = root.querySelector('button[data-nbt-action="copy-code"]');
  assert.ok(button, 'no Copy as code');
  assert.equal(
    button.dataset.nbtCode,
    [
      '# The tool calls of an agent run, in order, without the model.',
      'from nb_tools import call_tool',
      '',
      '# 1. write_file',
      'call_tool("write_file", file_path="a.txt", content="x \\"q\\"\\n", n=None, ok=True)',
      '',
      '# 2. python: code run in the kernel',
      'total = 1 + 1',
      'print(total)',
      '',
      '# 3. bash: denied, not re-done',
      '# call_tool("bash", command="rm -rf build")',
      '',
      '# 4. weird',
      'call_tool("weird", **{"class": 1})',
      ''
    ].join('\n')
  );
  // a bare CR ends a line for Python: a denied call's code must stay commented out
  const crafted = renderTranscript(
    transcript([
      { kind: 'tool', id: 'e', name: 'python', headline: { arg: 'code', kind: 'code', language: 'python' }, arguments: '{"code": "x = 1\\rimport os; os.remove(\\"f\\")"}', status: 'denied' }
    ]),
    null,
    []
  ).querySelector('button[data-nbt-action="copy-code"]').dataset.nbtCode;
  for (const line of crafted.split(/\r\n|\r|\n/)) {
    assert.ok(line === '' || line.startsWith('#'), JSON.stringify(line));
  }
  const none = renderTranscript(transcript([{ kind: 'assistant', text: 'hi' }]), null, []);
  assert.equal(none.querySelector('button[data-nbt-action="copy-code"]'), null);
});

